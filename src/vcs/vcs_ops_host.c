/*
 * src/vcs/vcs_ops_host.c: the host's table of VCS operations
 * (src/vcs/vcs_internal.h): the product of host/vcs_product.c over the
 * host groupings, and the release of the host arrays.
 */
#include <string.h>

#include "vcs/vcs_internal.h"

spart_vcs_kernel_grouping spart_vcs_host_grouping(const spart_vcs_data *data, int by)
{
    const spart_vcs_layout *layout = &data->groupings[by];
    spart_vcs_kernel_grouping g;
    memset(&g, 0, sizeof g);
    g.n_major = layout->n_major;
    g.n_minor = layout->n_minor;
    g.major_ptr = layout->major_ptr;
    g.value_ptr = layout->value_ptr;
    g.values = layout->values;
    g.indices = layout->indices;
    g.offset_bytes = 8;
    g.index_bytes = 4;
    g.group_size = layout->group_size;
    g.by_rows = by == SPART_VCS_BY_ROWS;
    g.minor_factor_is_one = data->minor_factor_is_one[by];
    return g;
}

spart_vcs_kernel_stats spart_vcs_host_stats(const spart_vcs_data *data)
{
    spart_vcs_kernel_stats s;
    s.row_factor = data->stats.row_factor;
    s.col_factor = data->stats.col_factor;
    /* NULL: every s_j is 1 (a recipe that does not scale), not loaded */
    s.scale = spart_vcs_recipe_scales(data->recipe) ? data->stats.scale : NULL;
    s.offset = data->stats.offset;
    s.g_code = data->stats.g_code;
    s.has_offset = data->stats.has_offset;
    return s;
}

/* The product's scratch, then for transposed operands (B @ A) X and Z in
 * C order (8 bytes an element), so that the walk reads rows of X. */
static size_t host_workspace_bytes(const spart_context *context, const spart_vcs_data *data, int by,
                                   int64_t width, int transposed_operands)
{
    spart_vcs_kernel_grouping g = spart_vcs_host_grouping(data, by);
    size_t doubles = (size_t)spart_vcs_host_scratch_doubles(&g, width, spart_threads(context));
    if (transposed_operands) {
        doubles += (size_t)(g.n_major + g.n_minor) * (size_t)width;
    }
    return doubles * sizeof(double);
}

/* dst (cols x rows) = the transpose of src (rows x cols), elements of
 * `element` bytes, in blocks of 32 x 32. */
static void transpose(const void *src, void *dst, int64_t rows, int64_t cols, size_t element,
                      int threads)
{
    const int64_t blocks_r = (rows + 31) / 32, blocks_c = (cols + 31) / 32;
#pragma omp parallel for num_threads(threads) schedule(static) if (rows * cols > 65536)
    for (int64_t block = 0; block < blocks_r * blocks_c; block++) {
        const int64_t r0 = (block / blocks_c) * 32, c0 = (block % blocks_c) * 32;
        for (int64_t r = r0; r < r0 + 32 && r < rows; r++) {
            for (int64_t c = c0; c < c0 + 32 && c < cols; c++) {
                memcpy((char *)dst + (size_t)(c * rows + r) * element,
                       (const char *)src + (size_t)(r * cols + c) * element, element);
            }
        }
    }
}

static spart_status host_multiply(spart_context *context, const spart_vcs_data *data, int by,
                                  const spart_vcs_kernel_product *product, int transposed_operands,
                                  void *workspace, size_t workspace_bytes)
{
    const size_t need =
        host_workspace_bytes(context, data, by, product->width, transposed_operands);
    void *scratch = workspace;
    if (scratch == NULL) {
        scratch = spart_alloc(&context->allocator, need / sizeof(double) + 1, sizeof(double));
        if (scratch == NULL) {
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY,
                              "VCS product: out of memory for %zu bytes of scratch", need);
        }
    } else if (workspace_bytes < need) {
        return spart_fail(context, SPART_ERROR_INVALID_ARGUMENT,
                          "VCS product: workspace_bytes = %zu is below the %zu needed",
                          workspace_bytes, need);
    }
    spart_vcs_kernel_grouping g = spart_vcs_host_grouping(data, by);
    spart_vcs_kernel_stats s = spart_vcs_host_stats(data);
    const int threads = spart_threads(context);
    double *lanes = (double *)scratch;
    if (transposed_operands) {
        /* B (width x n_minor) as X in C order; Z in C order, then out */
        const size_t element = product->is_float ? sizeof(float) : sizeof(double);
        const int64_t width = product->width;
        double *x_copy = lanes + spart_vcs_host_scratch_doubles(&g, width, threads);
        double *z_copy = x_copy + g.n_minor * width;
        transpose(product->x, x_copy, width, g.n_minor, element, threads);
        spart_vcs_kernel_product p = *product;
        p.x = x_copy;
        p.x_row_stride = width;
        p.x_col_stride = 1;
        p.z = z_copy;
        p.z_row_stride = width;
        p.z_col_stride = 1;
        spart_vcs_host_product(&g, &s, &p, lanes, threads);
        transpose(z_copy, product->z, g.n_major, width, element, threads);
    } else {
        spart_vcs_host_product(&g, &s, product, lanes, threads);
    }
    if (workspace == NULL) {
        spart_free(&context->allocator, scratch);
    }
    return SPART_OK;
}

static void host_release(spart_vcs_data *data)
{
    for (int by = 0; by < 2; by++) {
        spart_vcs_layout_free(&data->allocator, &data->groupings[by]);
    }
    spart_vcs_stats_free(&data->allocator, &data->stats);
}

const spart_vcs_ops spart_vcs_host_ops = {
    .where = "host",
    .workspace_bytes = host_workspace_bytes,
    .multiply = host_multiply,
    .release = host_release,
};
