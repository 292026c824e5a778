/*
 * src/device/device_internal.h: the CUDA kernels' entry points, as the C glue
 * (src/operator/regridder_*_cuda.c) calls them. They are defined in
 * kernels/csr_product.cu and kernels/csr_product_tiles.cu (products),
 * kernels/csr_assemble.cu (assembly,
 * the exact transpose, the long-row table), kernels/csr_transpose.cu
 * (the conservative transpose's values) and kernels/mart_steps.cu (the
 * MART update from images), compiled by nvcc, exported with C
 * linkage, and
 * exist only in builds with SPART_HAVE_CUDA. Plain C types only, so that
 * the header reads the same in C and in CUDA C++.
 *
 * Every entry point only enqueues work on `stream` (a cudaStream_t; NULL is
 * the default stream): it never synchronises and never allocates (scratch
 * comes from the caller, sized by the *_workspace and *_plan functions), so
 * a product can be captured in a CUDA Graph. Each returns the cudaError_t
 * of its launches (0: cudaSuccess).
 *
 * Determinism: the products add in the order of host/csr_product.c (see
 * spart/regridder.h): the same bits as the host, run after run, for any
 * launch configuration. Assembly and the transposes place entries by a
 * stable sort (never by atomic cursors), so they build the host's arrays
 * bit for bit. No atomics.
 */
#ifndef SPART_DEVICE_INTERNAL_H
#define SPART_DEVICE_INTERNAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPART_DEVICE_MAX_NDIM 16

/* A CSR matrix in device memory with its plan. Exactly one of columns32 /
 * columns64 and one of values64 / values32 is set. Rows of more than
 * chunk_length entries ("long rows") are left to the chunked pass: each of
 * their chunks is summed on its own into a scratch slot, and the chunk sums
 * are then added per row in chunk order. */
typedef struct spart_device_csr {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    const int64_t *row_ptr; /* num_rows + 1 */
    const int32_t *columns32;
    const int64_t *columns64;
    const double *values64;
    const float *values32;
    int group_size;       /* lanes per row: a power of two, 1 to 32 */
    int64_t chunk_length; /* entries per chunk, a multiple of group_size */
    int64_t num_long_rows;
    const int64_t *long_rows;        /* num_long_rows: their row indices, ascending */
    const int64_t *long_first_chunk; /* num_long_rows + 1: each one's first chunk */
    int64_t num_long_chunks;
    const int64_t *chunk_begin; /* num_long_chunks: each chunk's first entry */
    const int64_t *chunk_end;   /* and one past its last */
} spart_device_csr;

/* The fewest entries the rows other than the long ones can hold: all
 * entries less num_long_chunks whole chunks (the long rows hold no more). */
static inline int64_t spart_device_fewest_short_entries(const spart_device_csr *matrix)
{
    return matrix->num_entries - matrix->num_long_chunks * matrix->chunk_length;
}

/* Whether a matrix of g = 2, 4, 8 or 16 looks like rows of at most g
 * entries beside its long rows: the fewest entries its short rows can
 * hold (spart_device_fewest_short_entries) are at most g a short row,
 * give or take one entry for every 32 rows. Then most warps find 32 rows
 * that each fit one round of their g lanes, and the products sum them a
 * thread a row (kernels/csr_product.cu, kernels/csr_product_tiles.cu); the
 * other warps' rows are summed by groups all the same. (The plan takes g
 * with a mean of g to 2g entries a row, so this is a matrix of rows of
 * about g, such as the transpose of a CTIS forward operator, whose rows,
 * scene cells, hold 4 entries a channel: 16 for four channels.) */
static inline int spart_device_rows_fit_one_round(const spart_device_csr *matrix)
{
    const int64_t g = matrix->group_size;
    const int64_t short_rows = matrix->num_rows - matrix->num_long_rows;
    return g >= 2 && g <= 16 && matrix->num_entries > 0 && short_rows > 0 &&
           spart_device_fewest_short_entries(matrix) <= g * short_rows + short_rows / 32;
}

/* Whether a matrix's rows are short for batches in tiles: its rows other
 * than the long ones hold fewer than 64 entries on average (g = 32 with
 * rows of 1 or 2 entries a lane, or a smaller g), counting
 * spart_device_fewest_short_entries as theirs. Batches of such a matrix
 * are read in tiles of 8 vectors and summed by
 * spart_cuda_csr_product_short_rows_in_tiles (the long rows by their
 * chunks). */
static inline int spart_device_rows_are_short(const spart_device_csr *matrix)
{
    const int64_t short_rows = matrix->num_rows - matrix->num_long_rows;
    return short_rows > 0 && spart_device_fewest_short_entries(matrix) < 64 * short_rows;
}

/* The short-row index of a device matrix of g <= 2 whose rows all hold at
 * most 255 entries (so no long rows): row_lengths[r] = row_ptr[r + 1] -
 * row_ptr[r], zero past the last row up to a whole block of
 * SPART_DEVICE_SHORT_ROW_BLOCK rows, and block_starts[b] = row_ptr[b *
 * SPART_DEVICE_SHORT_ROW_BLOCK]. A one-vector product reads it instead of
 * row_ptr: 1 byte a row instead of 8. (Apart from spart_device_csr, whose
 * size, as a kernel parameter, changes the registers ptxas gives the other
 * product kernels.) */
typedef struct spart_device_short_rows {
    const uint8_t *row_lengths;
    const int64_t *block_starts;
} spart_device_short_rows;

/* Rows per block of the short-row index (the host's SPART_SHORT_ROW_BLOCK). */
#define SPART_DEVICE_SHORT_ROW_BLOCK 256

/* Ints of workspace spart_cuda_short_rows_index needs. */
#define SPART_DEVICE_SHORT_ROW_FLAGS 1025

/* How one side's values map onto the matrix index and the batch index (as
 * spart_axis_map in regridder_internal.h). */
typedef struct spart_device_axis_map {
    int ndim;
    int64_t dims[SPART_DEVICE_MAX_NDIM];
    int64_t matrix_stride[SPART_DEVICE_MAX_NDIM];
    int64_t batch_stride[SPART_DEVICE_MAX_NDIM];
    int64_t num_batch;
} spart_device_axis_map;

/* Y = A X for num_vectors >= 1 interleaved vectors (X[column * num_vectors
 * + t], Y[row * num_vectors + t]), overwriting Y. chunk_sums holds
 * num_long_chunks * num_vectors doubles (unused when there are no long
 * rows). */
int spart_cuda_csr_product(const spart_device_csr *matrix, const double *x, int64_t num_vectors,
                           double *y, double *chunk_sums, void *stream);

/* The same product for num_vectors >= 1 vectors lying one after the other
 * in C order (x[t * num_columns + column], y[t * num_rows + row]), as
 * leading axes give them. With x_tiles NULL, x is read as it lies: one
 * launch (two with long rows). Otherwise x_tiles
 * (spart_device_x_tiles_doubles(num_vectors, num_columns) doubles) first
 * receives x interleaved, which the product then reads: 2 to 4 vectors in
 * one tile of 4 (spart_cuda_pack_x4: a column's values in one 32-byte
 * sector, where each vector as it lies costs a sector of its own), more in
 * tiles of 8 (spart_cuda_pack_tiles: a column's 8 values in one 64-byte
 * line instead of 8 lines); y is written in C order either way.
 * Each vector's values are those of spart_cuda_csr_product, bit for bit. */
int spart_cuda_csr_product_c_order(const spart_device_csr *matrix, const double *x,
                                   int64_t num_vectors, double *x_tiles, double *y,
                                   double *chunk_sums, void *stream);

/* The doubles of spart_cuda_csr_product_c_order's x_tiles for num_vectors
 * >= 2 vectors of num_columns values. */
static inline int64_t spart_device_x_tiles_doubles(int64_t num_vectors, int64_t num_columns)
{
    return (num_vectors <= 4 ? 4 : (num_vectors + 7) / 8 * 8) * num_columns;
}

/* 1 to 4 vectors in C order (x[t * num_columns + column]) into one tile of
 * 4 interleaved vectors, x4[column * 4 + t] (4 * num_columns doubles,
 * zeros past num_vectors). */
int spart_cuda_pack_x4(const double *x, int64_t num_columns, int64_t num_vectors, double *x4,
                       void *stream);

/* x (num_vectors vectors in C order, x[t * num_columns + column]) into
 * x_tiles (ceil(num_vectors / 8) * 8 * num_columns doubles): tiles of 8
 * interleaved vectors, the tile of vectors t0 .. t0 + 7 at x_tiles[t0 *
 * num_columns], the last padded with zeros. */
int spart_cuda_pack_tiles(const double *x, int64_t num_columns, int64_t num_vectors,
                          double *x_tiles, void *stream);

/* Y = A X for a matrix whose rows are short (spart_device_rows_are_short)
 * and num_vectors vectors in tiles (spart_cuda_pack_tiles), y in C order
 * (y[t * num_rows + row]); the same bits as spart_cuda_csr_product
 * (kernels/csr_product_tiles.cu). Long rows are not written: their chunks
 * are summed apart (spart_cuda_csr_product_c_order does both). */
int spart_cuda_csr_product_short_rows_in_tiles(const spart_device_csr *matrix,
                                               const double *x_tiles, int64_t num_vectors,
                                               double *y, void *stream);

/* y = A x for one vector through the matrix's short-row index (the same
 * bits as spart_cuda_csr_product). The matrix has no long rows and g <= 2. */
int spart_cuda_csr_product_indexed(const spart_device_csr *matrix,
                                   const spart_device_short_rows *index, const double *x, double *y,
                                   void *stream);

/* Move values between C order (num_leading blocks of the side's shape)
 * and interleaved vectors packed[matrix_index * T + lead * num_batch +
 * batch], T = num_leading * num_batch: spart_cuda_pack fills `packed` from
 * `values`, spart_cuda_unpack fills `values` from `packed`. */
int spart_cuda_pack(const spart_device_axis_map *map, int64_t num_leading, const double *values,
                    double *packed, void *stream);
int spart_cuda_unpack(const spart_device_axis_map *map, int64_t num_leading, const double *packed,
                      double *values, void *stream);

/* ---- the MART update from images (kernels/mart_steps.cu) ------------------------- */

/* scene[v] *= the MART correction of voxel v (src/mart/mart_math.h) from
 * observed_back[c * scene_size + v] and the backprojection of `images` by
 * `matrix` (num_channel * scene_size rows, row c * scene_size + v), in one
 * pass: each row summed as spart_cuda_csr_product sums it, so the result
 * is that product followed by spart_mart_device_update, bit for bit,
 * without the backprojection in memory. The matrix must have no long rows
 * (num_long_rows == 0). `index` is the matrix's short-row index or NULL:
 * with group size 1, at most 4 channels and a scene size that is a
 * multiple of SPART_DEVICE_SHORT_ROW_BLOCK, the rows are found through it
 * (1 byte a row read instead of 8; the same bits). With `stop` (device
 * memory, or NULL) nonzero when the kernel runs, it changes nothing (a
 * stopped batched MART run). */
int spart_cuda_mart_backproject_update(const spart_device_csr *matrix, const double *images,
                                       const double *observed_back, double *scene,
                                       int64_t num_channel, int64_t scene_size, double gamma,
                                       const spart_device_short_rows *index, const int *stop,
                                       void *stream);
/* The same for `num_frames` frames in one launch (spart_mart_update_from_
 * images_frames): frame f's images at f * matrix->num_columns, its
 * observed_back at f * num_channel * scene_size, its scene at f *
 * scene_size, its stop flag at stops + f * stop_stride (ints; stops NULL:
 * none); each frame the operations of a launch for it alone. Two frames
 * or more are taken 4 at a time by each voxel's group, so that the
 * matrix is read once for every 4 frames (the index is not used then);
 * _apart gives each frame its own pass (blockIdx.y a frame: the matrix
 * read once a frame), as one frame takes. The same bits either way. */
int spart_cuda_mart_backproject_update_frames_apart(
    const spart_device_csr *matrix, const double *images, const double *observed_back,
    double *scenes, int64_t num_frames, int64_t num_channel, int64_t scene_size, double gamma,
    const spart_device_short_rows *index, const int *stops, int64_t stop_stride, void *stream);
int spart_cuda_mart_backproject_update_frames(const spart_device_csr *matrix, const double *images,
                                              const double *observed_back, double *scenes,
                                              int64_t num_frames, int64_t num_channel,
                                              int64_t scene_size, double gamma,
                                              const spart_device_short_rows *index,
                                              const int *stops, int64_t stop_stride, void *stream);

/* ---- assembly and the exact transpose (kernels/csr_assemble.cu) ------------------ */

/* The short-row index of a matrix (see spart_device_csr) from its row
 * pointers: row_lengths (num_rows rounded up to whole blocks of
 * SPART_DEVICE_SHORT_ROW_BLOCK bytes) and block_starts (one per block).
 * flags holds SPART_DEVICE_SHORT_ROW_FLAGS ints of workspace; the last one
 * ends 1 when some row holds more than 255 entries (the index is then
 * wrong and must not be used), else 0. num_rows > 0. */
int spart_cuda_short_rows_index(const int64_t *row_ptr, int64_t num_rows, uint8_t *row_lengths,
                                int64_t *block_starts, int *flags, void *stream);

/* The weights' entries in device memory, laid out as spart_assembly_source
 * (src/operator/regridder_internal.h) describes them: entry k of element e lands in
 * row row_offset[e] + row_lookup[indices_output[k]] (or indices_output[k]
 * * row_lookup_stride when row_lookup is NULL) and in the column found the
 * same way from indices_input[k]. */
typedef struct spart_device_assembly_source {
    int64_t num_elements;
    int64_t num_entries;    /* offsets[num_elements] */
    const int64_t *offsets; /* num_elements + 1 */
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
    const int64_t *row_offset;    /* num_elements */
    const int64_t *column_offset; /* num_elements */
    const int64_t *row_lookup;
    const int64_t *column_lookup;
    int64_t row_lookup_stride;
    int64_t column_lookup_stride;
    int drop_zeros; /* nonzero: entries whose value is exactly 0 are left out */
} spart_device_assembly_source;

/* The arrays a build writes, in device memory: row_ptr, and exactly one of
 * columns32 / columns64 and one of values64 / values32. */
typedef struct spart_device_csr_arrays {
    int64_t *row_ptr;
    int32_t *columns32;
    int64_t *columns64;
    double *values64;
    float *values32;
} spart_device_csr_arrays;

/* A stable sort of the positions 0 .. num_items - 1 by keys in [0,
 * key_limit] (CUB's radix sort on bits [0, end_bit) of the keys): equal
 * keys keep their positions in ascending order, so the sorted positions
 * are the order of a stable counting sort, whatever the launch. Keys and
 * positions are 32-bit where they fit, 64-bit otherwise. The workspace
 * holds both in double buffers and CUB's scratch. */
typedef struct spart_device_sort {
    int64_t num_items;
    int64_t key_limit;
    int end_bit;
    int wide_keys;          /* 64-bit keys (else 32-bit) */
    int wide_positions;     /* 64-bit positions (else 32-bit) */
    size_t key_bytes;       /* each of the two key buffers, rounded up to 256 */
    size_t position_bytes;  /* each of the two position buffers, likewise */
    size_t cub_bytes;       /* CUB's scratch */
    size_t workspace_bytes; /* all of it: allocate this much and set workspace */
    void *workspace;
    const void *sorted_keys;      /* after a sort: where the sorted keys are */
    const void *sorted_positions; /* and the positions in their order */
} spart_device_sort;

/* Plan a sort (widths, bits, workspace bytes). `wide` nonzero asks for
 * 64-bit keys and positions whatever the sizes (the path of very large
 * operators, so that it can be tested on small ones). */
int spart_cuda_sort_plan(int64_t num_items, int64_t key_limit, int wide, spart_device_sort *sort);

/* Assembly, first half: each entry's row (num_rows for an entry dropped as
 * zero) sorted stably with the entry's position; row_ptr (num_rows + 1)
 * from the sorted rows, or, row_ptr NULL, only the sort (the streamed
 * assembly's blocks, kernels/csr_assemble_stream.cu, which read the sorted
 * rows and positions from sort->sorted_keys and sorted_positions). The
 * sort was planned for source->num_entries items and key_limit num_rows. */
int spart_cuda_assemble_sort(const spart_device_assembly_source *source, int64_t num_rows,
                             spart_device_sort *sort, int64_t *row_ptr, void *stream);

/* Assembly, second half: slot s of the matrix gets the column and the
 * value (converted to float for values32) of the entry sorted to s. */
int spart_cuda_assemble_place(const spart_device_assembly_source *source,
                              const spart_device_sort *sort, int64_t num_entries,
                              const spart_device_csr_arrays *csr, void *stream);

/* The exact transpose, first half: each entry's column sorted stably with
 * its position (the sort planned for num_entries items, key_limit
 * num_columns); the transpose's row_ptr (num_columns + 1). */
int spart_cuda_transpose_sort(const spart_device_csr *matrix, spart_device_sort *sort,
                              int64_t *row_ptr, void *stream);

/* The exact transpose, second half: slot s gets the row and the value of
 * the entry sorted to s (transposed->row_ptr is not touched). */
int spart_cuda_transpose_place(const spart_device_csr *matrix, const spart_device_sort *sort,
                               const spart_device_csr_arrays *transposed, void *stream);

/* The long-row table of a matrix in device memory (the layout of
 * spart_regridder_device's long_table), in two steps around a copy of two
 * numbers to the host: spart_cuda_long_rows_count leaves the number of
 * long rows and of their chunks in the first two int64 of the workspace
 * (of spart_cuda_long_rows_workspace bytes); spart_cuda_long_rows_fill
 * then writes the table (2 * rows + 1 + 2 * chunks int64). */
int spart_cuda_long_rows_workspace(int64_t num_rows, size_t *bytes);
int spart_cuda_long_rows_count(const int64_t *row_ptr, int64_t num_rows, int64_t chunk_length,
                               void *workspace, size_t workspace_bytes, void *stream);
int spart_cuda_long_rows_fill(const int64_t *row_ptr, int64_t num_rows, int64_t chunk_length,
                              const void *workspace, int64_t num_long_rows, int64_t num_long_chunks,
                              int64_t *table, void *stream);

/* ---- the conservative transpose's values (kernels/csr_transpose.cu) -------------- */

/* How a matrix index of one side of the forward operator splits into its
 * resampled cell (C order over the resampled axes) and the part of the
 * grid element index that this side holds: index / stride % extent per
 * axis, as the host's decode in src/operator/regridder_conservative.c. */
typedef struct spart_device_side_decoder {
    int num_resampled;
    int64_t resampled_extent[SPART_DEVICE_MAX_NDIM];
    int64_t resampled_stride[SPART_DEVICE_MAX_NDIM];
    int num_orthogonal; /* orthogonal axes whose element index this side holds */
    int64_t orthogonal_extent[SPART_DEVICE_MAX_NDIM];
    int64_t orthogonal_stride[SPART_DEVICE_MAX_NDIM];
    int64_t grid_stride[SPART_DEVICE_MAX_NDIM]; /* the axis's stride in the grid index */
} spart_device_side_decoder;

typedef struct spart_device_entry_decoder {
    spart_device_side_decoder input;  /* the forward's columns: the transpose's rows */
    spart_device_side_decoder output; /* the forward's rows: the transpose's columns */
    int64_t cells_input;              /* resampled cells of one grid element's input */
    int64_t cells_output;
} spart_device_entry_decoder;

/* The conservative transpose's values on the exact transpose's entries:
 * entry k, from forward column i (its row) and forward row o (its column),
 * becomes (v * factor_input[g * cells_input + cell(i)]) /
 * volume_output[g * cells_output + cell(o)], g the grid element of the
 * entry, as scale_entries on the host. Writes values64 or values32. */
int spart_cuda_conservative_values(const spart_device_csr *exact,
                                   const spart_device_entry_decoder *decoder,
                                   const double *factor_input, const double *volume_output,
                                   double *values64, float *values32, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_DEVICE_INTERNAL_H */
