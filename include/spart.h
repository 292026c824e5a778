/*
 * spart.h: the whole public API of spart. Include this, or the module
 * headers under spart/ one by one.
 */
#ifndef SPART_H
#define SPART_H

#include "spart/common.h"
#include "spart/weights.h"
#include "spart/regridder.h"
#include "spart/device.h"
#include "spart/device_memory.h"
#include "spart/mart_steps.h"
#include "spart/mart.h"
#include "spart/instrument.h"
#include "spart/scene.h"
#include "spart/psf.h"
/* The reusable sparse kernels. */
#include "spart/csr_matrix.h"
#include "spart/softmax.h"
#include "spart/vcs.h"
#include "spart/scoring.h"
#include "spart/permute.h"

#endif /* SPART_H */
