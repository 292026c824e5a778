/*
 * src/weights/lattice_steps_math.h: the one test of a lattice's steps,
 * shared by the host's decision that an output grid is a uniform
 * axis-aligned lattice (spart_host_grid_is_lattice in
 * src/weights/weights_conservative_2d_clip.c) and the device's
 * (kernels/weights_check.cu, for grids already in device memory), so both
 * decide the same grids the same way.
 *
 * A step is a difference of two neighbouring vertices along the lattice's
 * axis; a lattice's steps are finite, the first is not zero, and every one
 * lies within SPART_LATTICE_RTOL of the first, as NumPy's
 * allclose(step, step[0], rtol=1e-10, atol=0) decides (the reference's
 * test). Only -, *, fabs and comparisons: no rounding choice for either
 * compiler to make (host -ffp-contract=off, device --fmad=false).
 *
 * CUDA includes it with SPART_MATH_FUNCTION defined as
 * `static __host__ __device__ inline`, as src/core/exp_math.h.
 */
#ifndef SPART_LATTICE_STEPS_MATH_H
#define SPART_LATTICE_STEPS_MATH_H

#include <math.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

/* The lattice's relative tolerance on its steps, as the reference's. */
#define SPART_LATTICE_RTOL 1e-10

/* Whether `step` may follow `step_first` in a lattice (both finite, the
 * first not zero: the caller tests those). */
SPART_MATH_FUNCTION int spart_lattice_step_fits(double step, double step_first)
{
    return fabs(step - step_first) <= 0 + SPART_LATTICE_RTOL * fabs(step_first);
}

#endif /* SPART_LATTICE_STEPS_MATH_H */
