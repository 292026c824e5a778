/*
 * src/operator/regridder_transpose.c: the exact transpose of a regridder, built
 * once by a stable counting sort of its entries on their columns and kept
 * by it. The transpose swaps the roles of the two sides (a shared input
 * becomes a sum and a sum a shared input) and its transpose is the
 * original object. A device regridder's transpose is built on its device
 * (src/operator/regridder_build_cuda.c), the same arrays.
 */
#include "operator/operator_ops.h"

spart_status spart_regridder_transpose(spart_context *context, spart_regridder *regridder,
                                       spart_regridder **transposed)
{
    if (context == NULL) {
        return spart_fail(NULL, SPART_ERROR_NULL_POINTER, "context is NULL");
    }
    spart_clear_error(context);
    if (regridder == NULL || transposed == NULL) {
        return spart_fail(context, SPART_ERROR_NULL_POINTER,
                          "regridder and transposed must not be NULL");
    }
    *transposed = NULL;
    if (regridder->transposed != NULL) {
        *transposed = regridder->transposed;
        return SPART_OK;
    }
    spart_regridder *made = spart_alloc_zero(&regridder->allocator, 1, sizeof *made);
    if (made == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "transpose: out of memory");
    }
    made->allocator = regridder->allocator;
    made->owns_arrays = 1;
    made->input = regridder->output;
    made->output = regridder->input;
    made->ops = regridder->ops;
    made->device.cuda_device = regridder->device.cuda_device;
    made->plan.row_rule = regridder->plan.row_rule; /* the transpose keeps the rule */
    spart_status status = regridder->ops->transpose(context, regridder, made);
    if (status != SPART_OK) {
        spart_free(&regridder->allocator, made);
        return status;
    }
    made->plan = spart_plan_product_by_rule(&made->csr, regridder->plan.row_rule);
    made->ops->index_rows(made, spart_threads(context));
    made->owner = regridder;
    made->transposed = regridder;
    regridder->transposed = made;
    *transposed = made;
    return SPART_OK;
}
