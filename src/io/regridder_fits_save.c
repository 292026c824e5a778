/*
 * src/io/regridder_fits_save.c: saving a regridder (its CSR operator) to a
 * FITS file; src/io/regridder_fits_load.c loads it back.
 *
 * The layout (docs/formats.md, "Regridder (operator) files"): an empty
 * primary HDU whose keywords give the kind of file, the format version, the
 * matrix's size and value type, the plan, both sides' shapes with their
 * batch axes, and the roles of the axes (for the conservative transpose
 * of a loaded regridder); a binary table ROW_PTR (rows + 1 row pointers); and a binary
 * table ENTRIES with one row per stored entry (COLUMN, VALUE), in the
 * matrix's order. Columns and values keep their types in memory: COLUMN is
 * J (int32) below 2^31 columns and K (int64) from there on, VALUE is D
 * (float64) or E (float32), so a load gives back the same arrays bit for
 * bit and the same products.
 *
 * The axis maps are rebuilt from the shapes and the batch flags with the
 * rule regridder.c uses (batch axes number the vectors, the other axes the
 * matrix index, each in C order), and the plan is made anew from the
 * loaded matrix by spart_plan_product: a file whose plan disagrees is
 * refused, since another plan would sum in another order.
 *
 * Tables move in chunks of rows, straight between the file and the arrays;
 * a save writes beside the final name and renames (fits_util.c).
 */
#include <stdio.h>
#include <string.h>

#include "io/fits_util.h"
#include "io/regridder_fits.h"
#include "operator/regridder_internal.h"

static const char *value_type_name(spart_value_type type)
{
    return type == SPART_FLOAT32 ? "float32" : "float64";
}

/* ---- saving ---------------------------------------------------------------------------- */

static void header_from_regridder(const spart_regridder *regridder, regridder_header *header)
{
    memset(header, 0, sizeof *header);
    header->num_rows = regridder->csr.num_rows;
    header->num_columns = regridder->csr.num_columns;
    header->num_entries = regridder->csr.num_entries;
    header->value_type = regridder->csr.values32 != NULL ? SPART_FLOAT32 : SPART_FLOAT64;
    header->plan = regridder->plan;
    header->input = regridder->input;
    header->output = regridder->output;
    header->has_roles = regridder->has_roles;
    header->roles = regridder->roles;
}

/* A side's shape keywords and <prefix>BATk: whether axis k is a batch
 * axis (FITS logical T or F). */
static void write_axis_map_keys(fitsfile *file, const char *prefix, const char *what,
                                const spart_axis_map *map, int *fits_status)
{
    spart_fits_write_shape_keys(file, prefix, what, &map->shape, fits_status);
    for (int k = 0; k < map->shape.ndim; k++) {
        char key[FLEN_KEYWORD];
        char comment[FLEN_COMMENT];
        int is_batch = map->is_batch[k] != 0;
        spart_fits_make_key(key, prefix, "BAT", k);
        snprintf(comment, sizeof comment, "T: %s axis %d is a batch axis", what, k);
        fits_write_key(file, TLOGICAL, key, &is_batch, comment, fits_status);
    }
}

/* The roles of the axes, which the conservative transpose needs: ROLES T,
 * each side's resampled axes, and WEXTk, the weights' extent along the
 * k-th orthogonal axis (the axes that are not resampled, in order). A
 * regridder not made from weights (a transpose, or one loaded from a file
 * without them) writes ROLES F. */
static void write_roles_keys(fitsfile *file, const regridder_header *header, int *fits_status)
{
    int has_roles = header->has_roles != 0;
    fits_write_key(file, TLOGICAL, "ROLES", &has_roles,
                   "T: the keywords of the weights' roles follow", fits_status);
    if (!has_roles) {
        return;
    }
    const spart_regridder_roles *roles = &header->roles;
    spart_fits_write_axes_keys(file, "IN", "input", roles->num_resampled_input, roles->axes_input,
                               fits_status);
    spart_fits_write_axes_keys(file, "OUT", "output", roles->num_resampled_output,
                               roles->axes_output, fits_status);
    for (int k = 0; k < roles->num_orthogonal; k++) {
        char key[FLEN_KEYWORD];
        char comment[FLEN_COMMENT];
        long long extent = roles->weights_extent[k];
        spart_fits_make_key(key, "", "WEXT", k);
        snprintf(comment, sizeof comment, "weights' elements along orthogonal axis %d", k);
        fits_write_key(file, TLONGLONG, key, &extent, comment, fits_status);
    }
}

static void write_primary_header(fitsfile *file, const regridder_header *header, int *fits_status)
{
    long long num_rows = header->num_rows;
    long long num_columns = header->num_columns;
    long long num_entries = header->num_entries;
    long long num_batch = header->input.num_batch;
    long long chunk_length = header->plan.chunk_length;
    int group_size = header->plan.group_size;
    spart_fits_write_identity(file, REGRIDDER_KIND, REGRIDDER_FORMAT_VERSION, fits_status);
    fits_write_key(file, TLONGLONG, "NROWS", &num_rows, "matrix rows (ROW_PTR has NROWS+1)",
                   fits_status);
    fits_write_key(file, TLONGLONG, "NCOLS", &num_columns, "matrix columns", fits_status);
    fits_write_key(file, TLONGLONG, "NENTRIES", &num_entries, "stored entries (rows of ENTRIES)",
                   fits_status);
    fits_write_key(file, TSTRING, "VALTYPE", (char *)value_type_name(header->value_type),
                   "type of VALUE: float64 (D) or float32 (E)", fits_status);
    fits_write_key(file, TINT, "GROUPSZ", &group_size, "lanes per row of the product's plan",
                   fits_status);
    fits_write_key(file, TLONGLONG, "CHUNKLEN", &chunk_length,
                   "entries per chunk of a row in the plan", fits_status);
    if (header->plan.row_rule == SPART_PLAN_BY_ROW) {
        /* Absent: the first rule (one g from the mean row), which files
         * written before this keyword existed have. */
        int rule = SPART_PLAN_BY_ROW;
        fits_write_key(file, TINT, "PLANRULE", &rule, "1: each row its own g (csr_matrix.h)",
                       fits_status);
    }
    fits_write_key(file, TLONGLONG, "NBATCH", &num_batch,
                   "vectors per product: product of batch axes", fits_status);
    write_axis_map_keys(file, "IN", "input", &header->input, fits_status);
    write_axis_map_keys(file, "OUT", "output", &header->output, fits_status);
    write_roles_keys(file, header, fits_status);
    /* One card per line, each under the 72 characters a COMMENT card holds. */
    static const char *const explanation[] = {
        "A regridder (sparse operator) written by spart (docs/formats.md).",
        "CSR matrix: row r holds rows ROW_PTR[r] to ROW_PTR[r+1]-1 of table",
        "ENTRIES (rows counted from 0), each a COLUMN index (from 0) and a",
        "VALUE. Axes of the input (output) shape flagged INBATk (OUTBATk)",
        "number the vectors of a batch; the others, in C order, number the",
        "matrix columns (rows). Axis numbers count from 0, as NumPy's.",
    };
    for (size_t k = 0; k < sizeof explanation / sizeof explanation[0]; k++) {
        fits_write_comment(file, explanation[k], fits_status);
    }
}

static void write_row_ptr_table(fitsfile *file, const spart_csr *csr, int *fits_status)
{
    char *names[] = {"ROW_PTR"};
    char *formats[] = {"K"};
    char *comments[] = {"first row of ENTRIES of matrix row r (0-based)"};
    int64_t total = csr->num_rows + 1;
    spart_fits_create_table(file, "ROW_PTR", total, 1, names, formats, comments, fits_status);
    int64_t chunk = spart_fits_chunk_rows(file, fits_status);
    for (int64_t first = 0; first < total && *fits_status == 0; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        fits_write_col(file, TLONGLONG, 1, (LONGLONG)first + 1, 1, (LONGLONG)n,
                       csr->row_ptr + first, fits_status);
    }
}

static void write_entries_table(fitsfile *file, const spart_csr *csr, int *fits_status)
{
    char *names[] = {"COLUMN", "VALUE"};
    /* int32 columns in the file whenever the matrix is narrow enough, as
     * loading expects: int64 columns in memory (a CSR matrix wrapping a
     * caller's int64 columns) are narrowed by CFITSIO as they are written. */
    int narrow = csr->columns32 != NULL || csr->num_columns < INT32_COLUMN_LIMIT;
    char *formats[] = {narrow ? "J" : "K", csr->values32 != NULL ? "E" : "D"};
    char *comments[] = {"matrix column of the entry (0-based)", "value of the entry"};
    int64_t total = csr->num_entries;
    spart_fits_create_table(file, "ENTRIES", total, 2, names, formats, comments, fits_status);
    int64_t chunk = spart_fits_chunk_rows(file, fits_status);
    for (int64_t first = 0; first < total && *fits_status == 0; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        if (csr->columns32 != NULL) {
            fits_write_col(file, TINT, 1, row, 1, (LONGLONG)n, csr->columns32 + first, fits_status);
        } else {
            fits_write_col(file, TLONGLONG, 1, row, 1, (LONGLONG)n, csr->columns64 + first,
                           fits_status);
        }
        if (csr->values32 != NULL) {
            fits_write_col(file, TFLOAT, 2, row, 1, (LONGLONG)n, csr->values32 + first,
                           fits_status);
        } else {
            fits_write_col(file, TDOUBLE, 2, row, 1, (LONGLONG)n, csr->values64 + first,
                           fits_status);
        }
    }
}

/* Write every HDU of `object` (the regridder) into the open, empty file. */
static spart_status write_regridder_file(const spart_fits_io *io, const void *object)
{
    const spart_regridder *regridder = object;
    regridder_header header;
    header_from_regridder(regridder, &header);
    int fits_status = 0;
    write_primary_header(io->file, &header, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing the primary header", fits_status);
    }
    write_row_ptr_table(io->file, &regridder->csr, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing table ROW_PTR", fits_status);
    }
    write_entries_table(io->file, &regridder->csr, &fits_status);
    if (fits_status != 0) {
        return spart_fits_fail_writing(io, "writing table ENTRIES", fits_status);
    }
    return SPART_OK;
}

spart_status spart_regridder_save(spart_context *context, const spart_regridder *regridder,
                                  const char *path, int overwrite)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "regridder is NULL");
    }
    if (path == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "path is NULL");
    }
    if (path[0] == '\0') {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT, "path is empty");
    }
    spart_status where = spart_require_host(context, regridder, "saving");
    if (where != SPART_OK) {
        return where;
    }
    spart_fits_io io = {context, REGRIDDER_NOUN, path, NULL};
    return spart_fits_save(&io, overwrite, write_regridder_file, regridder);
}
