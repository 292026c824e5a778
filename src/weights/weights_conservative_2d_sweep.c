/*
 * src/weights/weights_conservative_2d_sweep.c: first-order conservative weights
 * between two 2-D logically rectangular grids by Ramshaw's (1985) edge
 * sweep, as regridding 3.6.0 (_weights_conservative_2d/_sweep/_sweep.py).
 *
 * The area of the overlap of two cells is the contour integral
 * 1/2 (x dy - y dx) around it, and its contour is made of the pieces of
 * each cell's edges that lie in the other cell. So every grid line of one
 * grid (the sweep grid) is walked through the cells of the other (the
 * static grid), and each piece p1 -> p2 of it inside static cell S adds
 * the signed triangle area (origin, p1, p2) to the pairs of S with the two
 * sweep cells either side of the line. Divided by the input cell's area,
 * the sums over all pieces are the fractions of each input cell in each
 * output cell.
 *
 * The order of the work is the reference's, since it fixes the order of
 * the fragments and so the bits of their sums: pass A sweeps the output
 * grid through the input grid, pass B the input grid through the output
 * grid; in each pass the lines j = const (walked along axis 0) come
 * first, then the lines i = const. Lines may be walked in parallel, each
 * into its own list; the lists are joined in line order, so the result
 * does not depend on the thread count.
 *
 * One deliberate difference: where a line passes exactly through a vertex
 * of the other grid, the reference can step around that vertex from cell
 * to cell forever. A walk that makes no progress for more steps than it
 * has distinct states must be in such a cycle (it is deterministic), so
 * spart stops there with SPART_ERROR_INVALID_ARGUMENT instead of hanging.
 * Wherever the reference finishes, the result is the same.
 *
 * The static grid and the locating of a point in it are in
 * src/weights/weights_conservative_2d_sweep_grid.c.
 *
 * Known reference behaviour kept as it is: when the two grids have
 * opposite orientations (one mirrored), individual weights are wrong
 * although each input cell's total is right (regridding.md section 5,
 * item 2); degenerate grids (coincident vertices, collinear edges) give
 * wrong weights unless perturbed.
 */
#include <math.h>
#include <string.h>

#include "weights/geometry_2d.h"
#include "core/internal.h"
#include "weights/weights_conservative_2d_sweep.h"
#include "weights/weights_kernels.h"

/* The neighbouring cell across each edge. */
static const int neighbour_offset_i[4] = {-1, 0, 1, 0};
static const int neighbour_offset_j[4] = {0, -1, 0, 1};

/* ---- one pass along one axis --------------------------------------------- */

typedef struct sweep_pass {
    const static_grid *grid;
    /* point k of line l at line_xy[2 * (l * num_points + k)] (x, then y) */
    const double *line_xy;
    int64_t num_lines;
    int64_t num_points;
    int along_axis_0;   /* lines j = const of the sweep grid, walked along i */
    int sweep_is_input; /* pass B */
    int64_t num_cells_y_sweep;
    const double *area_input;    /* signed area per input cell */
    const double *weights_input; /* or NULL */
    /* the most steps a walk can take without moving before it must be in a
     * cycle: its distinct states (static cell, edge or cell last crossed,
     * inside or outside) */
    int64_t max_stalled_steps;
    /* a line's list starts with room for 2 fragments per step of a line
     * that crosses about as many static cells as the grid has along its
     * sides, so that most lists never grow */
    int64_t first_capacity;
} sweep_pass;

/* Where a walk along one line stands: the segment p1 -> p2 from point j,
 * the static cell it is in (or outside), and the edge it entered that cell
 * through (or, outside, the boundary cell it just left). */
typedef struct line_walk {
    int64_t line;
    int64_t j;
    double x1, y1, x2, y2;
    int outside;
    int64_t cell_i, cell_j;
    int64_t last;
} line_walk;

/* Append without a function call per fragment; the list grows by doubling
 * through its own reserve. */
static inline int append_fragment(spart_triples *list, int64_t index_input, int64_t index_output,
                                  double value, int64_t first_capacity)
{
    if (list->count == list->capacity) {
        int64_t grown = list->capacity < first_capacity ? first_capacity : 2 * list->capacity;
        if (spart_triples_reserve(list, grown) != 0) {
            return -1;
        }
    }
    int64_t k = list->count++;
    list->indices_input[k] = index_input;
    list->indices_output[k] = index_output;
    list->values[k] = value;
    return 0;
}

/* One fragment: the piece's area, over the input cell's area, for the
 * sweep cell at (line `sweep_line`, point j) and the current static cell. */
static int save_fragment(const sweep_pass *pass, const line_walk *walk, int64_t sweep_line,
                         double area, spart_triples *list)
{
    /* lines along axis 0 are lines j = const: the sweep cell is (j, line) */
    int64_t sweep_cell = pass->along_axis_0 ? walk->j * pass->num_cells_y_sweep + sweep_line
                                            : sweep_line * pass->num_cells_y_sweep + walk->j;
    int64_t static_cell = walk->cell_i * pass->grid->num_cells_y + walk->cell_j;
    int64_t index_input = pass->sweep_is_input ? sweep_cell : static_cell;
    int64_t index_output = pass->sweep_is_input ? static_cell : sweep_cell;
    double weight = area / pass->area_input[index_input];
    if (pass->weights_input != NULL) {
        weight *= pass->weights_input[index_input];
    }
    return append_fragment(list, index_input, index_output, weight, pass->first_capacity);
}

/* The piece p1 -> p2 of line l, inside the current static cell, borders
 * sweep cell l - 1 on its left and sweep cell l on its right. */
static int save_fragments(const sweep_pass *pass, const line_walk *walk, spart_triples *list)
{
    double area = spart_triangle_area_from_origin(walk->x1, walk->y1, walk->x2, walk->y2);
    if (pass->along_axis_0) {
        area = -area;
    }
    if (walk->line >= 1 && save_fragment(pass, walk, walk->line - 1, area, list) != 0) {
        return -1;
    }
    if (walk->line < pass->num_lines - 1 &&
        save_fragment(pass, walk, walk->line, -area, list) != 0) {
        return -1;
    }
    return 0;
}

/* The crossing of the segment with boundary edge m of a face, if it is
 * nearer than *t_nearest and not into the cell just left: then enter. */
static void try_boundary_edge(const static_grid *grid, int face_number, int64_t m, double x1,
                              double y1, double x2, double y2, double *t_nearest, line_walk *walk,
                              int64_t cell_left)
{
    const boundary_face *face = &grid->faces[face_number];
    const double *q1 = face->first + m * face->stride;
    const double *q2 = q1 + face->stride;
    double t;
    double u;
    spart_segment_intersection_parameters(x1, y1, x2, y2, q1[0], q1[1], q2[0], q2[1], &t, &u);
    if (!spart_segments_intersect(t, u) || !(t < *t_nearest)) {
        return;
    }
    int64_t cell_i = face->runs_along_axis_1 ? face->fixed : m;
    int64_t cell_j = face->runs_along_axis_1 ? m : face->fixed;
    if (cell_i * grid->num_cells_y + cell_j == cell_left) {
        return;
    }
    *t_nearest = t;
    walk->cell_i = cell_i;
    walk->cell_j = cell_j;
    walk->x2 = x1 + t * (x2 - x1);
    walk->y2 = y1 + t * (y2 - y1);
    /* the face's number is the entry edge's: left, bottom, right, top */
    walk->last = face_number < 2 ? 2 * face_number : 2 * (face_number - 2) + 1;
    walk->outside = 0;
}

/* Visit, in edge order, the edges of a face whose boxes touch the segment's. */
static void search_face(const static_grid *grid, int face_number, double x1, double y1, double x2,
                        double y2, double *t_nearest, line_walk *walk, int64_t cell_left)
{
    const boundary_face *face = &grid->faces[face_number];
    double x_low = fmin(x1, x2);
    double x_high = fmax(x1, x2);
    double y_low = fmin(y1, y2);
    double y_high = fmax(y1, y2);
    int64_t stack[64];
    int depth = 0;
    stack[depth++] = 1;
    while (depth > 0) {
        int64_t node = stack[--depth];
        const double *box = face->boxes + 4 * node;
        if (!(box[0] <= x_high && x_low <= box[1] && box[2] <= y_high && y_low <= box[3])) {
            continue;
        }
        if (node >= face->num_leaves) {
            try_boundary_edge(grid, face_number, node - face->num_leaves, x1, y1, x2, y2, t_nearest,
                              walk, cell_left);
            continue;
        }
        /* the right child is pushed first so that the left is visited first */
        stack[depth++] = 2 * node + 1;
        stack[depth++] = 2 * node;
    }
}

/* Outside the static grid: enter it at the nearest crossing of the
 * segment with its boundary, other than back into the cell just left;
 * if there is none, go on to the next point. */
static void step_outside(const sweep_pass *pass, line_walk *walk)
{
    int64_t cell_left = walk->last;
    double x1 = walk->x1;
    double y1 = walk->y1;
    double x2 = walk->x2;
    double y2 = walk->y2;
    double t_nearest = (double)INFINITY;
    walk->last = NONE;
    for (int f = 0; f < 4; f++) {
        search_face(pass->grid, f, x1, y1, x2, y2, &t_nearest, walk, cell_left);
    }
    if (walk->outside) {
        walk->j++;
    }
}

/* Inside static cell S: leave it through the first of its edges (in edge
 * order, not the nearest) that the segment crosses, other than the one it
 * came in through, saving the piece inside S; if none, the piece to p2 is
 * saved and the walk goes on to the next point. */
static int step_inside(const sweep_pass *pass, line_walk *walk, spart_triples *list)
{
    const static_grid *grid = pass->grid;
    int64_t next_i = walk->cell_i;
    int64_t next_j = walk->cell_j;
    int64_t next_point = walk->j + 1;
    int64_t next_last = NONE;
    for (int e = 0; e < 4; e++) {
        if (e == walk->last) {
            continue;
        }
        int from = (e + 3) % 4;
        int64_t i3 = walk->cell_i + corner_offset_i[from];
        int64_t j3 = walk->cell_j + corner_offset_j[from];
        int64_t i4 = walk->cell_i + corner_offset_i[e];
        int64_t j4 = walk->cell_j + corner_offset_j[e];
        double t;
        double u;
        spart_segment_intersection_parameters(
            walk->x1, walk->y1, walk->x2, walk->y2, static_x(grid, i3, j3), static_y(grid, i3, j3),
            static_x(grid, i4, j4), static_y(grid, i4, j4), &t, &u);
        if (spart_segments_intersect(t, u)) {
            walk->x2 = walk->x1 + t * (walk->x2 - walk->x1);
            walk->y2 = walk->y1 + t * (walk->y2 - walk->y1);
            next_i = walk->cell_i + neighbour_offset_i[e];
            next_j = walk->cell_j + neighbour_offset_j[e];
            next_point = walk->j;
            next_last = (e + 2) % 4;
            break;
        }
    }
    if (save_fragments(pass, walk, list) != 0) {
        return -1;
    }
    if (!cell_in_bounds(grid, next_i, next_j)) {
        next_last = walk->cell_i * grid->num_cells_y + walk->cell_j;
        walk->outside = 1;
    }
    walk->cell_i = next_i;
    walk->cell_j = next_j;
    walk->j = next_point;
    walk->last = next_last;
    return 0;
}

/* Where line l starts: in the static cell holding its first point, or
 * outside. A point within rounding of the boundary may pass the boundary
 * test and lie in no cell: then it starts outside, as just beyond. */
static void start_line(const sweep_pass *pass, int64_t l, line_walk *walk)
{
    const static_grid *grid = pass->grid;
    const double *first = pass->line_xy + 2 * (l * pass->num_points);
    walk->line = l;
    walk->j = 0;
    walk->x1 = first[0];
    walk->y1 = first[1];
    walk->outside = 1;
    walk->cell_i = NONE;
    walk->cell_j = NONE;
    walk->last = NONE;
    int in_box = grid->x_low <= walk->x1 && walk->x1 <= grid->x_high && grid->y_low <= walk->y1 &&
                 walk->y1 <= grid->y_high;
    if (in_box && spart_point_in_polygon(walk->x1, walk->y1, grid->boundary_x, grid->boundary_y,
                                         grid->num_boundary)) {
        spart_sweep_locate_point(grid, walk->x1, walk->y1, &walk->cell_i, &walk->cell_j);
        walk->outside = walk->cell_i == NONE;
    }
}

/* Walk line l through the static grid, appending its fragments to `list`. */
static spart_status walk_line(const sweep_pass *pass, int64_t l, spart_triples *list)
{
    line_walk walk;
    start_line(pass, l, &walk);
    const double *points = pass->line_xy + 2 * (l * pass->num_points);
    int64_t stalled = 0;
    while (walk.j < pass->num_points - 1) {
        int64_t j_before = walk.j;
        walk.x2 = points[2 * (walk.j + 1)];
        walk.y2 = points[2 * (walk.j + 1) + 1];
        if (walk.outside) {
            step_outside(pass, &walk);
        } else if (step_inside(pass, &walk, list) != 0) {
            return SPART_ERROR_OUT_OF_MEMORY;
        }
        if (walk.j == j_before && walk.x2 == walk.x1 && walk.y2 == walk.y1) {
            if (++stalled > pass->max_stalled_steps) {
                return SPART_ERROR_INVALID_ARGUMENT;
            }
        } else {
            stalled = 0;
        }
        walk.x1 = walk.x2;
        walk.y1 = walk.y2;
    }
    return SPART_OK;
}

/* The lists of one pass along one axis, one per sweep line. */
typedef struct line_lists {
    spart_triples *lists;
    int64_t num_lines;
} line_lists;

static void release_line_lists(const spart_allocator *allocator, line_lists *lines)
{
    if (lines->lists != NULL) {
        for (int64_t l = 0; l < lines->num_lines; l++) {
            spart_triples_release(&lines->lists[l]);
        }
    }
    spart_free(allocator, lines->lists);
    lines->lists = NULL;
    lines->num_lines = 0;
}

/* Walk every line of one pass along one axis, each into its own list. */
static spart_status walk_lines(const sweep_pass *pass, int parallel,
                               const spart_allocator *allocator, line_lists *lines)
{
    int64_t n = pass->num_lines;
    lines->lists = spart_alloc(allocator, (size_t)n, sizeof *lines->lists);
    spart_status *statuses = spart_alloc(allocator, (size_t)n, sizeof *statuses);
    if (lines->lists == NULL || statuses == NULL) {
        spart_free(allocator, statuses);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    lines->num_lines = n;
    for (int64_t l = 0; l < n; l++) {
        spart_triples_init(&lines->lists[l], allocator);
    }
#pragma omp parallel for schedule(dynamic)                                                         \
    num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
    for (int64_t l = 0; l < n; l++) {
        /* the walk appends to a list of its own on the stack: neighbouring
         * lists share cache lines, and threads walk neighbouring lines */
        spart_triples list = lines->lists[l];
        statuses[l] = walk_line(pass, l, &list);
        lines->lists[l] = list;
    }
    spart_status status = SPART_OK;
    for (int64_t l = 0; l < n && status == SPART_OK; l++) {
        status = statuses[l];
    }
    spart_free(allocator, statuses);
    return status;
}

/* Copy one line's list into `triples` at `offset` and release it. */
static void move_line(spart_triples *list, spart_triples *triples, int64_t offset)
{
    size_t n = (size_t)list->count;
    if (n > 0) {
        memcpy(triples->indices_input + offset, list->indices_input, n * sizeof(int64_t));
        memcpy(triples->indices_output + offset, list->indices_output, n * sizeof(int64_t));
        memcpy(triples->values + offset, list->values, n * sizeof(double));
    }
    spart_triples_release(list);
}

/* Append every list to `triples`, passes in order and lines in order
 * within each, releasing each list once copied. The destination grows
 * once, to its final size, so each fragment is copied once. */
static spart_status join_line_lists(line_lists *passes, int num_passes, int parallel,
                                    spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    int64_t num_lists = 0;
    for (int p = 0; p < num_passes; p++) {
        num_lists += passes[p].num_lines;
    }
    int64_t *offsets = spart_alloc(allocator, (size_t)num_lists, sizeof(int64_t));
    if (offsets == NULL) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t total = triples->count;
    int64_t k = 0;
    for (int p = 0; p < num_passes; p++) {
        for (int64_t l = 0; l < passes[p].num_lines; l++, k++) {
            offsets[k] = total;
            total += passes[p].lists[l].count;
        }
    }
    if (spart_triples_reserve(triples, total) != 0) {
        spart_free(allocator, offsets);
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    int64_t first = 0;
    for (int p = 0; p < num_passes; p++) {
        spart_triples *lists = passes[p].lists;
        const int64_t *pass_offsets = offsets + first;
#pragma omp parallel for schedule(dynamic, 16)                                                     \
    num_threads(parallel > 1 ? parallel : 1) if (parallel > 1)
        for (int64_t l = 0; l < passes[p].num_lines; l++) {
            move_line(&lists[l], triples, pass_offsets[l]);
        }
        first += passes[p].num_lines;
    }
    triples->count = total;
    spart_free(allocator, offsets);
    return SPART_OK;
}

/* Lay out the sweep grid's lines along one axis, each line's points
 * consecutive: along axis 0, line l is j = l walked along i. */
static void fill_lines(const double *x, const double *y, int64_t num_x, int64_t num_y,
                       int along_axis_0, double *line_xy)
{
    for (int64_t i = 0; i < num_x; i++) {
        for (int64_t j = 0; j < num_y; j++) {
            int64_t k = along_axis_0 ? j * num_x + i : i * num_y + j;
            line_xy[2 * k] = x[i * num_y + j];
            line_xy[2 * k + 1] = y[i * num_y + j];
        }
    }
}

/* The scratch memory of the whole sweep, sized for the larger grid. */
typedef struct sweep_scratch {
    double *area_input;
    double *static_xy;
    double *boundary;
    double *boxes;
    double *line_xy;
} sweep_scratch;

static void free_scratch(const spart_allocator *allocator, sweep_scratch *scratch)
{
    spart_free(allocator, scratch->area_input);
    spart_free(allocator, scratch->static_xy);
    spart_free(allocator, scratch->boundary);
    spart_free(allocator, scratch->boxes);
    spart_free(allocator, scratch->line_xy);
}

static int64_t max_int64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int allocate_scratch(const spart_allocator *allocator, int64_t num_x_input,
                            int64_t num_y_input, int64_t num_x_output, int64_t num_y_output,
                            sweep_scratch *scratch)
{
    int64_t vertices = max_int64(num_x_input * num_y_input, num_x_output * num_y_output);
    int64_t perimeter = max_int64(num_x_input + num_y_input, num_x_output + num_y_output);
    int64_t boxes = max_int64(spart_sweep_face_box_count(num_x_input, num_y_input),
                              spart_sweep_face_box_count(num_x_output, num_y_output));
    memset(scratch, 0, sizeof *scratch);
    scratch->area_input =
        spart_alloc(allocator, (size_t)((num_x_input - 1) * (num_y_input - 1)), sizeof(double));
    scratch->static_xy = spart_alloc(allocator, 2 * (size_t)vertices, sizeof(double));
    scratch->boundary = spart_alloc(allocator, 4 * (size_t)perimeter, sizeof(double));
    scratch->boxes = spart_alloc(allocator, (size_t)boxes, sizeof(double));
    scratch->line_xy = spart_alloc(allocator, 2 * (size_t)vertices, sizeof(double));
    if (scratch->area_input == NULL || scratch->static_xy == NULL || scratch->boundary == NULL ||
        scratch->boxes == NULL || scratch->line_xy == NULL) {
        free_scratch(allocator, scratch);
        return -1;
    }
    return 0;
}

spart_status spart_host_weights_conservative_2d_sweep(
    const double *x_input, const double *y_input, int64_t num_x_input, int64_t num_y_input,
    const double *x_output, const double *y_output, int64_t num_x_output, int64_t num_y_output,
    const double *weights_input, int parallel, spart_triples *triples)
{
    const spart_allocator *allocator = triples->allocator;
    int64_t count_before = triples->count;
    sweep_scratch scratch;
    if (allocate_scratch(allocator, num_x_input, num_y_input, num_x_output, num_y_output,
                         &scratch) != 0) {
        return SPART_ERROR_OUT_OF_MEMORY;
    }
    spart_grid_cell_areas(x_input, y_input, num_x_input, num_y_input, scratch.area_input);

    /* pass A along axis 0 and axis 1, then pass B likewise */
    line_lists passes[4];
    memset(passes, 0, sizeof passes);
    spart_status status = SPART_OK;
    int p = 0;
    for (int sweep_is_input = 0; sweep_is_input <= 1 && status == SPART_OK; sweep_is_input++) {
        /* pass A sweeps the output grid through the input grid, pass B the
         * input grid through the output grid */
        const double *x_sweep = sweep_is_input ? x_input : x_output;
        const double *y_sweep = sweep_is_input ? y_input : y_output;
        int64_t num_x_sweep = sweep_is_input ? num_x_input : num_x_output;
        int64_t num_y_sweep = sweep_is_input ? num_y_input : num_y_output;
        static_grid grid;
        if (sweep_is_input) {
            spart_sweep_set_up_static_grid(&grid, x_output, y_output, num_x_output, num_y_output,
                                           scratch.static_xy, scratch.boundary, scratch.boxes);
        } else {
            spart_sweep_set_up_static_grid(&grid, x_input, y_input, num_x_input, num_y_input,
                                           scratch.static_xy, scratch.boundary, scratch.boxes);
        }
        for (int along_axis_0 = 1; along_axis_0 >= 0 && status == SPART_OK; along_axis_0--) {
            fill_lines(x_sweep, y_sweep, num_x_sweep, num_y_sweep, along_axis_0, scratch.line_xy);
            sweep_pass pass;
            pass.grid = &grid;
            pass.line_xy = scratch.line_xy;
            pass.num_lines = along_axis_0 ? num_y_sweep : num_x_sweep;
            pass.num_points = along_axis_0 ? num_x_sweep : num_y_sweep;
            pass.along_axis_0 = along_axis_0;
            pass.sweep_is_input = sweep_is_input;
            pass.num_cells_y_sweep = num_y_sweep - 1;
            pass.area_input = scratch.area_input;
            pass.weights_input = weights_input;
            pass.max_stalled_steps = 6 * grid.num_cells_x * grid.num_cells_y + 6;
            pass.first_capacity = 2 * (pass.num_points + grid.num_cells_x + grid.num_cells_y);
            status = walk_lines(&pass, parallel, allocator, &passes[p++]);
        }
    }
    if (status == SPART_OK) {
        status = join_line_lists(passes, 4, parallel, triples);
    }
    for (int k = 0; k < 4; k++) {
        release_line_lists(allocator, &passes[k]);
    }
    free_scratch(allocator, &scratch);
    if (status != SPART_OK) {
        /* leave the list as it came: no partial results */
        triples->count = count_before;
    }
    return status;
}
