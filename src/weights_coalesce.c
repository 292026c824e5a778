/* src/weights_coalesce.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
spart_status spart_weights_coalesce(spart_triples *triples)
{
    (void)triples;
    return SPART_ERROR_NOT_IMPLEMENTED;
}
