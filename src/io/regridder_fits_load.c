/*
 * src/io/regridder_fits_load.c: loading a regridder (its CSR operator) from
 * a FITS file written by src/io/regridder_fits_save.c.
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
#include "operator/operator_ops.h"

/* ---- loading: the primary header ---------------------------------------------------------- */

/* An integer keyword that must not be negative. */
static spart_status read_count_key(const spart_fits_io *io, const char *key, int64_t *value)
{
    spart_status status = spart_fits_read_integer_key(io, key, value);
    if (status == SPART_OK && *value < 0) {
        return spart_fits_format_error(io, "%s = %lld is negative", key, (long long)*value);
    }
    return status;
}

static spart_status read_value_type(const spart_fits_io *io, spart_value_type *type)
{
    char text[FLEN_VALUE];
    int fits_status = 0;
    fits_read_key(io->file, TSTRING, "VALTYPE", text, NULL, &fits_status);
    if (fits_status != 0) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "the string keyword VALTYPE is missing");
    }
    if (strcmp(text, "float64") == 0) {
        *type = SPART_FLOAT64;
    } else if (strcmp(text, "float32") == 0) {
        *type = SPART_FLOAT32;
    } else {
        return spart_fits_format_error(io, "VALTYPE = '%s', expected 'float64' or 'float32'", text);
    }
    return SPART_OK;
}

/* GROUPSZ must be a power of two from 1 to 32 (whether it is the one the
 * matrix calls for is checked once the matrix is read). */
static spart_status read_plan(const spart_fits_io *io, spart_product_plan *plan)
{
    int64_t group_size = 0;
    spart_status status = spart_fits_read_integer_key(io, "GROUPSZ", &group_size);
    if (status == SPART_OK) {
        status = spart_fits_read_integer_key(io, "CHUNKLEN", &plan->chunk_length);
    }
    if (status != SPART_OK) {
        return status;
    }
    if (group_size < 1 || group_size > 32 || (group_size & (group_size - 1)) != 0) {
        return spart_fits_format_error(io, "GROUPSZ = %lld is not a power of two from 1 to 32",
                                       (long long)group_size);
    }
    plan->group_size = (int)group_size;
    /* PLANRULE (optional): absent in files of the first rule, one g from
     * the mean row; 1 for each row its own g. */
    int rule = SPART_PLAN_MEAN;
    int fits_status = 0;
    fits_read_key(io->file, TINT, "PLANRULE", &rule, NULL, &fits_status);
    if (fits_status == KEY_NO_EXIST) {
        fits_clear_errmsg();
        rule = SPART_PLAN_MEAN;
    } else if (fits_status != 0 || (rule != SPART_PLAN_MEAN && rule != SPART_PLAN_BY_ROW)) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "PLANRULE is not 0 (g from the mean row) or 1 (g by "
                                           "row)");
    }
    plan->row_rule = rule;
    return SPART_OK;
}

/* Logical keyword `key`, which must be there. */
static spart_status read_logical_key(const spart_fits_io *io, const char *key, int *value)
{
    int flag = 0;
    int fits_status = 0;
    fits_read_key(io->file, TLOGICAL, key, &flag, NULL, &fits_status);
    if (fits_status == KEY_NO_EXIST) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "keyword %s is missing from the primary header", key);
    }
    if (fits_status != 0) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "keyword %s is not a logical T or F", key);
    }
    *value = flag != 0;
    return SPART_OK;
}

/* One side's shape and batch flags into an axis map, with the strides of
 * make_axis_map in regridder.c: walking the axes from the last, a batch
 * axis takes the next batch stride and any other axis the next matrix
 * stride. A batch axis has more than one value (an axis of one value is
 * never a batch axis there). *matrix_size: the product of the matrix axes. */
static spart_status read_axis_map(const spart_fits_io *io, const char *prefix, spart_axis_map *map,
                                  int64_t *matrix_size)
{
    memset(map, 0, sizeof *map);
    spart_status status = spart_fits_read_shape_keys(io, prefix, &map->shape);
    for (int k = 0; k < map->shape.ndim && status == SPART_OK; k++) {
        char key[FLEN_KEYWORD];
        spart_fits_make_key(key, prefix, "BAT", k);
        status = read_logical_key(io, key, &map->is_batch[k]);
        if (status == SPART_OK && map->is_batch[k] && map->shape.dims[k] < 2) {
            return spart_fits_format_error(io,
                                           "%s = T, but axis %d of length %lld cannot be a "
                                           "batch axis (it needs 2 values or more)",
                                           key, k, (long long)map->shape.dims[k]);
        }
    }
    if (status != SPART_OK) {
        return status;
    }
    /* A zero extent lets the shape's size fit int64 while the product of
     * the other extents does not: check every step. */
    int64_t matrix_stride = 1, batch_stride = 1;
    for (int axis = map->shape.ndim - 1; axis >= 0; axis--) {
        int64_t extent = map->shape.dims[axis];
        int64_t *stride = map->is_batch[axis] ? &batch_stride : &matrix_stride;
        if (extent != 0 && *stride > INT64_MAX / extent) {
            return spart_fits_format_error(io,
                                           "the shape given by %sDIMk has more matrix or batch "
                                           "cells than int64 can count",
                                           prefix);
        }
        if (map->is_batch[axis]) {
            map->batch_stride[axis] = batch_stride;
        } else {
            map->matrix_stride[axis] = matrix_stride;
        }
        *stride *= extent;
    }
    map->num_batch = batch_stride;
    *matrix_size = matrix_stride;
    return SPART_OK;
}

/* The extents of a side's batch axes, in order; returns how many. */
static int batch_extents(const spart_axis_map *map, int64_t *extents)
{
    int count = 0;
    for (int k = 0; k < map->shape.ndim; k++) {
        if (map->is_batch[k]) {
            extents[count++] = map->shape.dims[k];
        }
    }
    return count;
}

/* Both sides' axis maps, checked against the matrix's size: the input's
 * matrix axes give NCOLS, the output's NROWS, and both sides have the same
 * batch axes (the same extents in the same order: vector t of x gives
 * vector t of y), NBATCH vectors. */
static spart_status read_axis_maps(const spart_fits_io *io, regridder_header *header)
{
    int64_t columns = 0, rows = 0;
    spart_status status = read_axis_map(io, "IN", &header->input, &columns);
    if (status == SPART_OK) {
        status = read_axis_map(io, "OUT", &header->output, &rows);
    }
    if (status == SPART_OK) {
        status = spart_fits_check_count(io, "NCOLS", columns,
                                        "the input shape's axes other than batch axes");
    }
    if (status == SPART_OK) {
        status = spart_fits_check_count(io, "NROWS", rows,
                                        "the output shape's axes other than batch axes");
    }
    if (status != SPART_OK) {
        return status;
    }
    int64_t extents_input[SPART_MAX_NDIM], extents_output[SPART_MAX_NDIM];
    int count_input = batch_extents(&header->input, extents_input);
    int count_output = batch_extents(&header->output, extents_output);
    int same = count_input == count_output;
    for (int k = 0; same && k < count_input; k++) {
        same = extents_input[k] == extents_output[k];
    }
    if (!same) {
        return spart_fits_format_error(io, "the batch axes of the input (INBATk) and of the output "
                                           "(OUTBATk) differ in number or length");
    }
    return spart_fits_check_count(io, "NBATCH", header->input.num_batch,
                                  "the product of the batch axes");
}

/* A side's resampled axes (<prefix>NAX, <prefix>AXk, as in weights
 * files), none a batch axis; the other axes, in order, are its orthogonal
 * axes. */
static spart_status read_resampled_axes(const spart_fits_io *io, const char *prefix,
                                        const spart_axis_map *map, int *axes, int *count,
                                        int *orthogonal, int *num_orthogonal)
{
    spart_status status = spart_fits_read_axes_keys(io, prefix, &map->shape, count, axes);
    if (status != SPART_OK) {
        return status;
    }
    for (int a = 0; a < *count; a++) {
        if (map->is_batch[axes[a]]) {
            return spart_fits_format_error(io, "%sAX%d = %d names a batch axis", prefix, a,
                                           axes[a]);
        }
    }
    *num_orthogonal = spart_list_orthogonal_axes(&map->shape, axes, *count, orthogonal);
    return SPART_OK;
}

/* Orthogonal axis k must have a role (the rule of make_layout in
 * regridder.c) and the batch flags that role gives its two axes. */
static spart_status check_orthogonal_role(const spart_fits_io *io, const regridder_header *header,
                                          int k)
{
    const spart_regridder_roles *roles = &header->roles;
    int axis_in = roles->orthogonal_input[k];
    int axis_out = roles->orthogonal_output[k];
    int64_t nw = roles->weights_extent[k];
    int64_t ni = header->input.shape.dims[axis_in];
    int64_t no = header->output.shape.dims[axis_out];
    int fits = nw == 1 ? ni == no : (ni == 1 || ni == nw) && (no == 1 || no == nw);
    if (!fits || nw < 1) {
        return spart_fits_format_error(io,
                                       "WEXT%d = %lld with input extent %lld and output extent "
                                       "%lld fits no role (N N N, N 1 N, N N 1, N 1 1 or 1 M M)",
                                       k, (long long)nw, (long long)ni, (long long)no);
    }
    int batch_in = nw == 1 && ni > 1;
    int batch_out = nw == 1 && no > 1;
    if ((header->input.is_batch[axis_in] != 0) != batch_in ||
        (header->output.is_batch[axis_out] != 0) != batch_out) {
        return spart_fits_format_error(io,
                                       "WEXT%d = %lld disagrees with the batch flags INBAT%d and "
                                       "OUTBAT%d",
                                       k, (long long)nw, axis_in, axis_out);
    }
    return SPART_OK;
}

/* The roles of the axes, when the file has them (ROLES T); files written
 * before these keywords existed, or of regridders not made from weights,
 * load without them. */
static spart_status read_roles(const spart_fits_io *io, regridder_header *header)
{
    int has_roles = 0;
    int fits_status = 0;
    fits_read_key(io->file, TLOGICAL, "ROLES", &has_roles, NULL, &fits_status);
    if (fits_status == KEY_NO_EXIST) {
        fits_clear_errmsg();
        return SPART_OK;
    }
    if (fits_status != 0) {
        fits_clear_errmsg();
        return spart_fits_format_error(io, "keyword ROLES is not a logical T or F");
    }
    if (!has_roles) {
        return SPART_OK;
    }
    spart_regridder_roles *roles = &header->roles;
    memset(roles, 0, sizeof *roles);
    roles->shape_input = header->input.shape;
    roles->shape_output = header->output.shape;
    int orthogonal_output = 0;
    spart_status status = read_resampled_axes(io, "IN", &header->input, roles->axes_input,
                                              &roles->num_resampled_input, roles->orthogonal_input,
                                              &roles->num_orthogonal);
    if (status == SPART_OK) {
        status = read_resampled_axes(io, "OUT", &header->output, roles->axes_output,
                                     &roles->num_resampled_output, roles->orthogonal_output,
                                     &orthogonal_output);
    }
    if (status == SPART_OK && orthogonal_output != roles->num_orthogonal) {
        return spart_fits_format_error(io,
                                       "the input has %d orthogonal axes and the output %d: "
                                       "they must have the same number",
                                       roles->num_orthogonal, orthogonal_output);
    }
    for (int k = 0; k < roles->num_orthogonal && status == SPART_OK; k++) {
        char key[FLEN_KEYWORD];
        spart_fits_make_key(key, "", "WEXT", k);
        status = spart_fits_read_integer_key(io, key, &roles->weights_extent[k]);
        if (status == SPART_OK) {
            status = check_orthogonal_role(io, header, k);
        }
    }
    header->has_roles = status == SPART_OK;
    return status;
}

/* Everything the primary header says, checked for consistency. */
static spart_status read_primary_header(const spart_fits_io *io, regridder_header *header)
{
    memset(header, 0, sizeof *header);
    spart_status status = spart_fits_check_identity(io, REGRIDDER_KIND, REGRIDDER_FORMAT_VERSION);
    if (status == SPART_OK) {
        status = read_count_key(io, "NROWS", &header->num_rows);
    }
    if (status == SPART_OK) {
        status = read_count_key(io, "NCOLS", &header->num_columns);
    }
    if (status == SPART_OK) {
        status = read_count_key(io, "NENTRIES", &header->num_entries);
    }
    if (status == SPART_OK) {
        status = read_value_type(io, &header->value_type);
    }
    if (status == SPART_OK) {
        status = read_plan(io, &header->plan);
    }
    if (status == SPART_OK) {
        status = read_axis_maps(io, header);
    }
    if (status == SPART_OK) {
        status = read_roles(io, header);
    }
    if (status == SPART_OK && header->num_rows == INT64_MAX) {
        return spart_fits_format_error(io, "NROWS = %lld leaves no room for NROWS + 1 pointers",
                                       (long long)header->num_rows);
    }
    return status;
}

/* ---- loading: the tables -------------------------------------------------------------------- */

/* Make ROW_PTR the current table, with NROWS + 1 rows of K. */
static spart_status open_row_ptr_table(const spart_fits_io *io, const regridder_header *header,
                                       int *numbers)
{
    char *columns[] = {"ROW_PTR"};
    const int types[] = {TLONGLONG};
    return spart_fits_open_table(io, "ROW_PTR", header->num_rows + 1, 1, columns, types, numbers);
}

/* Make ENTRIES the current table, with NENTRIES rows, COLUMN of J below
 * 2^31 columns and K from there on, VALUE of the type VALTYPE names. */
static spart_status open_entries_table(const spart_fits_io *io, const regridder_header *header,
                                       int *numbers)
{
    char *columns[] = {"COLUMN", "VALUE"};
    const int types[] = {header->num_columns < INT32_COLUMN_LIMIT ? TLONG : TLONGLONG,
                         header->value_type == SPART_FLOAT32 ? TFLOAT : TDOUBLE};
    return spart_fits_open_table(io, "ENTRIES", header->num_entries, 2, columns, types, numbers);
}

/* Row pointer r (`pointer`) after the one before it (`previous`). */
static spart_status check_row_pointer(const spart_fits_io *io, const regridder_header *header,
                                      int64_t r, int64_t pointer, int64_t previous)
{
    if (r == 0 && pointer != 0) {
        return spart_fits_format_error(io, "ROW_PTR[0] = %lld, but row pointers start at 0",
                                       (long long)pointer);
    }
    if (pointer < previous) {
        return spart_fits_format_error(io,
                                       "ROW_PTR[%lld] = %lld is less than ROW_PTR[%lld] = %lld: "
                                       "row pointers never decrease",
                                       (long long)r, (long long)pointer, (long long)(r - 1),
                                       (long long)previous);
    }
    if (pointer > header->num_entries) {
        return spart_fits_format_error(io, "ROW_PTR[%lld] = %lld is past NENTRIES = %lld",
                                       (long long)r, (long long)pointer,
                                       (long long)header->num_entries);
    }
    return SPART_OK;
}

/* Read ROW_PTR into csr->row_ptr, checking that it starts at 0, never
 * decreases and ends at NENTRIES. */
static spart_status read_row_ptr(const spart_fits_io *io, const regridder_header *header,
                                 spart_csr *csr)
{
    int numbers[1];
    spart_status status = open_row_ptr_table(io, header, numbers);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    int64_t total = header->num_rows + 1;
    int64_t chunk = spart_fits_chunk_rows(io->file, &fits_status);
    int64_t previous = 0;
    for (int64_t first = 0; first < total; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        fits_read_col(io->file, TLONGLONG, numbers[0], (LONGLONG)first + 1, 1, (LONGLONG)n, NULL,
                      csr->row_ptr + first, NULL, &fits_status);
        if (fits_status != 0) {
            return spart_fits_fail_reading(io, "reading table ROW_PTR", fits_status);
        }
        for (int64_t r = first; r < first + n; r++) {
            status = check_row_pointer(io, header, r, csr->row_ptr[r], previous);
            if (status != SPART_OK) {
                return status;
            }
            previous = csr->row_ptr[r];
        }
    }
    if (previous != header->num_entries) {
        return spart_fits_format_error(io,
                                       "the last row pointer ROW_PTR[%lld] = %lld, but it must "
                                       "be NENTRIES = %lld",
                                       (long long)header->num_rows, (long long)previous,
                                       (long long)header->num_entries);
    }
    return SPART_OK;
}

/* The matrix row holding entry k: the last r with row_ptr[r] <= k. */
static int64_t row_of_entry(const spart_csr *csr, int64_t k)
{
    int64_t low = 0, high = csr->num_rows; /* row_ptr[low] <= k < row_ptr[high] */
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (csr->row_ptr[middle] <= k) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

/* Check the columns of entries [first, first + n) lie in [0, NCOLS). */
static spart_status check_columns(const spart_fits_io *io, const spart_csr *csr, int64_t first,
                                  int64_t n)
{
    for (int64_t k = first; k < first + n; k++) {
        int64_t column = csr->columns32 != NULL ? csr->columns32[k] : csr->columns64[k];
        if (column < 0 || column >= csr->num_columns) {
            return spart_fits_format_error(io,
                                           "row %lld of ENTRIES (matrix row %lld) has COLUMN = "
                                           "%lld, outside [0, NCOLS = %lld)",
                                           (long long)k, (long long)row_of_entry(csr, k),
                                           (long long)column, (long long)csr->num_columns);
        }
    }
    return SPART_OK;
}

/* Read ENTRIES straight into the column and value arrays, a chunk at a
 * time. A NULL null value turns off CFITSIO's NaN substitution: values come
 * back bit for bit, NaN payloads and negative zeros included. */
static spart_status read_entries(const spart_fits_io *io, const regridder_header *header,
                                 spart_csr *csr)
{
    int numbers[2];
    spart_status status = open_entries_table(io, header, numbers);
    if (status != SPART_OK) {
        return status;
    }
    int fits_status = 0;
    int64_t total = header->num_entries;
    int64_t chunk = spart_fits_chunk_rows(io->file, &fits_status);
    for (int64_t first = 0; first < total && status == SPART_OK; first += chunk) {
        int64_t n = total - first < chunk ? total - first : chunk;
        LONGLONG row = (LONGLONG)first + 1;
        if (csr->columns32 != NULL) {
            fits_read_col(io->file, TINT, numbers[0], row, 1, (LONGLONG)n, NULL,
                          csr->columns32 + first, NULL, &fits_status);
        } else {
            fits_read_col(io->file, TLONGLONG, numbers[0], row, 1, (LONGLONG)n, NULL,
                          csr->columns64 + first, NULL, &fits_status);
        }
        if (csr->values32 != NULL) {
            fits_read_col(io->file, TFLOAT, numbers[1], row, 1, (LONGLONG)n, NULL,
                          csr->values32 + first, NULL, &fits_status);
        } else {
            fits_read_col(io->file, TDOUBLE, numbers[1], row, 1, (LONGLONG)n, NULL,
                          csr->values64 + first, NULL, &fits_status);
        }
        if (fits_status != 0) {
            return spart_fits_fail_reading(io, "reading table ENTRIES", fits_status);
        }
        status = check_columns(io, csr, first, n);
    }
    return status;
}

/* ---- loading: the regridder ------------------------------------------------------------------ */

/* A regridder with the header's maps and CSR arrays of its sizes (not yet
 * filled), or NULL when memory runs out. */
static spart_regridder *allocate_regridder(const spart_allocator *allocator,
                                           const regridder_header *header)
{
    spart_regridder *made = spart_alloc_zero(allocator, 1, sizeof *made);
    if (made == NULL) {
        return NULL;
    }
    made->allocator = *allocator;
    made->ops = spart_operator_ops_for(-1); /* a file is loaded into host memory */
    made->owns_arrays = 1;
    made->input = header->input;
    made->output = header->output;
    made->roles = header->roles;
    made->has_roles = header->has_roles;
    spart_csr *csr = &made->csr;
    csr->num_rows = header->num_rows;
    csr->num_columns = header->num_columns;
    csr->num_entries = header->num_entries;
    size_t entries = (size_t)header->num_entries;
    csr->row_ptr = spart_alloc(allocator, (size_t)header->num_rows + 1, sizeof(int64_t));
    if (header->num_columns < INT32_COLUMN_LIMIT) {
        csr->columns32 = spart_alloc(allocator, entries, sizeof(int32_t));
    } else {
        csr->columns64 = spart_alloc(allocator, entries, sizeof(int64_t));
    }
    if (header->value_type == SPART_FLOAT32) {
        csr->values32 = spart_alloc(allocator, entries, sizeof(float));
    } else {
        csr->values64 = spart_alloc(allocator, entries, sizeof(double));
    }
    if (csr->row_ptr == NULL || (csr->columns32 == NULL && csr->columns64 == NULL) ||
        (csr->values32 == NULL && csr->values64 == NULL)) {
        spart_regridder_free(made);
        return NULL;
    }
    return made;
}

/* The plan the loaded matrix calls for must be the file's: another group
 * size would sum the products in another order. */
static spart_status check_plan(const spart_fits_io *io, const regridder_header *header,
                               const spart_regridder *regridder)
{
    const spart_product_plan *plan = &regridder->plan;
    if (plan->group_size != header->plan.group_size ||
        plan->chunk_length != header->plan.chunk_length) {
        return spart_fits_format_error(io,
                                       "GROUPSZ = %d and CHUNKLEN = %lld, but this matrix (%lld "
                                       "entries in %lld rows) is summed with GROUPSZ = %d and "
                                       "CHUNKLEN = %lld: the file was not written by this "
                                       "layout's rules",
                                       header->plan.group_size,
                                       (long long)header->plan.chunk_length,
                                       (long long)header->num_entries, (long long)header->num_rows,
                                       plan->group_size, (long long)plan->chunk_length);
    }
    return SPART_OK;
}

/* Read and check the whole of the open file into a new regridder. */
static spart_status read_regridder_file(const spart_fits_io *io, spart_regridder **regridder)
{
    regridder_header header;
    spart_status status = read_primary_header(io, &header);
    /* Both tables must have the rows the header promises before those
     * numbers size an allocation. */
    int numbers[2];
    if (status == SPART_OK) {
        status = open_row_ptr_table(io, &header, numbers);
    }
    if (status == SPART_OK) {
        status = open_entries_table(io, &header, numbers);
    }
    if (status != SPART_OK) {
        return status;
    }
    spart_regridder *made = allocate_regridder(&io->context->allocator, &header);
    if (made == NULL) {
        return spart_fail(io->context, SPART_ERROR_OUT_OF_MEMORY,
                          "regridder file %s: could not allocate %lld rows and %lld entries",
                          io->path, (long long)header.num_rows, (long long)header.num_entries);
    }
    status = read_row_ptr(io, &header, &made->csr);
    if (status == SPART_OK) {
        status = read_entries(io, &header, &made->csr);
    }
    if (status == SPART_OK) {
        made->plan = spart_plan_product_by_rule(&made->csr, header.plan.row_rule);
        if (made->has_roles) {
            made->plan.row_stripes = spart_regridder_row_stripes(&made->roles, &made->output);
        }
        status = check_plan(io, &header, made);
    }
    if (status == SPART_OK) {
        spart_regridder_index_short_rows(made, spart_threads(io->context));
    }
    if (status != SPART_OK) {
        spart_regridder_free(made);
        return status;
    }
    *regridder = made;
    return SPART_OK;
}

spart_status spart_regridder_load(spart_context *context, const char *path,
                                  spart_regridder **regridder)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder: the output pointer is NULL");
    }
    *regridder = NULL;
    if (path == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER, "path is NULL");
    }
    spart_fits_io io = {context, REGRIDDER_NOUN, path, NULL};
    spart_status status = spart_fits_open_to_load(&io);
    if (status == SPART_OK) {
        status = read_regridder_file(&io, regridder);
    }
    spart_fits_close_loaded(&io);
    return status;
}
