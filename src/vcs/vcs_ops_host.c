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
    s.row_scale = data->stats.row_scale;
    s.gene_scale = data->stats.gene_scale;
    s.scale = data->stats.scale;
    s.offset = data->stats.offset;
    s.g_code = data->stats.g_code;
    s.has_offset = data->stats.has_offset;
    return s;
}

static size_t host_workspace_bytes(const spart_context *context, const spart_vcs_data *data, int by,
                                   int64_t width, int transposed_operands)
{
    (void)transposed_operands;
    spart_vcs_kernel_grouping g = spart_vcs_host_grouping(data, by);
    return (size_t)spart_vcs_host_scratch_doubles(&g, width, spart_threads(context)) *
           sizeof(double);
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
    spart_vcs_host_product(&g, &s, product, (double *)scratch, spart_threads(context));
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
