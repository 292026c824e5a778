/*
 * src/operator/operator_ops.h: where an operator lives, decided once.
 *
 * A regridder carries a table of operations (as PETSc's Mat carries its
 * ops), chosen by spart_operator_ops_for when the regridder is made: the
 * host's (src/operator/regridder_host.c, OpenMP, arrays in host memory)
 * or the CUDA device's (src/operator/operator_ops_cuda.c, arrays in the
 * memory of regridder->device.cuda_device). Everything else in the
 * library calls through the table and never asks where memory lives;
 * the two implementations give the same bits (docs/architecture.md,
 * Determinism).
 *
 * Each operation receives arguments already checked by the common code
 * (src/operator/regridder*.c): shapes, sizes, NULL pointers, the
 * workspace's size. What remains for an implementation is what only it
 * can check (that pointers are memory of its device).
 */
#ifndef SPART_OPERATOR_OPS_H
#define SPART_OPERATOR_OPS_H

#include "operator/regridder_internal.h"

/* What the conservative transpose's values need besides the exact
 * transpose: where each entry's element comes from (the decoder of
 * src/operator/regridder_conservative.c) and the grid factors, one per
 * cell of each grid element. */
typedef struct spart_conservative_scaling {
    const spart_conservative_decoder *decoder;
    int64_t num_grids;
    const double *factor_input;  /* num_grids x decoder->cells_input */
    const double *volume_output; /* num_grids x decoder->cells_output */
} spart_conservative_scaling;

typedef struct spart_operator_ops {
    /* Where the arrays live, for sentences: "host" or "CUDA device". */
    const char *name;
    /* Nonzero for device memory (regridder->device.cuda_device). */
    int on_device;

    /* Fill regridder->csr (num_rows and num_columns set) from `source`
     * by the stable counting sort; cells_input and cells_output are the
     * weights' cell counts. Sets the error sentence on failure. */
    spart_status (*assemble)(spart_context *context, const spart_assembly_source *source,
                             int64_t cells_input, int64_t cells_output, spart_value_type value_type,
                             spart_regridder *regridder);
    /* Complete the plan of a regridder whose CSR arrays and plan are set
     * (the host's short-row index; on a device, assembly and transposes
     * already made theirs). */
    void (*index_rows)(spart_regridder *regridder, int threads);
    /* The exact transpose's CSR arrays into `transposed` (its sides set). */
    spart_status (*transpose)(spart_context *context, const spart_regridder *regridder,
                              spart_regridder *transposed);
    /* The values of a conservative transpose: `conservative` shares the
     * pattern of `exact` (the exact transpose of its owner, the forward
     * regridder) and has no values yet; allocate and scale them. On
     * failure, what was allocated is freed by `release`. */
    spart_status (*conservative)(spart_context *context, const spart_regridder *exact,
                                 const spart_conservative_scaling *scaling,
                                 spart_regridder *conservative);
    /* Bytes of workspace a product of num_vectors vectors (num_leading of
     * them from leading axes of x) needs with `threads` host threads. */
    size_t (*workspace_bytes)(const spart_regridder *regridder, int64_t num_leading,
                              int64_t num_vectors, int threads);
    /* y = A x for num_vectors >= 1, with a workspace of the size above
     * (workspace_is_ours: allocated by workspace_allocate, needs no check). */
    spart_status (*product)(spart_context *context, const spart_regridder *regridder,
                            const spart_array *x, double *y, int64_t size_y, int64_t num_leading,
                            int64_t num_vectors, void *workspace, int workspace_is_ours);
    /* Workspace where the product reads it (on a device: stream-ordered on
     * the context's stream, so it may be recorded in a CUDA graph). */
    spart_status (*workspace_allocate)(spart_context *context, const spart_regridder *regridder,
                                       size_t bytes, void **workspace);
    spart_status (*workspace_free)(spart_context *context, const spart_regridder *regridder,
                                   void *workspace);
    /* Free the regridder's arrays (not the struct). */
    void (*release)(spart_regridder *regridder);
} spart_operator_ops;

/* The host's table (src/operator/regridder_host.c). */
extern const spart_operator_ops spart_operator_host_ops;

/* The CUDA device's table (src/operator/operator_ops_cuda.c), or NULL in
 * a build without CUDA (src/device/no_cuda.c), where no device regridder
 * can be made. */
const spart_operator_ops *spart_operator_cuda_ops(void);

/* The one choice of host or device: the table for arrays on CUDA device
 * `cuda_device`, or on the host when it is negative. */
const spart_operator_ops *spart_operator_ops_for(int cuda_device);

#endif /* SPART_OPERATOR_OPS_H */
