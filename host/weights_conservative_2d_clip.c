/* host/weights_conservative_2d_clip.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
int spart_host_grid_is_lattice(const double *x, const double *y, int64_t num_x, int64_t num_y)
{
    (void)x; (void)y; (void)num_x; (void)num_y;
    return 0;
}

spart_status spart_host_weights_conservative_2d_clip(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples)
{
    (void)x_input; (void)y_input; (void)num_x_input; (void)num_y_input; (void)x_output; (void)y_output;
    (void)num_x_output; (void)num_y_output; (void)weights_input; (void)parallel; (void)triples;
    return SPART_ERROR_NOT_IMPLEMENTED;
}
