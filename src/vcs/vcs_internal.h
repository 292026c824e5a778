/*
 * src/vcs/vcs_internal.h: the VCS matrix as the module's files share it:
 * the groupings (host arrays), the statistics, the data that views share,
 * and the table of operations that decides host or device (as
 * src/mart/mart_ops.h does for the MART steps): src/vcs/vcs_ops_host.c,
 * src/vcs/vcs_ops_cuda.c (built only with CUDA).
 */
#ifndef SPART_VCS_INTERNAL_H
#define SPART_VCS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "spart/vcs.h"
#include "vcs/vcs_kernels.h"

/* Index of a grouping in spart_vcs_data.groupings. */
#define SPART_VCS_BY_ROWS 0
#define SPART_VCS_BY_COLS 1

/* One grouping on the host: slice m owns runs major_ptr[m] ..
 * major_ptr[m + 1] - 1; run u has value values[u] and the minor indices
 * indices[value_ptr[u] .. value_ptr[u + 1] - 1], ascending. */
typedef struct spart_vcs_layout {
    int64_t n_major, n_minor, nnz, n_runs;
    int64_t *major_ptr;
    double *values;
    int64_t *value_ptr;
    int32_t *indices;
    int group_size; /* lanes a slice in the product's order */
} spart_vcs_layout;

/* The statistics (host arrays; a device matrix keeps copies on the device). */
typedef struct spart_vcs_stats {
    double *row_scale;  /* n_rows */
    double *gene_scale; /* n_cols */
    double *centre;     /* n_cols: c */
    double *scale;      /* n_cols: s */
    double *offset;     /* n_cols: o = -c s */
    double *row_factor; /* n_rows: a = 1 / row_scale (or as supplied) */
    double *col_factor; /* n_cols: b = 1 / gene_scale, 0 where gene_scale <= 0 (or as supplied) */
    int g_code;
    int has_offset;
} spart_vcs_stats;

struct spart_vcs_ops;

/* What the views of one matrix share. */
typedef struct spart_vcs_data {
    int views; /* views alive; the last one frees */
    spart_allocator allocator;
    const struct spart_vcs_ops *ops;
    int64_t n_rows, n_cols, nnz;
    spart_vcs_recipe recipe;
    spart_vcs_format format;
    int has_grouping[2];        /* which groupings it holds */
    int minor_factor_is_one[2]; /* by rows: gene_scale all 1; by columns: row_scale all 1 */
    int64_t n_runs[2];
    int group_size[2];
    spart_vcs_layout groupings[2]; /* host */
    spart_vcs_stats stats;         /* host */
    void *device;                  /* the CUDA table's arrays */
    int64_t device_bytes;
} spart_vcs_data;

struct spart_vcs {
    spart_vcs_data *data;
    int transposed;
};

typedef struct spart_vcs_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    /* Bytes of scratch for a product over grouping `by` (SPART_VCS_BY_ROWS
     * or _COLS) of `width`, X and Z in C order (0) or transposed (1). */
    size_t (*workspace_bytes)(const spart_context *context, const spart_vcs_data *data, int by,
                              int64_t width, int transposed_operands);
    /* The product: pointers checked for the location, the work done. */
    spart_status (*multiply)(spart_context *context, const spart_vcs_data *data, int by,
                             const spart_vcs_kernel_product *product, int transposed_operands,
                             void *workspace, size_t workspace_bytes);
    void (*release)(spart_vcs_data *data);
} spart_vcs_ops;

extern const spart_vcs_ops spart_vcs_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_vcs_ops spart_vcs_cuda_ops;
#endif

/* The kernel's view of a host grouping and of the host statistics. */
spart_vcs_kernel_grouping spart_vcs_host_grouping(const spart_vcs_data *data, int by);
spart_vcs_kernel_stats spart_vcs_host_stats(const spart_vcs_data *data);

/* ---- building (src/vcs/vcs_build.c) ---- */

/* Both groupings and the statistics of `recipe` from entries (row, col,
 * value), rows given by `rows` (nnz) or by `row_ptr` (n_rows + 1). */
spart_status spart_vcs_build(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                             const int64_t *rows, const int64_t *row_ptr, const int64_t *cols,
                             const double *values, spart_vcs_recipe recipe, spart_vcs_format format,
                             spart_vcs **vcs);

/* Group size g for a grouping: a power of two from 1 to 32 from the mean
 * slice length alone. */
int spart_vcs_group_size(int64_t nnz, int64_t n_major);

void spart_vcs_layout_free(const spart_allocator *allocator, spart_vcs_layout *layout);

/* ---- statistics (src/vcs/vcs_stats.c) ---- */

/* The recipe's statistics from both groupings, into data->stats
 * (allocated here); row_factor / col_factor (NULL: the recipe's) are
 * supplied a and b. Sets minor_factor_is_one. */
spart_status spart_vcs_compute_stats(spart_context *context, spart_vcs_data *data,
                                     const double *row_factor, const double *col_factor);
void spart_vcs_stats_free(const spart_allocator *allocator, spart_vcs_stats *stats);

/* The g code, whether the recipe centres and scales. */
int spart_vcs_recipe_g(spart_vcs_recipe recipe);
int spart_vcs_recipe_centres(spart_vcs_recipe recipe);
int spart_vcs_recipe_scales(spart_vcs_recipe recipe);

/* A new view of `data` (views + 1). */
spart_status spart_vcs_new_view(spart_context *context, spart_vcs_data *data, int transposed,
                                spart_vcs **view);

#if defined(SPART_HAVE_CUDA)
/* src/vcs/vcs_ops_cuda.c */
spart_status spart_vcs_cuda_upload(spart_context *context, const spart_vcs_data *host,
                                   int both_groupings, spart_vcs_data *device);
#endif

#endif /* SPART_VCS_INTERNAL_H */
