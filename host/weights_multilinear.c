/* host/weights_multilinear.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
spart_status spart_host_weights_multilinear(int ndim, const int64_t *shape,
                                            const double *const *coordinates_input,
                                            int64_t num_points, const double *const *points,
                                            const double *weights_input, spart_bounds bounds,
                                            int parallel, spart_triples *triples,
                                            int64_t *num_outside)
{
    (void)ndim; (void)shape; (void)coordinates_input; (void)num_points; (void)points;
    (void)weights_input; (void)bounds; (void)parallel; (void)triples; *num_outside = 0;
    return SPART_ERROR_NOT_IMPLEMENTED;
}
