/* src/regrid.c: placeholder, being written. */
#include "weights_kernels.h"
#include "weights_internal.h"
