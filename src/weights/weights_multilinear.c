/*
 * src/weights/weights_multilinear.c: the weights that interpolate values sampled
 * on the vertices of a logically-rectangular grid of 1 to 3 axes at a set
 * of points, as regridding 3.6.0's weights(..., method="multilinear").
 *
 * Each point is found in a cell of the grid, given by its first corner and
 * the local coordinates xi of the point in the cell (the unit cube), and
 * each of the cell's 2^N corners gets the weight prod_m (xi_m or 1 - xi_m):
 * xi_m where bit m of the corner's number is set (the corner is one vertex
 * further along axis m), 1 - xi_m where it is not.
 *
 * Two locators, chosen as regridding chooses them:
 * - rectilinear: every coordinate varies along exactly one axis, a
 *   different one for each, strictly monotonically. A binary search per
 *   axis then gives the cell and xi exactly, and a point outside the grid
 *   is extrapolated from the edge cell along each axis on its own.
 * - curvilinear: anything else. A hierarchy of bounding boxes (level one:
 *   blocks of 2^N cells; each level above: blocks of 2^N blocks) is
 *   descended depth first, and in each cell whose box holds the point, the
 *   point's local coordinates are found by Newton's method on the
 *   multilinear map. The first cell where they are inside the unit cube
 *   (to 1e-9) holds the point. A point in no cell is extrapolated by
 *   Newton's method across the whole grid, with the edge cells continued
 *   beyond it, from the cell whose box is nearest; NaN where that fails.
 * Both are ports of regridding's numba functions (not fastmath) with the
 * same floating-point operations in the same order and the same search
 * order, so the results agree bit for bit: on rectilinear grids by
 * construction, on curvilinear ones on every grid tried (the promise there
 * is 1e-12).
 *
 * Here: the kernel and the rectilinear locator; the curvilinear locator is
 * in src/weights/weights_multilinear_curvilinear.c, Newton's method on a
 * cell in src/weights/weights_multilinear_newton.c.
 *
 * Memory: the profiles of a rectilinear grid or the boxes of a curvilinear
 * one come from the triples list's allocator and are freed before return.
 * Determinism: each point is independent and writes its own 2^N slots, so
 * the result is the same for any number of threads.
 */
#include <math.h>
#include <stdint.h>

#include "core/internal.h"
#include "weights/weights_kernels.h"
#include "weights/weights_multilinear.h"

static void grid_init(grid *g, int num_axes, const int64_t *shape, const double *const *vertices)
{
    g->num_axes = num_axes;
    g->num_corners = 1 << num_axes;
    for (int m = 0; m < MAX_AXES; m++) {
        g->vertices[m] = m < num_axes ? vertices[m] : NULL;
    }
    int64_t stride = 1;
    for (int m = num_axes - 1; m >= 0; m--) {
        g->shape[m] = shape[m];
        g->stride[m] = stride;
        stride *= shape[m];
    }
    for (int b = 0; b < g->num_corners; b++) {
        g->offset[b] = 0;
        for (int m = 0; m < num_axes; m++) {
            if ((b >> m) & 1) {
                g->offset[b] += g->stride[m];
            }
        }
    }
}

static int64_t grid_num_vertices(const grid *g)
{
    int64_t n = 1;
    for (int m = 0; m < g->num_axes; m++) {
        n *= g->shape[m];
    }
    return n;
}

/* ---- rectilinear grids ------------------------------------------------- */

typedef struct rectilinear {
    int coordinate[MAX_AXES];  /* which coordinate varies along axis m */
    int descending[MAX_AXES];  /* whether it decreases along axis m */
    double *profile[MAX_AXES]; /* its values along axis m, ascending */
} rectilinear;

static void rectilinear_release(rectilinear *r, const spart_allocator *allocator)
{
    for (int m = 0; m < MAX_AXES; m++) {
        spart_free(allocator, r->profile[m]);
        r->profile[m] = NULL;
    }
}

/* Whether coordinate array c differs anywhere from its value at index 0
 * along axis m (a NaN differs from everything, as with NumPy's !=). */
static int coordinate_varies_along(const grid *g, const double *c, int m)
{
    int64_t inner = g->stride[m]; /* vertices per step along m */
    int64_t outer = grid_num_vertices(g) / (inner * g->shape[m]);
    for (int64_t o = 0; o < outer; o++) {
        const double *first = c + o * g->shape[m] * inner; /* index 0 along m */
        for (int64_t along = 1; along < g->shape[m]; along++) {
            for (int64_t i = 0; i < inner; i++) {
                if (first[along * inner + i] != first[i]) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Whether the grid is rectilinear as regridding's _rectilinear.profiles
 * decides: each coordinate varies along exactly one axis, no two along the
 * same, strictly monotonically. Fills `r` (profiles allocated) when it is.
 * 1: rectilinear, 0: not, -1: out of memory. */
static int rectilinear_profiles(const grid *g, const spart_allocator *allocator, rectilinear *r)
{
    int n_axes = g->num_axes;
    for (int m = 0; m < MAX_AXES; m++) {
        r->coordinate[m] = -1;
        r->descending[m] = 0;
        r->profile[m] = NULL;
    }
    for (int k = 0; k < n_axes; k++) {
        int num_varies = 0;
        int axis = -1;
        for (int m = 0; m < n_axes; m++) {
            if (coordinate_varies_along(g, g->vertices[k], m)) {
                num_varies++;
                axis = m;
            }
        }
        if (num_varies != 1 || r->coordinate[axis] >= 0) {
            return 0;
        }
        r->coordinate[axis] = k;
    }
    for (int m = 0; m < n_axes; m++) {
        const double *c = g->vertices[r->coordinate[m]];
        int64_t n = g->shape[m];
        int all_increasing = 1;
        int all_decreasing = 1;
        for (int64_t i = 0; i + 1 < n; i++) {
            double difference = c[(i + 1) * g->stride[m]] - c[i * g->stride[m]];
            all_increasing = all_increasing && difference > 0;
            all_decreasing = all_decreasing && difference < 0;
        }
        if (!all_increasing && !all_decreasing) {
            return 0;
        }
        r->descending[m] = all_decreasing;
    }
    for (int m = 0; m < n_axes; m++) {
        const double *c = g->vertices[r->coordinate[m]];
        int64_t n = g->shape[m];
        r->profile[m] = spart_alloc(allocator, (size_t)n, sizeof(double));
        if (r->profile[m] == NULL) {
            rectilinear_release(r, allocator);
            return -1;
        }
        for (int64_t i = 0; i < n; i++) {
            int64_t from = r->descending[m] ? n - 1 - i : i;
            r->profile[m][i] = c[from * g->stride[m]];
        }
    }
    return 1;
}

/* Locate point p on a rectilinear grid (regridding._rectilinear.locate),
 * axis by axis with the shared arithmetic (src/weights/multilinear_math.h).
 * A coordinate that is not finite is outside, with local coordinate NaN. */
static void locate_rectilinear(const grid *g, const rectilinear *r, const double *const *points,
                               int64_t p, location *where)
{
    where->inside = 1;
    for (int m = 0; m < g->num_axes; m++) {
        double value = points[r->coordinate[m]][p];
        if (!spart_multilinear_locate_axis(r->profile[m], g->shape[m], r->descending[m], value,
                                           &where->cell[m], &where->xi[m])) {
            where->inside = 0;
        }
    }
}

/* ---- the kernel ------------------------------------------------------- */

static int64_t weights_rectilinear(const grid *g, const rectilinear *r, int64_t num_points,
                                   const double *const *points, const double *weights_input,
                                   int nan_outside, int parallel, int64_t *indices_input,
                                   int64_t *indices_output, double *values)
{
    int64_t outside = 0;
#pragma omp parallel for num_threads(parallel > 1 ? parallel : 1) if (parallel > 1) schedule(static) reduction(+ : outside)
    for (int64_t p = 0; p < num_points; p++) {
        location where;
        locate_rectilinear(g, r, points, p, &where);
        outside += !where.inside;
        write_point_weights(g, &where, weights_input, nan_outside, p, indices_input, indices_output,
                            values);
    }
    return outside;
}

spart_status spart_host_weights_multilinear(int ndim, const int64_t *shape,
                                            const double *const *coordinates_input,
                                            int64_t num_points, const double *const *points,
                                            const double *weights_input, spart_bounds bounds,
                                            int parallel, spart_triples *triples,
                                            int64_t *num_outside)
{
    *num_outside = 0;
    if (ndim < 1 || ndim > MAX_AXES || num_points < 0) {
        return SPART_ERROR_INVALID_ARGUMENT;
    }
    for (int m = 0; m < ndim; m++) {
        if (shape[m] < 2) {
            return SPART_ERROR_INVALID_ARGUMENT;
        }
    }
    if (num_points == 0) {
        return SPART_OK;
    }
    grid g;
    grid_init(&g, ndim, shape, coordinates_input);
    int64_t num_corners = g.num_corners;
    if (num_points > (INT64_MAX - triples->count) / num_corners) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t first = triples->count;
    int64_t num_entries = num_points * num_corners;
    if (spart_triples_reserve(triples, first + num_entries) != 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t *indices_input = triples->indices_input + first;
    int64_t *indices_output = triples->indices_output + first;
    double *values = triples->values + first;
    int nan_outside = bounds == SPART_BOUNDS_NAN;

    rectilinear r;
    int is_rectilinear = rectilinear_profiles(&g, triples->allocator, &r);
    if (is_rectilinear < 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    if (is_rectilinear) {
        *num_outside = weights_rectilinear(&g, &r, num_points, points, weights_input, nan_outside,
                                           parallel, indices_input, indices_output, values);
        rectilinear_release(&r, triples->allocator);
    } else {
        /* regridding extrapolates only for bounds="extrapolate"; "raise"
         * fails before the weights are seen, and this kernel's contract
         * asks for the extrapolated ones then. */
        int extrapolate = bounds != SPART_BOUNDS_NAN;
        spart_status status = spart_multilinear_curvilinear(
            &g, triples->allocator, num_points, points, weights_input, nan_outside, extrapolate,
            parallel, indices_input, indices_output, values, num_outside);
        if (status != SPART_OK) {
            return status;
        }
    }
    triples->count = first + num_entries;
    return SPART_OK;
}

int spart_host_multilinear_rectilinear(int ndim, const int64_t *shape,
                                       const double *const *coordinates_input,
                                       const spart_allocator *allocator, double **profiles,
                                       int *coordinate, int *descending)
{
    grid g;
    grid_init(&g, ndim, shape, coordinates_input);
    rectilinear r;
    int is_rectilinear = rectilinear_profiles(&g, allocator, &r);
    for (int m = 0; is_rectilinear > 0 && m < ndim; m++) {
        profiles[m] = r.profile[m];
        coordinate[m] = r.coordinate[m];
        descending[m] = r.descending[m];
    }
    return is_rectilinear;
}
