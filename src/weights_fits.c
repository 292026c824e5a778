/* src/weights_fits.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
