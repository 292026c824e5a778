/*
 * src/weights/weights_perturb.c: the perturbation of the output grid that
 * regridding applies when asked (perturb=True), with the same random
 * numbers: GSL's MT19937 and Gaussian draws, in the same order.
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "core/shape.h"
#include "weights/weights_build.h"
#include "weights/weights_internal.h"

/* The size of the perturbation, relative to each element's extent. */
#define PERTURB_EPSILON 1e-9

/* Jitter the output vertices as regridding's perturb=True does: each
 * coordinate array in turn (x, then y, ...), every vertex of the full
 * output shape in C order, c += ptp(c over the element's resampled axes) *
 * 1e-9 * N(0, 1), the normal draws from GSL's MT19937 seeded with `seed`.
 * Writes dense full-shape arrays into perturbed[c]. */
spart_status spart_weights_perturb_outputs(spart_context *context,
                                           const spart_weights_layout *layout,
                                           const spart_array *coordinates, uint64_t seed,
                                           double *const *perturbed)
{
    int64_t size = layout->size_output;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (rng == NULL) {
        return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "perturb: no random generator");
    }
    gsl_rng_set(rng, (unsigned long)seed);
    int64_t orthogonal_index[SPART_MAX_NDIM] = {0};
    int64_t full_index[SPART_MAX_NDIM] = {0};
    for (int c = 0; c < layout->num_coordinates; c++) {
        /* perturbed has num_coordinates <= 3 arrays */
        /* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
        if (perturbed[c] == NULL) {
            gsl_rng_free(rng);
            return spart_fail(context, SPART_ERROR_INTERNAL, "perturb: no array for coordinate %d",
                              c);
        }
        /* Lay the full array out densely, element by element. */
        for (int64_t e = 0; e < layout->num_elements; e++) {
            double *block = perturbed[c] + e * size;
            spart_unravel(e, &layout->shape_orthogonal, orthogonal_index);
            spart_gather_block(coordinates[c].data, layout->strides_output[c], &layout->full_output,
                               layout->resampled_output, layout->num_axes_output, orthogonal_index,
                               block);
        }
        /* The element-major blocks are not C order over the full shape when
         * resampled axes are not trailing; walk the full shape in C order
         * and find each vertex's element and place in its block. */
        int64_t total = spart_shape_size(&layout->full_output);
        double *scale =
            spart_alloc(&context->allocator, (size_t)layout->num_elements, sizeof(double));
        if (scale == NULL) {
            gsl_rng_free(rng);
            return spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "perturb: out of memory");
        }
        for (int64_t e = 0; e < layout->num_elements; e++) {
            const double *block = perturbed[c] + e * size;
            double low = INFINITY, high = -INFINITY;
            for (int64_t v = 0; v < size; v++) {
                low = block[v] < low ? block[v] : low;
                high = block[v] > high ? block[v] : high;
            }
            scale[e] = (high - low) * PERTURB_EPSILON;
        }
        for (int64_t flat = 0; flat < total; flat++) {
            spart_unravel(flat, &layout->full_output, full_index);
            int64_t element = 0, place = 0;
            int o = 0;
            for (int k = 0; k < layout->full_output.ndim; k++) {
                if (spart_axes_contain(layout->resampled_output, layout->num_axes_output, k)) {
                    place = place * layout->full_output.dims[k] + full_index[k];
                } else {
                    element = element * layout->shape_orthogonal.dims[o] + full_index[k];
                    o++;
                }
            }
            perturbed[c][element * size + place] += gsl_ran_gaussian_ziggurat(rng, scale[element]);
        }
        spart_free(&context->allocator, scale);
    }
    gsl_rng_free(rng);
    return SPART_OK;
}
