/*
 * spart/regridder.h: the Regridder, one sparse operator (one CSR matrix)
 * assembled from weights, applied as y = A x on the host (OpenMP).
 *
 * Each orthogonal axis of the weights takes a role from its lengths in the
 * weights (nw), the input values (ni) and the output values (no):
 *
 *   nw  ni  no   the operator
 *   N   N   N    applies each element to its own input
 *   N   1   N    applies every element to the same input
 *   N   N   1    sums what the elements give
 *   N   1   1    applies the sum of the elements
 *   1   M   M    applies the same matrix to every input (a batch axis)
 *
 * The matrix has a row per output value and a column per input value,
 * batch axes left out (they, and any leading axes of x, become columns of
 * a dense block). Entry (i, o) of element b lands in the row of output
 * cell o of element b's output and the column of input cell i of b's
 * input. A row keeps its entries in element order and, within an
 * element, in the weights' order; entries for the same (row, column) are
 * kept, not merged.
 *
 * Memory: a regridder owns its arrays. Its exact transpose and its
 * conservative transpose are owned by it too: the pointers the transpose
 * functions return stay valid until the regridder is freed (freeing them
 * yourself does nothing).
 *
 * Thread safety: products on one regridder may run from several threads at
 * once (they read it only). The first call of a transpose function builds
 * and keeps the transpose, a mutation: do not race it with other calls on
 * the same regridder.
 *
 * Determinism: the assembly is a stable counting sort, so the CSR arrays
 * are the same bit for bit for any thread count. Each product value is
 * summed in one fixed order, chosen from the matrix alone when the
 * regridder is made (its plan): the row's entries are cut into chunks of
 * SPART_CHUNK_LENGTH; within a chunk, lane l of g sums entries l, l+g,
 * l+2g, ... with fma from zero; the g lane sums combine in a binary tree
 * (lane l += lane l + h for h = g/2, ..., 1); chunk sums add in chunk
 * order. g is a power of two from 1 to 32 set by the mean row length (a
 * regridder of a CSR matrix, spart/csr_matrix.h, gives each row its own g
 * from its own length instead, and its files say so: PLANRULE). The
 * same numbers come out for any thread count, run after run, and for a
 * column alone or inside any batch, whichever vector instructions the
 * processor offers (the host picks AVX2 or AVX-512 kernels at run time;
 * they keep the order). A NaN result is NaN in the same places, but which
 * NaN (its sign and payload bits) follows the hardware's operand order
 * and is not part of the promise.
 */
#ifndef SPART_REGRIDDER_H
#define SPART_REGRIDDER_H

#include "spart/common.h"
#include "spart/weights.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Entries per chunk of a row in the product's summation order. */
#define SPART_CHUNK_LENGTH 4096

/* How matrix values are stored. float32 values are summed in float64. */
typedef enum spart_value_type { SPART_FLOAT64 = 0, SPART_FLOAT32 = 1 } spart_value_type;

/* What the regridder is made for besides the weights. Start from
 * spart_regridder_options_init() and change what you need. */
typedef struct spart_regridder_options {
    /* The shape of the input values (x without leading batch axes), and of
     * the output values; has_shape_* = 0 (the default) takes the weights'
     * shape_input / shape_output with their orthogonal axes broadcast
     * together (the shapes regrid_from_weights gives and takes): every
     * orthogonal axis diagonal. */
    int has_shape_input;
    spart_shape shape_input;
    int has_shape_output;
    spart_shape shape_output;
    /* The resampled axes of shape_input and shape_output (negative count
     * from the end); 0 numbers (the default): the axes the weights were
     * built with, counted from the end of their shapes. */
    int num_axis_input;
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    spart_value_type value_type; /* default SPART_FLOAT64 */
    int drop_zeros;              /* nonzero: leave out entries whose value is exactly 0 */
} spart_regridder_options;

/* Fill `options` with the defaults above. */
SPART_API void spart_regridder_options_init(spart_regridder_options *options);

typedef struct spart_regridder spart_regridder;

/* Assemble a regridder from weights (options NULL: defaults). Errors:
 * SPART_ERROR_NULL_POINTER, SPART_ERROR_SHAPE_MISMATCH (an impossible role:
 * the sentence names the axis and its three lengths; resampled extents that
 * differ from the weights'), SPART_ERROR_AXIS_OUT_OF_RANGE,
 * SPART_ERROR_UNKNOWN_ENUM, SPART_ERROR_OVERFLOW, SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status
spart_regridder_create(spart_context *context, const spart_weights *weights,
                       const spart_regridder_options *options, spart_regridder **regridder);

/* Free a regridder and the transposes it owns. Accepts NULL; does nothing
 * for a transpose owned by another regridder. */
SPART_API void spart_regridder_free(spart_regridder *regridder);

/* Shapes of the values it takes and gives (without leading axes). */
SPART_API spart_shape spart_regridder_shape_input(const spart_regridder *regridder);
SPART_API spart_shape spart_regridder_shape_output(const spart_regridder *regridder);

/* The matrix: rows, columns, stored entries, the value type, and the
 * plan's group size g (lanes per row; 32, the most, for a regridder of a
 * CSR matrix, whose rows each have their own). */
SPART_API int64_t spart_regridder_num_rows(const spart_regridder *regridder);
SPART_API int64_t spart_regridder_num_columns(const spart_regridder *regridder);
SPART_API int64_t spart_regridder_num_entries(const spart_regridder *regridder);
SPART_API spart_value_type spart_regridder_value_type(const spart_regridder *regridder);
SPART_API int spart_regridder_group_size(const spart_regridder *regridder);

/* The CSR arrays (pointers into the regridder): row_ptr (rows + 1
 * entries), column indices in exactly one of columns32 / columns64 (the
 * other is set to NULL: int64 when the matrix has 2^31 columns or more),
 * and the values (double or float per the value type). Any output pointer
 * may be NULL. */
SPART_NODISCARD SPART_API spart_status spart_regridder_csr(const spart_regridder *regridder,
                                                           const int64_t **row_ptr,
                                                           const int32_t **columns32,
                                                           const int64_t **columns64,
                                                           const void **values);

/* The shape of y for x of shape `shape_x` = leading axes + shape_input.
 * Errors: SPART_ERROR_SHAPE_MISMATCH naming both shapes. */
SPART_NODISCARD SPART_API spart_status spart_regridder_apply_shape(spart_context *context,
                                                                   const spart_regridder *regridder,
                                                                   const spart_shape *shape_x,
                                                                   spart_shape *shape_y);

/* Bytes of scratch spart_regridder_apply_workspace needs for x of shape
 * `shape_x` (0 for one vector, no leading or batch axes; a batch read in
 * place still needs a little, see below; on a device, vectors of leading
 * axes need none either, unless the matrix has rows longer than a chunk,
 * whose chunk sums it holds, or there are 5 or more of them and either
 * the matrix's rows are short (fewer than 64 entries on average, none
 * longer than a chunk) or x fills 8 MiB or more: they are then copied
 * into tiles of 8 interleaved vectors in the workspace, which gathers
 * each column's values from one 64-byte line instead of 8 planes). */
SPART_NODISCARD SPART_API spart_status
spart_regridder_workspace_size(spart_context *context, const spart_regridder *regridder,
                               const spart_shape *shape_x, size_t *bytes);

/* y = A x, x of shape leading axes + shape_input (dense, C order), y of
 * the shape spart_regridder_apply_shape gives, size_y values, overwritten.
 * x and y must not overlap (y is written while x is still read):
 * SPART_ERROR_INVALID_ARGUMENT.
 * The simple entry point allocates its scratch; the _workspace one takes
 * `workspace` of at least the queried bytes (aligned for double: on the
 * host the packed vectors are placed on the first 64-byte boundary inside
 * it, which the queried size leaves room for).
 *
 * Batches on the host: the kernels read the vectors of a batch side by
 * side, each column's values together. Vectors given as leading axes are
 * first copied into that layout in the workspace (x read, written and
 * read again). A batch axis after the matrix axes and no leading axes (x
 * of shape (..., N, N, 8): weights with a trailing orthogonal axis of 1,
 * shapes with the batch there) is that layout already: x and y are used
 * in place, with no copy and a smaller workspace, the fastest layout for
 * a large x. Keep such an x on a 64-byte boundary, so that a column's 8
 * values are one cache line. Every layout gives the same bits. */
SPART_NODISCARD SPART_API spart_status spart_regridder_apply(spart_context *context,
                                                             const spart_regridder *regridder,
                                                             const spart_array *x, double *y,
                                                             int64_t size_y);
SPART_NODISCARD SPART_API spart_status spart_regridder_apply_workspace(
    spart_context *context, const spart_regridder *regridder, const spart_array *x, double *y,
    int64_t size_y, void *workspace, size_t workspace_bytes);

/* The conservative transpose, as spart_weights_transpose_conservative of
 * the weights would give, assembled: the exact transpose's pattern (shared,
 * not copied) with each entry scaled by its own element's grid factors,
 * (v * F_in[input cell]) / V_out[output cell], F_in = V_in / (w * w) for
 * weights_input w (V_in without), V the cell sizes. The grids and options
 * (axes, weights_input) are those the weights were built with. Kept by
 * `regridder` (a second call replaces it). Errors: those of
 * spart_weights_transpose_conservative, and SPART_ERROR_NOT_IMPLEMENTED
 * when the grids vary along an axis whose elements the operator sums into
 * one shared input (an entry's element is lost there), or for a regridder
 * that was not made from weights (a transpose, or one loaded from a file
 * saved without the roles of its axes: files written before they were
 * saved). */
SPART_NODISCARD SPART_API spart_status spart_regridder_transpose_conservative(
    spart_context *context, spart_regridder *regridder, int num_coordinates,
    const spart_array *coordinates_input, const spart_array *coordinates_output,
    const spart_weights_options *options, spart_regridder **transposed);

/* The exact transpose (built on the first call and kept; the transpose of
 * the transpose is the original object). Its rows keep the original's
 * row order. *transposed is owned by `regridder`. */
SPART_NODISCARD SPART_API spart_status spart_regridder_transpose(spart_context *context,
                                                                 spart_regridder *regridder,
                                                                 spart_regridder **transposed);

/* Save a regridder to a FITS file (layout in docs/formats.md, "Regridder
 * (operator) files"): its CSR arrays as they are in memory (int32 or int64
 * columns, float64 or float32 values), both shapes and their batch axes,
 * its plan's group size, and the roles of its axes (what
 * spart_regridder_transpose_conservative needs). Fails rather than replace an existing file
 * unless `overwrite` is nonzero; the file is written beside its final name
 * and renamed into place. A transpose is saved as a regridder of its own.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_INVALID_ARGUMENT (an empty
 * path), SPART_ERROR_IO, SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_regridder_save(spart_context *context,
                                                            const spart_regridder *regridder,
                                                            const char *path, int overwrite);

/* Load a regridder saved by spart_regridder_save into a new one (free it
 * with spart_regridder_free): its products are the same bit for bit as
 * the saved regridder's. The plan is made anew from the matrix and must
 * agree with the file's; the transpose is built on demand, as usual, and
 * the conservative transpose too when the file has the roles of the axes.
 * Errors: SPART_ERROR_NULL_POINTER, SPART_ERROR_IO (missing or unreadable
 * file), SPART_ERROR_FILE_FORMAT (not a spart regridder file, or one that
 * is inconsistent: the sentence names the file and what is wrong),
 * SPART_ERROR_OUT_OF_MEMORY. */
SPART_NODISCARD SPART_API spart_status spart_regridder_load(spart_context *context,
                                                            const char *path,
                                                            spart_regridder **regridder);

/* ---- Streaming assembly ------------------------------------------------------
 *
 * Operators whose weights do not fit in memory (host or device) are
 * assembled from weights that arrive in blocks: made on the fly by a
 * function of yours, or read from weights files (spart_weights_files_open).
 * The assembly makes two passes over the blocks, in block order: the
 * first counts each row's entries, the second places every entry at its
 * row's cursor. It holds the CSR result, one array of row cursors (the
 * result's row pointers, which the cursors become) and one block's
 * staging, never the weights. The result is the regridder
 * spart_regridder_create (on the host) or spart_regridder_create_device
 * (on the device) builds from the weights that the concatenated blocks
 * form, bit for bit the same CSR arrays and plan, for any block sizes:
 * a row holds its entries in stream order (block by block, in each block
 * in its order), which is the weights' order when the blocks walk through
 * the weights' concatenated arrays from the first entry to the last.
 *
 * Memory model. `budget_bytes` bounds what the call itself allocates in
 * the memory it assembles in (host memory for a host regridder, device
 * memory of the context's device for a device one), counted by the call
 * as it allocates, the CSR result included:
 *   - the result: row pointers (8 bytes a row, plus 8), columns (4 bytes
 *     an entry, 8 from 2^31 columns on) and values (4 bytes an entry for
 *     SPART_FLOAT32, 8 for SPART_FLOAT64), and the plan's tables (the
 *     short-row index, 1 byte a row; on a device also the long-row table
 *     and, while it is made, 16 bytes a row of scratch);
 *   - the assembly tables: 16 bytes an orthogonal element (on the host
 *     also 16 a block), and 8 bytes a resampled cell of a side whose
 *     cells are not one dense block of the matrix index (rare);
 *   - on a device, the staging of one block: its entries copied from host
 *     memory (24 bytes an entry; none for blocks already in device
 *     memory), the stable sort of its rows (about 16 bytes an entry with
 *     32-bit keys and positions, plus CUB's scratch) and its element
 *     offsets. A host assembly reads each block where it lies and stages
 *     nothing.
 * On a device each allocation is counted in whole pages of 2 MiB, as
 * cudaMalloc hands them out (so cudaMemGetInfo sees no more than the
 * count).
 * Not in the budget: the blocks your function yields (your memory), the
 * buffers of a spart_weights_files (its own, stated there), two pinned
 * host buffers (each a block's indices, at most 32 MiB) through which a
 * device assembly copies host blocks when their copies come to 256 MiB or
 * more in all, the per-block counts of a device assembly (host
 * memory, 16 bytes a block), the regridder's small struct and the
 * stream's element offsets (8 bytes an element). The call checks the
 * budget before the first pass (the row cursors, tables and staging, with
 * the fewest bytes the result can take) and again when the first pass has
 * counted the entries (the whole result and the staging), and refuses,
 * before it allocates, with SPART_ERROR_INVALID_ARGUMENT and a sentence
 * giving the bytes of each part, when the budget cannot hold them:
 * spart_regridder_stream_bytes gives the same figure beforehand.
 *
 * The function is called twice for each block, once a pass, and must give
 * the same block both times. The call checks that it did: each block's
 * entry and kept-entry counts, and at the end a 64-bit fingerprint of the
 * row pointers the second pass reached against those the first pass
 * counted; a difference is refused (SPART_ERROR_INVALID_ARGUMENT naming
 * the block), and no write ever lands outside the result. Every entry's
 * indices are checked against its side's resampled cells, as
 * spart_weights_create_from_arrays checks them.
 *
 * Thread safety: the call runs your function on the calling thread, one
 * block at a time; a host assembly then walks each block with the
 * context's threads, each owning a range of rows. Determinism: the CSR
 * arrays are the same bit for bit for any block sizes, budget, thread
 * count and on host or device. */

/* One block of streamed weights, as your function yields it: entries
 * offsets[num_elements] of them, element first_element + j holding
 * entries offsets[j] .. offsets[j + 1] - 1 of the three arrays
 * (offsets: num_elements + 1 values, ascending, from 0). A block may hold
 * pieces of elements (an element may continue in the next block) and may
 * be empty (num_elements 0, or offsets all 0; the arrays may then be
 * NULL). The arrays stay yours and must stay valid until your function is
 * called again or the assembly returns. */
typedef struct spart_weights_block {
    int64_t first_element;
    int64_t num_elements;
    const int64_t *offsets;
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
} spart_weights_block;

/* Your block function: fill *block with block `block` (0 .. num_blocks -
 * 1) for pass `pass` (0: counting, 1: placing); return SPART_OK, or any
 * other status to stop the assembly (which then fails with that status
 * and a sentence naming the block and the pass). */
typedef spart_status (*spart_weights_block_function)(void *user_data, int64_t block, int pass,
                                                     spart_weights_block *result);

/* A stream of weights: what spart_weights_create_from_arrays takes
 * besides the entries (the shapes and the resampled axes, read and
 * checked as it reads them), and where the entries come from. Start from
 * spart_weights_stream_init(). */
typedef struct spart_weights_stream {
    spart_shape shape_orthogonal;
    spart_shape shape_input;
    spart_shape shape_output;
    int num_axis_input; /* 0: every axis */
    int axis_input[SPART_MAX_NDIM];
    int num_axis_output;
    int axis_output[SPART_MAX_NDIM];
    int64_t num_blocks;
    /* The most entries a block holds (a device assembly's staging is made
     * for this many; a larger block is refused). */
    int64_t max_block_entries;
    /* Nonzero: the block arrays your function yields are device memory of
     * the context's CUDA device (a builder on the device); they are read in
     * place, and only a device assembly takes them. */
    int blocks_on_device;
    spart_weights_block_function function;
    void *user_data;
} spart_weights_stream;

/* Fill `stream` with zeros: no blocks, no function. */
SPART_API void spart_weights_stream_init(spart_weights_stream *stream);

/* What a streaming assembly held and did (any field may be read after a
 * successful call). */
typedef struct spart_stream_report {
    size_t budget_bytes;  /* the budget it was given */
    size_t peak_bytes;    /* the most it held at once, by its own count */
    size_t result_bytes;  /* the CSR arrays and the plan's tables */
    size_t staging_bytes; /* one block's staging (0 on the host) */
    int64_t num_blocks;
    int64_t num_entries_read; /* entries of all blocks (in one pass) */
    int64_t num_entries;      /* entries kept in the matrix */
} spart_stream_report;

/* The bytes of `budget_bytes` a streaming assembly of `stream` with these
 * options (NULL: the defaults) needs when its matrix keeps `num_entries`
 * entries, on the context's CUDA device (on_device nonzero) or on the
 * host: the peak the memory model above describes. Errors: those of the
 * checks of spart_regridder_create_streamed that read no block. */
SPART_NODISCARD SPART_API spart_status spart_regridder_stream_bytes(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, int64_t num_entries, size_t *bytes);

/* The largest max_block_entries (at most num_entries, at least 1) for
 * which a streaming assembly of `stream` (its other fields as given) with
 * these options, keeping `num_entries` entries, fits `budget_bytes`, into
 * *block_entries: the size to cut blocks to. On the host, where blocks
 * are read in place, any size fits once the result does (num_entries is
 * returned). Errors: those of spart_regridder_stream_bytes, and
 * SPART_ERROR_INVALID_ARGUMENT when not even blocks of one entry fit (the
 * sentence gives the bytes needed then). */
SPART_NODISCARD SPART_API spart_status spart_regridder_stream_block_entries(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, int64_t num_entries, size_t budget_bytes,
    int64_t *block_entries);

/* Assemble a regridder from a stream of weights within `budget_bytes`
 * (memory model above), on the host (on_device 0: a host regridder, as
 * spart_regridder_create makes) or on the context's CUDA device (on_device
 * nonzero: a device regridder, as spart_regridder_create_device makes).
 * `report` (may be NULL) receives what it held. Errors, checked in this
 * order: SPART_ERROR_NULL_POINTER (context, stream, its function,
 * regridder); those of spart_weights_create_from_arrays for the shapes and
 * axes and of spart_regridder_create for the options;
 * SPART_ERROR_INVALID_ARGUMENT (a negative block count or block size;
 * blocks_on_device for a host assembly; a budget that cannot hold the
 * cursors, tables and one block's staging, or, after the first pass, the
 * result: the sentence gives each part in bytes; a block that is larger
 * than max_block_entries, whose offsets do not ascend from 0, whose
 * elements lie outside the orthogonal shape or go back before an element
 * of an earlier block, or whose indices lie outside their cells; a block
 * that changed between the passes); SPART_ERROR_NO_DEVICE (on_device in a
 * build without CUDA, or no such device); SPART_ERROR_OVERFLOW; the status
 * your function returned; SPART_ERROR_OUT_OF_MEMORY (an allocation failed
 * although the budget allowed it); SPART_ERROR_INTERNAL (another CUDA
 * error, named). Nothing is left allocated on failure. */
SPART_NODISCARD SPART_API spart_status spart_regridder_create_streamed(
    spart_context *context, const spart_weights_stream *stream,
    const spart_regridder_options *options, int on_device, size_t budget_bytes,
    spart_regridder **regridder, spart_stream_report *report);

/* Weights files as a stream: one or more files that spart_weights_save
 * wrote, with the same shapes and axes, read in blocks of at most
 * `block_entries` rows (file by file, in order; a block never spans two
 * files). Their entries, file after file, are the stream: the regridder
 * assembled from it is the one of the weights of one file, and of several
 * files the one of their entries concatenated (files holding successive
 * runs of elements, such as one file cut by element ranges; an element
 * may continue into the next file). The object reads the files'
 * headers and element tables now (8 bytes an element a file; NELEM and
 * the tables are checked as spart_weights_load checks them) and reads the
 * entries later, each pass, into its own buffers of 24 bytes times
 * block_entries (host memory, not in an assembly's budget). Fills
 * *stream for spart_regridder_create_streamed; the stream is valid while
 * `files` lives, and reports its reading errors in `context` (use the
 * same context for the assembly, whose sentence then quotes them). Free
 * with spart_weights_files_close. Errors: SPART_ERROR_NULL_POINTER,
 * SPART_ERROR_INVALID_ARGUMENT (no files, block_entries < 1),
 * SPART_ERROR_IO, SPART_ERROR_FILE_FORMAT (as spart_weights_load; files
 * whose shapes or axes differ, named), SPART_ERROR_OUT_OF_MEMORY. During
 * the assembly, a file whose elements changed after the opening is
 * refused with SPART_ERROR_FILE_FORMAT, and one whose entries change
 * between the passes as a changed block. */
typedef struct spart_weights_files spart_weights_files;
SPART_NODISCARD SPART_API spart_status spart_weights_files_open(
    spart_context *context, int num_files, const char *const *paths, int64_t block_entries,
    spart_weights_files **files, spart_weights_stream *stream);

/* Close the files and free the buffers. Accepts NULL. */
SPART_API void spart_weights_files_close(spart_weights_files *files);

#ifdef __cplusplus
}
#endif

#endif /* SPART_REGRIDDER_H */
