/*
 * src/operator/operator_ops_cuda.c: the CUDA device's table of operations
 * (operator_ops.h), over the CUDA glue of the files of src/operator named *_cuda.c: the
 * arrays of a regridder made with it are memory of
 * regridder->device.cuda_device, and its work is queued on the context's
 * stream. Built with CUDA only; src/device/no_cuda.c stands for it without.
 */
#include "operator/regridder_cuda.h"

static spart_status cuda_assemble(spart_context *context, const spart_assembly_source *source,
                                  int64_t cells_input, int64_t cells_output,
                                  spart_value_type value_type, spart_regridder *regridder)
{
    return spart_device_csr_assemble(context, source, cells_input, cells_output, value_type, NULL,
                                     regridder);
}

/* The assembly and the transposes made the plan's index on the device. */
static void cuda_index_rows(spart_regridder *regridder, int threads)
{
    (void)regridder, (void)threads;
}

static spart_status cuda_transpose(spart_context *context, const spart_regridder *regridder,
                                   spart_regridder *transposed)
{
    return spart_device_csr_transpose(context, regridder, 0, transposed);
}

static spart_status cuda_conservative(spart_context *context, const spart_regridder *exact,
                                      const spart_conservative_scaling *scaling,
                                      spart_regridder *conservative)
{
    const spart_conservative_decoder *d = scaling->decoder;
    return spart_device_transpose_conservative(
        context, exact, d->source, d->grid_stride, scaling->num_grids, d->cells_input,
        d->cells_output, scaling->factor_input, scaling->volume_output, conservative);
}

static size_t cuda_workspace_bytes(const spart_regridder *regridder, int64_t num_leading,
                                   int64_t num_vectors, int threads)
{
    (void)num_leading, (void)threads;
    return spart_device_workspace_bytes(regridder, num_vectors);
}

static const spart_operator_ops cuda_ops = {
    .name = "CUDA device",
    .on_device = 1,
    .assemble = cuda_assemble,
    .index_rows = cuda_index_rows,
    .transpose = cuda_transpose,
    .conservative = cuda_conservative,
    .workspace_bytes = cuda_workspace_bytes,
    .product = spart_device_product,
    .workspace_allocate = spart_device_workspace_allocate,
    .workspace_free = spart_device_workspace_free,
    .release = spart_regridder_release_on_device,
};

const spart_operator_ops *spart_operator_cuda_ops(void)
{
    return &cuda_ops;
}
