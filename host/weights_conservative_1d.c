/* host/weights_conservative_1d.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
spart_status spart_host_weights_conservative_1d(const double *x_input, int64_t num_input,
                                                const double *x_output, int64_t num_output,
                                                const double *weights_input,
                                                spart_triples *triples)
{
    (void)x_input; (void)num_input; (void)x_output; (void)num_output; (void)weights_input; (void)triples;
    return SPART_ERROR_NOT_IMPLEMENTED;
}
