/*
 * src/operator/regridder_internal.h: the layout of a regridder: its CSR matrix, the
 * plan of its product, and how the axes of x and y map onto the matrix's
 * columns and rows and onto the batch of vectors.
 */
#ifndef SPART_REGRIDDER_INTERNAL_H
#define SPART_REGRIDDER_INTERNAL_H

#include "core/internal.h"
#include "spart/regridder.h"

/* A CSR matrix. Exactly one of columns32 / columns64 is set, and exactly
 * one of values64 / values32. */
typedef struct spart_csr {
    int64_t num_rows;
    int64_t num_columns;
    int64_t num_entries;
    int64_t *row_ptr;
    int32_t *columns32;
    int64_t *columns64;
    double *values64;
    float *values32;
} spart_csr;

/* Rows per block of a short-row index (below). */
#define SPART_SHORT_ROW_BLOCK 256

/* The fixed summation order of a product, chosen from the matrix alone,
 * and, for a host matrix of short rows, a compact index of its rows that
 * the vector kernels read instead of row_ptr (1 byte per row instead of
 * 8: a backprojection's rows hold a few entries, so row_ptr is a fifth of
 * what its product reads). row_lengths[r] = row_ptr[r + 1] - row_ptr[r];
 * block_starts[b] = row_ptr[b * SPART_SHORT_ROW_BLOCK]. Both NULL when
 * there is no index; they point into the regridder's own arrays
 * (spart_regridder_index_short_rows). */
/* The rules that set a row's group size g (the plan's rule; saved in
 * operator files as PLANRULE, absent for the first):
 *   SPART_PLAN_MEAN: one g for every row, from the matrix's mean row
 *     length (spart_plan_product): regridders made from weights, and
 *     files without PLANRULE;
 *   SPART_PLAN_BY_ROW: each row its own g from its own length
 *     (spart_row_group_size), long rows' chunks 32: CSR matrices
 *     (spart/csr_matrix.h). group_size is then 32, the most any row
 *     takes (the host's scratch), and no short-row index is made. */
enum { SPART_PLAN_MEAN = 0, SPART_PLAN_BY_ROW = 1 };

/* A row's g under SPART_PLAN_BY_ROW: doubled from 1 while the row holds
 * 2g entries or more, at most 32 (the mean rule's, for one row). */
static inline int spart_row_group_size(int64_t length)
{
    int g = 1;
    while (g < 32 && 2 * (int64_t)g <= length) {
        g *= 2;
    }
    return g;
}

typedef struct spart_product_plan {
    int row_rule;         /* SPART_PLAN_MEAN or SPART_PLAN_BY_ROW */
    int group_size;       /* lanes per row: a power of two, 1 to 32 */
    int64_t chunk_length; /* entries per chunk of a row */
    const uint8_t *row_lengths;
    const int64_t *block_starts;
    /* The host product's order of work, not of sums: the rows form this
     * many equal stripes (elements applied to the same input), whose
     * blocks of rows the threads take side by side (1: rows in order). */
    int64_t row_stripes;
} spart_product_plan;

/* How one side's values map to the matrix: each axis of the values' shape
 * is a matrix axis (stride into the row or column index) or a batch axis
 * (stride into the batch index). */
typedef struct spart_axis_map {
    spart_shape shape;
    int64_t matrix_stride[SPART_MAX_NDIM]; /* 0 on batch axes */
    int64_t batch_stride[SPART_MAX_NDIM];  /* 0 on matrix axes */
    int is_batch[SPART_MAX_NDIM];
    int64_t num_batch; /* the product of the batch axes' extents */
} spart_axis_map;

/* The roles of the orthogonal axes: how the values' axes relate to the
 * weights' (kept for the conservative transpose). */
typedef struct spart_regridder_roles {
    spart_shape shape_input;
    spart_shape shape_output;
    int axes_input[SPART_MAX_NDIM]; /* resampled, >= 0, ascending */
    int axes_output[SPART_MAX_NDIM];
    int num_resampled_input;
    int num_resampled_output;
    int num_orthogonal;
    int orthogonal_input[SPART_MAX_NDIM]; /* axis of shape_input of orthogonal axis k */
    int orthogonal_output[SPART_MAX_NDIM];
    int64_t weights_extent[SPART_MAX_NDIM]; /* nw of orthogonal axis k */
} spart_regridder_roles;

/* The axes of `shape` that are not among the `count` resampled ones, in
 * order, into `axes`; returns how many (src/operator/regridder.c). */
int spart_list_orthogonal_axes(const spart_shape *shape, const int *resampled, int count,
                               int *axes);

/* The plan's row_stripes for an operator of these roles and output axes:
 * the leading output axes along which a shared input is applied again
 * (src/operator/regridder.c). Derived from the roles, so a regridder that has its
 * roles (made from weights, or loaded with them) gets the same stripes. */
int64_t spart_regridder_row_stripes(const spart_regridder_roles *layout,
                                    const spart_axis_map *output);

/* Bins of rows a device product under SPART_PLAN_BY_ROW sums apart
 * (csr_product_by_row.h). */
#define SPART_ROW_BINS 8

/* A device regridder's arrays besides its CSR matrix. Its CSR arrays, and
 * the table of its long rows (rows of more than one chunk, which the
 * device product sums chunk by chunk in a pass of their own), are CUDA
 * device memory of cuda_device; the table is one allocation, long_table,
 * into which the other pointers point. A host regridder has all zeros;
 * where a regridder lives is its table of operations (operator_ops.h). */
typedef struct spart_regridder_device {
    int cuda_device;
    int64_t num_long_rows;
    int64_t num_long_chunks;
    int64_t *long_table;
    int64_t *long_rows;        /* num_long_rows row indices, ascending */
    int64_t *long_first_chunk; /* num_long_rows + 1: each long row's first chunk */
    int64_t *chunk_begin;      /* num_long_chunks: each chunk's first entry */
    int64_t *chunk_end;        /* and one past its last */
    /* The device short-row index (spart_device_short_rows in
     * src/device/device_internal.h), made on the device where the matrix
     * qualifies (g <= 2, no row longer than 255 entries), else NULL; owned
     * with the pattern, like the long-row table. */
    uint8_t *short_row_lengths;
    int64_t *short_row_starts;
    /* SPART_PLAN_BY_ROW: the rows by their group size (the bins of
     * kernels/csr_product_by_row.cu: row indices, ascending within a
     * bin), one allocation owned with the pattern, and where each bin
     * starts in it (bin_start[SPART_ROW_BINS] = num_rows). */
    int32_t *bin_rows;
    int64_t bin_start[SPART_ROW_BINS + 1];
    /* SPART_PLAN_BY_ROW: the g every row has when all rows have one (and
     * the long rows' chunks, 32, are that g too), else 0. Such a matrix's
     * order is the mean rule's with that g, so the mean rule's kernels
     * (rows a thread, x in tiles, ...) sum it, bit for bit the same. */
    int uniform_group;
} spart_regridder_device;

struct spart_operator_ops;

struct spart_regridder {
    spart_allocator allocator;
    const struct spart_operator_ops *ops; /* host or device: operator_ops.h */
    spart_axis_map input;                 /* x's axes (without leading ones) */
    spart_axis_map output;                /* y's axes */
    spart_csr csr;
    spart_product_plan plan;
    spart_regridder_roles roles;
    int owns_arrays;               /* 0: row_ptr and columns belong to another regridder */
    spart_regridder *owner;        /* the regridder owning this one, or NULL */
    spart_regridder *transposed;   /* the exact transpose, once built */
    spart_regridder *conservative; /* the conservative transpose, once built */
    int has_roles;                 /* roles known (made from weights, not loaded) */
    spart_regridder_device device; /* a device regridder's device and tables */
    uint8_t *short_row_lengths;    /* the plan's short-row index, owned with the arrays */
    int64_t *short_row_starts;
};

/* ---- where a regridder lives (src/operator/operator_ops.c) ---------------- */

/* SPART_OK for a regridder in host memory; for a device regridder
 * SPART_ERROR_NOT_IMPLEMENTED with a sentence saying that `what` needs the
 * regridder on the host (spart_regridder_to_host). */
spart_status spart_require_host(spart_context *context, const spart_regridder *regridder,
                                const char *what);

/* spart_regridder_apply_workspace, told whether the workspace is one the
 * library allocated itself (workspace_is_ours: a device workspace then
 * needs no pointer check, and cannot have one while the stream is recorded
 * into a CUDA graph, where cudaMallocAsync gives a graph memory node that
 * cudaPointerGetAttributes does not know yet). */
spart_status spart_regridder_apply_checked(spart_context *context, const spart_regridder *regridder,
                                           const spart_array *x, double *y, int64_t size_y,
                                           void *workspace, size_t workspace_bytes,
                                           int workspace_is_ours);

/* What the conservative transpose needs to find the grid element of an
 * entry of the exact transpose from its row and column
 * (src/operator/regridder_conservative.c): per orthogonal axis, where its
 * index comes from (FROM_COLUMN, FROM_ROW or FROM_NOWHERE there) and its
 * stride in the grid element index. */
typedef struct spart_conservative_decoder {
    const spart_regridder_roles *roles;
    const spart_axis_map *input;  /* the forward operator's input (columns) */
    const spart_axis_map *output; /* its output (rows) */
    int source[SPART_MAX_NDIM];
    int64_t grid_stride[SPART_MAX_NDIM];
    int64_t cells_input;
    int64_t cells_output;
} spart_conservative_decoder;

/* The host's conservative values: scale each entry of the exact transpose
 * `exact` by its element's grid factors into `conservative`'s values
 * (src/operator/regridder_conservative.c). */
void spart_conservative_scale_entries(const spart_conservative_decoder *decoder,
                                      const spart_csr *exact, const double *factor_input,
                                      const double *volume_output, int threads,
                                      spart_csr *conservative);

/* The plan for a matrix: the group size from the mean row length (no
 * short-row index). */
spart_product_plan spart_plan_product(const spart_csr *csr);

/* The plan of `rule` for a matrix (SPART_PLAN_MEAN: spart_plan_product). */
spart_product_plan spart_plan_product_by_rule(const spart_csr *csr, int rule);

/* Give a host regridder that owns its arrays, with g <= 2 and no row
 * longer than 255 entries (a backprojection's), the short-row index of
 * its plan. Optional: without memory for it, or for other matrices, the
 * plan stays without one (the products give the same values either way). */
void spart_regridder_index_short_rows(spart_regridder *regridder, int threads);

/* Free a CSR matrix's arrays and zero it. */
void spart_csr_release(const spart_allocator *allocator, spart_csr *csr);

/* Where a batched product writes Y: vector t's value of row r goes to
 * y[r * row_stride + t * vector_stride]. Interleaved vectors, as X is
 * packed: row_stride = T, vector_stride = 1; vectors one after another, as
 * leading axes lay them out: row_stride = 1, vector_stride = the number
 * of rows (the kernels then write the caller's y, and no unpacking pass is
 * needed). */
typedef struct spart_batch_layout {
    int64_t row_stride;
    int64_t vector_stride;
} spart_batch_layout;

/* Y = A X for X of num_vectors interleaved columns (X[c * num_vectors +
 * t]), in the plan's order, with `threads` OpenMP threads; Y laid out as
 * `layout` says (one vector: y as it lies, layout unused and may be NULL).
 * scratch holds spart_host_csr_product_scratch(plan, num_vectors) doubles
 * per thread. */
void spart_host_csr_product(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                            int64_t num_vectors, double *y, const spart_batch_layout *layout,
                            int threads, double *scratch);
size_t spart_host_csr_product_scratch(const spart_product_plan *plan, int64_t num_vectors);

/* Pack 8 vectors laid one after another (x[t * columns + c]) into
 * interleaved ones (packed[c * 8 + t]) with AVX-512, `threads` OpenMP
 * threads (host/batch_pack_simd.c). packed must be 64-byte aligned.
 * Returns 1 when done, 0 (nothing written) where this processor or
 * build has no AVX-512 or packed is not aligned. */
int spart_host_pack_eight(const double *x, int64_t columns, double *packed, int threads);

/* The vector instructions of host/csr_product_simd.c's kernels that this
 * processor has (x86-64 only). */
typedef enum spart_simd_level {
    SPART_SIMD_NONE = 0,  /* the C kernel of host/csr_product.c */
    SPART_SIMD_AVX2 = 1,  /* AVX2 and FMA */
    SPART_SIMD_AVX512 = 2 /* AVX-512 (F, VL) besides */
} spart_simd_level;
spart_simd_level spart_host_simd_level(void);

/* The level of the kernel one vector's product runs: the processor's for
 * a matrix with float64 values and int32 columns, else none. */
spart_simd_level spart_host_csr_simd_level(const spart_csr *csr, const spart_product_plan *plan);

/* The kernels of host/csr_product_simd.c for batches: rows [row_begin,
 * row_end) of Y = A X for num_vectors = 4 or 8 interleaved vectors
 * (X[column * num_vectors + t]), row r's values written where `layout`
 * puts row r - row_begin of y_rows, level AVX2 or AVX512, a matrix with
 * float64 values and int32 columns: bit for bit as the C kernel. */
void spart_host_csr_rows_simd_batch(const spart_csr *csr, const spart_product_plan *plan,
                                    const double *x, int64_t num_vectors, double *y_rows,
                                    const spart_batch_layout *layout, int64_t row_begin,
                                    int64_t row_end, spart_simd_level level);

/* Rows [row_begin, row_end) of y = A x for one vector, on the calling
 * thread, into y_rows[0 .. row_end - row_begin), in the plan's order: the
 * same values as spart_host_csr_product gives those rows. level:
 * spart_host_csr_simd_level(csr, plan), asked once. */
void spart_host_csr_product_rows(const spart_csr *csr, const spart_product_plan *plan,
                                 const double *x, double *y_rows, int64_t row_begin,
                                 int64_t row_end, spart_simd_level level);

/* The kernels of host/csr_product_simd.c: spart_host_csr_product_rows for
 * level AVX2 or AVX512 (a matrix with float64 values and int32 columns),
 * bit for bit as the C kernel. */
void spart_host_csr_rows_simd(const spart_csr *csr, const spart_product_plan *plan, const double *x,
                              double *y_rows, int64_t row_begin, int64_t row_end,
                              spart_simd_level level);

/* The exact transpose of a CSR matrix by a stable counting sort on the
 * columns: row r of the result holds column r's entries in row order.
 * Returns SPART_OK or SPART_ERROR_OUT_OF_MEMORY (result zeroed then). */
spart_status spart_host_csr_transpose(const spart_allocator *allocator, const spart_csr *csr,
                                      int threads, spart_csr *transposed);

/* Where assembly reads its entries: the weights' concatenated arrays, and
 * for each element and cell the row and column it lands in:
 * row = row_offset[element] + row_lookup[indices_output[k]],
 * column = column_offset[element] + column_lookup[indices_input[k]].
 * A lookup left NULL is affine: cell * its stride (the resampled axes form
 * one dense block of the matrix index, the usual case), so no table as
 * large as the grid is needed. */
/* Entry arrays that already live in device memory of the assembling
 * regridder's device. A device assembly reads them in place. Unless
 * `borrowed` is set they were allocated stream-ordered (cudaMallocAsync)
 * on the stream the assembly runs on, and the assembly takes them over: it
 * sets each pointer here to NULL and frees the array when it no longer
 * needs it; whatever is still set after a failure that came before the
 * assembly is the caller's to free. With `borrowed` set they are the
 * caller's (a user's arrays): the assembly only reads them, and neither
 * frees nor forgets them. */
typedef struct spart_device_entries {
    int64_t *indices_input;
    int64_t *indices_output;
    double *values;
    int borrowed;
} spart_device_entries;

typedef struct spart_assembly_source {
    int64_t num_elements;
    const int64_t *offsets;
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
    const int64_t *row_offset;
    const int64_t *column_offset;
    const int64_t *row_lookup;
    const int64_t *column_lookup;
    int64_t row_lookup_stride;
    int64_t column_lookup_stride;
    int drop_zeros;
    /* NULL: indices_input, indices_output and values are host memory.
     * Otherwise those three are ignored and the entries are these device
     * arrays (device assembly only). */
    spart_device_entries *device_entries;
} spart_assembly_source;

/* Assemble the CSR matrix of num_rows x num_columns by a stable counting
 * sort of the source's entries on their rows. Columns are int32 when
 * num_columns < 2^31, values float when value_type is SPART_FLOAT32.
 * Returns SPART_OK or SPART_ERROR_OUT_OF_MEMORY (csr zeroed then). */
spart_status spart_host_csr_assemble(const spart_allocator *allocator,
                                     const spart_assembly_source *source, int64_t num_rows,
                                     int64_t num_columns, spart_value_type value_type, int threads,
                                     spart_csr *csr);

/* An assembly that replaces the table's (src/operator/regridder_stream.c):
 * fill regridder->csr (num_rows and num_columns set) from the tables of
 * `tables`, whose entry arrays are NULL (the step brings its own entries),
 * cells_input and cells_output being the weights' cell counts. The device
 * steps also make the plan's device tables, as the table's assembly does. */
typedef struct spart_assembly_step {
    spart_status (*function)(spart_context *context, const spart_assembly_source *tables,
                             int64_t cells_input, int64_t cells_output, spart_value_type value_type,
                             spart_regridder *regridder, void *argument);
    void *argument;
} spart_assembly_step;

/* spart_regridder_create_on for weights `shell` whose entries the step
 * brings (the shell's shapes, axes and elements; its own entries are not
 * read): the roles, layout and axis maps of spart_regridder_create, then
 * the step, then the plan (src/operator/regridder.c). */
spart_status spart_regridder_create_by_step(spart_context *context, const spart_weights *shell,
                                            const spart_regridder_options *options, int cuda_device,
                                            const spart_assembly_step *step,
                                            spart_regridder **regridder);

#endif /* SPART_REGRIDDER_INTERNAL_H */
