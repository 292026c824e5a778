/*
 * src/permute/permute_plan.c: the plan's work (src/permute/permute_kernels.h)
 * from checked blocks: one item per destination subblock that is not
 * empty, its axes simplified, its tile axes and extents chosen by a cost
 * model, items ordered heaviest first.
 *
 * The cost model counts, for every tile of a candidate shape 2^sx x 2^sy
 * (cut at the item's edges), the 32-byte sectors its terms read and the
 * destination writes (a contiguous run of w elements of b bytes touches
 * ceil(w b / 32) sectors, and half a sector more for its unknown
 * alignment; a strided element touches its own), plus a fixed cost per
 * tile (the block's start, its search for its item, two barriers; a
 * quarter of it for a small tile, a warp's without barriers) and a cost
 * per idle lane (the threads of a device tile with no element). The
 * cheapest candidate wins, the larger tile on a tie. The host twin walks
 * the same tiles: a tile of at most 16 KiB sits in the first-level cache.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "permute/permute_internal.h"

/* Costs in sectors (32 bytes of memory traffic). */
#define COST_PER_TILE 64.0
/* A small tile (a warp's, no barriers, eight to a thread block). */
#define COST_PER_SMALL_TILE 16.0
#define COST_PER_IDLE_LANE 0.25

/* An item's axes while it is being simplified: destination order. */
typedef struct item_axes {
    int count;
    int64_t size[SPART_PERMUTE_AXES];
    int64_t destination_stride[SPART_PERMUTE_AXES];
} item_axes;

/* Sectors touched by `length` elements of `bytes` bytes, `stride` apart. */
static double run_sectors(int64_t length, int64_t stride, int bytes)
{
    if (length <= 0) {
        return 0.0;
    }
    if (stride == 1 || stride == -1) {
        return ceil((double)length * bytes / 32.0) + (bytes < 32 ? 0.5 : 0.0);
    }
    return (double)length * ceil(bytes / 32.0);
}

/* Sectors of a w x h patch (w along x) with strides (sx, sy). */
static double patch_sectors(int64_t w, int64_t h, int64_t sx, int64_t sy, int bytes)
{
    double by_rows = (double)h * run_sectors(w, sx, bytes);
    double by_columns = (double)w * run_sectors(h, sy, bytes);
    return by_rows < by_columns ? by_rows : by_columns;
}

/* The cost of item `it` (axes, strides filled) with tile shifts (sx, sy). */
static double tile_cost(const spart_permute_item *it, const spart_permute_term *terms, int sx,
                        int sy, int bytes, int64_t rest)
{
    int64_t tx = (int64_t)1 << sx, ty = (int64_t)1 << sy;
    int64_t full_x = it->size_x >> sx, part_x = it->size_x & (tx - 1);
    int64_t full_y = it->size_y >> sy, part_y = it->size_y & (ty - 1);
    int64_t widths[2] = {tx, part_x}, heights[2] = {ty, part_y};
    int64_t counts_x[2] = {full_x, part_x > 0}, counts_y[2] = {full_y, part_y > 0};
    /* A small tile takes a warp, a larger one whole thread blocks. */
    int64_t lanes = tx * ty <= SPART_PERMUTE_SMALL_TILE
                        ? SPART_PERMUTE_SMALL_TILE
                        : SPART_PERMUTE_THREADS *
                              ((tx * ty + SPART_PERMUTE_THREADS - 1) / SPART_PERMUTE_THREADS);
    double per_tile = tx * ty <= SPART_PERMUTE_SMALL_TILE ? COST_PER_SMALL_TILE : COST_PER_TILE;
    double cost = 0.0;
    for (int a = 0; a < 2; a++) {
        for (int c = 0; c < 2; c++) {
            double tiles = (double)counts_x[a] * (double)counts_y[c];
            if (tiles == 0.0) {
                continue;
            }
            int64_t w = widths[a], h = heights[c];
            double sectors =
                patch_sectors(w, h, it->destination_stride_x, it->destination_stride_y, bytes);
            for (int32_t k = 0; k < it->num_terms; k++) {
                const spart_permute_term *term = &terms[k];
                sectors += patch_sectors(w, h, term->source_stride_x, term->source_stride_y, bytes);
            }
            cost += tiles * (sectors + per_tile + COST_PER_IDLE_LANE * (double)(lanes - w * h));
        }
    }
    return cost * (double)rest;
}

/* The smallest shift s with 2^s >= n (n >= 1). */
static int shift_covering(int64_t n)
{
    int s = 0;
    while (((int64_t)1 << s) < n) {
        s++;
    }
    return s;
}

/* The cheapest tile shape for `it` into its shift_x, shift_y. */
static void choose_tile(spart_permute_item *it, const spart_permute_term *terms, int kind,
                        int64_t rest)
{
    int bytes = spart_permute_element_bytes(kind);
    /* Several terms share the tile bytes (their tiles are gathered at once). */
    int at_once = it->group_sources > 0                         ? it->group_sources
                  : it->num_terms < SPART_PERMUTE_TERMS_AT_ONCE ? it->num_terms
                                                                : SPART_PERMUTE_TERMS_AT_ONCE;
    int max_shift = shift_covering(spart_permute_tile_elements(kind)) -
                    shift_covering(at_once > 1 ? at_once : 1);
    int cover_x = shift_covering(it->size_x), cover_y = shift_covering(it->size_y);
    double best = INFINITY;
    for (int sx = 0; sx <= cover_x && sx <= max_shift; sx++) {
        for (int sy = 0; sy <= cover_y && sx + sy <= max_shift; sy++) {
            double cost = tile_cost(it, terms, sx, sy, bytes, rest);
            if (cost <= best) { /* on a tie the larger tile (later) wins */
                best = cost;
                it->shift_x = sx;
                it->shift_y = sy;
            }
        }
    }
}

/* The index of the smallest |stride| among the axes (the later on a tie),
 * leaving out `skip`. */
static int fastest_axis(const item_axes *axes, const int64_t *strides, int skip)
{
    int best = -1;
    for (int k = 0; k < axes->count; k++) {
        if (k != skip && (best < 0 || llabs(strides[k]) <= llabs(strides[best]))) {
            best = k;
        }
    }
    return best;
}

/* Destination subblock i of `block` as an item and its terms (written at
 * terms[0..], each with its source j in `slot`); `stride` is scratch of m
 * rows. Returns the number of terms. The axes: size-1 axes dropped,
 * neighbours contiguous in the destination and in every term merged.
 * `reference` (a group's, or NULL): source strides that take part in the
 * merging and choose x in place of the first term's, so that every item of
 * a group gets the same axes whatever its U; its strides in the item's
 * axes go into *reference_term. */
static int32_t make_item(const spart_permute_block *block, int64_t i, int num_axes,
                         const int *permutation, int kind, const int64_t *reference,
                         spart_permute_item *it, spart_permute_term *terms,
                         spart_permute_term *reference_term, int64_t (*stride)[SPART_PERMUTE_AXES])
{
    int64_t m = block->num_source;
    int single = kind == SPART_PERMUTE_KIND_FLOAT32 || kind == SPART_PERMUTE_KIND_COMPLEX64;
    memset(it, 0, sizeof *it);
    /* The terms (nonzero U, increasing j) and the axes of size > 1, with
     * each term's source strides in destination axis order; the reference
     * row last (row m). */
    item_axes axes = {0};
    int64_t *row = stride[m];
    for (int k = 0; k < num_axes; k++) {
        int64_t size = block->sizes[permutation[k]];
        if (size != 1) {
            axes.size[axes.count] = size;
            axes.destination_stride[axes.count] = block->destination_strides[i * num_axes + k];
            row[axes.count] = reference != NULL ? reference[permutation[k]] : 0;
            axes.count++;
        }
    }
    int32_t num_terms = 0;
    for (int64_t j = 0; j < m; j++) {
        double u = block->recoupling != NULL ? block->recoupling[i * m + j] : 1.0;
        if (u == 0.0) {
            continue;
        }
        spart_permute_term *term = &terms[num_terms];
        memset(term, 0, sizeof *term);
        term->source_offset = block->source_offsets[j];
        term->coefficient = single ? (double)(float)u : u;
        term->slot = (int32_t)j;
        int a = 0;
        for (int k = 0; k < num_axes; k++) {
            if (block->sizes[permutation[k]] != 1) {
                stride[num_terms][a++] = block->source_strides[j * num_axes + permutation[k]];
            }
        }
        num_terms++;
    }
    /* Merge a with a + 1 where every side is contiguous across them. */
    for (int a = 0; a + 1 < axes.count;) {
        int64_t next = axes.size[a + 1];
        int mergeable = axes.destination_stride[a] == axes.destination_stride[a + 1] * next;
        for (int32_t t = 0; t < num_terms && mergeable; t++) {
            mergeable = stride[t][a] == stride[t][a + 1] * next;
        }
        mergeable = mergeable && (reference == NULL || row[a] == row[a + 1] * next);
        if (!mergeable) {
            a++;
            continue;
        }
        axes.size[a] *= next; /* a takes a + 1's strides; the rest move left */
        axes.destination_stride[a] = axes.destination_stride[a + 1];
        row[a] = row[a + 1];
        for (int32_t t = 0; t < num_terms; t++) {
            stride[t][a] = stride[t][a + 1];
        }
        for (int b = a + 1; b + 1 < axes.count; b++) {
            axes.size[b] = axes.size[b + 1];
            axes.destination_stride[b] = axes.destination_stride[b + 1];
            row[b] = row[b + 1];
            for (int32_t t = 0; t < num_terms; t++) {
                stride[t][b] = stride[t][b + 1];
            }
        }
        axes.count--;
    }
    while (axes.count < 2) { /* at least two axes: pad with size-1 ones */
        int a = axes.count++;
        axes.size[a] = 1;
        axes.destination_stride[a] = 0;
        row[a] = 0;
        for (int32_t t = 0; t < num_terms; t++) {
            stride[t][a] = 0;
        }
    }
    /* x: the reference's (or first term's) fastest axis; y: the
     * destination's fastest, or its next fastest when that is x too. */
    int64_t first_source[SPART_PERMUTE_AXES];
    for (int a = 0; a < axes.count; a++) {
        first_source[a] = reference != NULL ? row[a]
                          : num_terms > 0   ? stride[0][a]
                                            : axes.destination_stride[a];
    }
    int x = fastest_axis(&axes, first_source, -1);
    int y = fastest_axis(&axes, axes.destination_stride, -1);
    it->write_y_first = y != x;
    if (y == x) {
        y = fastest_axis(&axes, axes.destination_stride, x);
    }
    it->size_x = axes.size[x];
    it->size_y = axes.size[y];
    it->destination_stride_x = axes.destination_stride[x];
    it->destination_stride_y = axes.destination_stride[y];
    for (int32_t t = 0; t < num_terms; t++) {
        terms[t].source_stride_x = stride[t][x];
        terms[t].source_stride_y = stride[t][y];
    }
    if (reference_term != NULL) {
        memset(reference_term, 0, sizeof *reference_term);
        reference_term->source_stride_x = row[x];
        reference_term->source_stride_y = row[y];
        reference_term->coefficient = 1.0;
    }
    for (int a = 0; a < axes.count; a++) {
        if (a == x || a == y) {
            continue;
        }
        int r = it->num_rest++;
        it->rest_size[r] = axes.size[a];
        it->destination_rest_stride[r] = axes.destination_stride[a];
        for (int32_t t = 0; t < num_terms; t++) {
            terms[t].source_rest_stride[r] = stride[t][a];
        }
        if (reference_term != NULL) {
            reference_term->source_rest_stride[r] = row[a];
        }
    }
    it->destination_offset = block->destination_offsets[i];
    it->num_terms = num_terms;
    it->group_items = 1;
    return num_terms;
}

/* Items in order of weight (elements times terms), heaviest first, ties
 * in block order. */
typedef struct item_weight {
    int small; /* tiles of at most SPART_PERMUTE_SMALL_TILE elements */
    double weight;
    int64_t index;
} item_weight;

static int heavier_first(const void *a, const void *b)
{
    const item_weight *x = a, *y = b;
    if (x->small != y->small) {
        return x->small - y->small;
    }
    if (x->weight != y->weight) {
        return x->weight > y->weight ? -1 : 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* The product of an item's rest sizes. */
static int64_t rest_elements(const spart_permute_item *it)
{
    int64_t rest = 1;
    for (int32_t r = 0; r < it->num_rest; r++) {
        rest *= it->rest_size[r];
    }
    return rest;
}

/* Whether U[., j] of `block` has a nonzero entry (a used source). */
static int source_used(const spart_permute_block *block, int64_t j)
{
    if (block->recoupling == NULL) {
        return 1;
    }
    for (int64_t i = 0; i < block->num_destination; i++) {
        if (block->recoupling[i * block->num_source + j] != 0.0) {
            return 1;
        }
    }
    return 0;
}

/* Whether `block`'s destinations can share one tiling, each source
 * gathered once a tile for all of them (a group): two destinations or
 * more, every destination with destination 0's strides, every source with
 * source 0's, between 1 and SPART_PERMUTE_GROUP_SOURCES sources used. The
 * number of used sources into *used. */
static int block_groups(const spart_permute_block *block, int num_axes, int32_t *used)
{
    int64_t n = block->num_destination, m = block->num_source;
    if (n < 2 || m < 1) {
        return 0;
    }
    for (int64_t i = 1; i < n; i++) {
        for (int k = 0; k < num_axes; k++) {
            if (block->destination_strides[i * num_axes + k] != block->destination_strides[k]) {
                return 0;
            }
        }
    }
    int64_t count = 0;
    for (int64_t j = 0; j < m; j++) {
        for (int k = 0; k < num_axes && j > 0; k++) {
            if (block->source_strides[j * num_axes + k] != block->source_strides[k]) {
                return 0;
            }
        }
        count += source_used(block, j);
    }
    *used = (int32_t)count;
    return count >= 1 && count <= SPART_PERMUTE_GROUP_SOURCES;
}

/* The tiles of `it` along x and y from its shifts. */
static void count_tiles(spart_permute_item *it)
{
    it->tiles_x = ((it->size_x - 1) >> it->shift_x) + 1;
    it->tiles_y = ((it->size_y - 1) >> it->shift_y) + 1;
}

/* The items of `block` as a group (block_groups said it can be one) at
 * items[0..n-1], their terms and then the group's sources at terms[0..];
 * returns the terms written, or -1 where the group's tile would be small
 * (a warp's: then its items stand alone). */
static int64_t fill_group(const spart_permute_plan *plan, int num_axes, const int *permutation,
                          const spart_permute_block *block, int32_t used, int64_t first_term,
                          spart_permute_item *items, spart_permute_term *terms,
                          int64_t (*stride)[SPART_PERMUTE_AXES])
{
    int64_t n = block->num_destination, j0 = 0;
    while (!source_used(block, j0)) {
        j0++;
    }
    const int64_t *reference = block->source_strides + j0 * num_axes;
    spart_permute_term reference_term;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        spart_permute_item *it = &items[i];
        int32_t added = make_item(block, i, num_axes, permutation, (int)plan->type, reference, it,
                                  terms + count, &reference_term, stride);
        it->first_term = first_term + count;
        for (int32_t t = 0; t < added; t++) { /* j into its index among the used sources */
            spart_permute_term *term = &terms[count + t];
            int32_t slot = 0;
            for (int64_t j = 0; j < term->slot; j++) {
                slot += source_used(block, j);
            }
            term->slot = slot;
        }
        count += added;
    }
    spart_permute_term *sources = terms + count;
    int32_t slot = 0;
    for (int64_t j = 0; j < block->num_source; j++) {
        if (source_used(block, j)) {
            sources[slot] = reference_term;
            sources[slot].source_offset = block->source_offsets[j];
            sources[slot].slot = slot;
            slot++;
        }
    }
    /* The tile: the cost model over the sources read once each. */
    spart_permute_item probe = items[0];
    probe.num_terms = used;
    probe.group_sources = used;
    choose_tile(&probe, sources, (int)plan->type, rest_elements(&probe));
    if (((int64_t)1 << (probe.shift_x + probe.shift_y)) <= SPART_PERMUTE_SMALL_TILE) {
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        items[i].shift_x = probe.shift_x;
        items[i].shift_y = probe.shift_y;
        count_tiles(&items[i]);
        items[i].group_items = i == 0 ? (int32_t)n : 0;
    }
    items[0].group_sources = used;
    items[0].group_first_source = first_term + count;
    return count + used;
}

/* Make every item and its terms, choose its tile; a fusion block's
 * destinations as a group where they can be one. */
static int64_t fill_items(const spart_permute_plan *plan, int num_axes, const int *permutation,
                          int64_t num_blocks, const spart_permute_block *blocks,
                          spart_permute_item *items, spart_permute_term *terms,
                          int64_t (*stride)[SPART_PERMUTE_AXES])
{
    int64_t num_items = 0, num_terms = 0;
    for (int64_t b = 0; b < num_blocks; b++) {
        const spart_permute_block *block = &blocks[b];
        int empty = 0;
        for (int k = 0; k < num_axes; k++) {
            empty |= block->sizes[k] == 0;
        }
        int32_t used = 0;
        if (!empty && block_groups(block, num_axes, &used)) {
            int64_t added = fill_group(plan, num_axes, permutation, block, used, num_terms,
                                       items + num_items, terms + num_terms, stride);
            if (added >= 0) {
                num_items += block->num_destination;
                num_terms += added;
                continue;
            }
        }
        for (int64_t i = 0; i < block->num_destination && !empty; i++) {
            spart_permute_item *it = &items[num_items++];
            int32_t count = make_item(block, i, num_axes, permutation, (int)plan->type, NULL, it,
                                      terms + num_terms, NULL, stride);
            it->first_term = num_terms;
            choose_tile(it, terms + num_terms, (int)plan->type, rest_elements(it));
            count_tiles(it);
            num_terms += count;
        }
    }
    return num_terms;
}

/* Whether every term, offset and stride of a large one-term tile is a
 * multiple of v elements, its source contiguous along x and destination
 * along y, its tiles at least v by v: then the device's design 2 may copy
 * v elements (16 bytes) at a time. */
static int vector_item(const spart_permute_item *it, const spart_permute_term *term, int64_t v)
{
    if (!it->write_y_first || it->num_terms != 1) {
        return 0;
    }
    if (v == 1) {
        return 1;
    }
    int ok = term->source_stride_x == 1 && it->destination_stride_y == 1 &&
             ((int64_t)1 << it->shift_x) >= v && ((int64_t)1 << it->shift_y) >= v;
    int64_t multiples[6] = {it->size_x,
                            it->size_y,
                            term->source_offset,
                            term->source_stride_y,
                            it->destination_offset,
                            it->destination_stride_x};
    for (int k = 0; k < 6; k++) {
        ok = ok && multiples[k] % v == 0;
    }
    for (int32_t r = 0; r < it->num_rest; r++) {
        ok = ok && term->source_rest_stride[r] % v == 0 && it->destination_rest_stride[r] % v == 0;
    }
    return ok;
}

/* The device's design 2 (kernels/permute_stream.cuh): whether its large
 * tiles allow 16-byte copies (work->vector) and the elements of one of its
 * tile buffers (rows padded by 16 bytes when written y first). */
static void set_stream_layout(spart_permute_work *work, int bytes)
{
    int64_t v = 16 / bytes, plane = 1;
    int vector = work->one_term && work->first_small_tile > 0;
    for (int64_t k = 0; k < work->num_items; k++) {
        const spart_permute_item *it = &work->items[k];
        if (work->tile_start[k] >= work->first_small_tile) {
            continue;
        }
        vector = vector && vector_item(it, &work->terms[it->first_term], v);
        int64_t pitch = ((int64_t)1 << it->shift_x) + (it->write_y_first ? v : 0);
        int64_t elements = pitch << it->shift_y;
        plane = elements > plane ? elements : plane;
    }
    work->vector = vector;
    work->stream_plane = plane;
}

spart_status spart_permute_build_work(spart_context *context, spart_permute_plan *plan,
                                      int num_axes, const int *permutation, int conjugate,
                                      int64_t num_blocks, const spart_permute_block *blocks)
{
    /* Count the items (destination subblocks of blocks that are not empty)
     * and bound their terms and the scratch of one item's strides. */
    int64_t num_items = 0, max_terms = 0, max_source = 0;
    for (int64_t b = 0; b < num_blocks; b++) {
        int empty = 0;
        for (int k = 0; k < num_axes; k++) {
            empty |= blocks[b].sizes[k] == 0;
        }
        if (!empty) {
            num_items += blocks[b].num_destination;
            /* each destination's terms, and a group's sources */
            max_terms += (blocks[b].num_destination + 1) * blocks[b].num_source;
            max_source = blocks[b].num_source > max_source ? blocks[b].num_source : max_source;
        }
    }
    const spart_allocator *allocator = &plan->allocator;
    spart_permute_item *unsorted =
        spart_alloc(allocator, (size_t)(num_items + 1), sizeof *unsorted);
    plan->items = spart_alloc(allocator, (size_t)(num_items + 1), sizeof *plan->items);
    plan->terms = spart_alloc(allocator, (size_t)(max_terms + 1), sizeof *plan->terms);
    plan->tile_start = spart_alloc(allocator, (size_t)(num_items + 1), sizeof *plan->tile_start);
    item_weight *order = spart_alloc(allocator, (size_t)(num_items + 1), sizeof *order);
    int64_t(*stride)[SPART_PERMUTE_AXES] =
        spart_alloc(allocator, (size_t)(max_source + 1), sizeof *stride);
    spart_status status = SPART_OK;
    if (unsorted == NULL || plan->items == NULL || plan->terms == NULL ||
        plan->tile_start == NULL || order == NULL || stride == NULL) {
        status =
            spart_fail(context, SPART_ERROR_OUT_OF_MEMORY, "permute_plan_create: out of memory");
    } else {
        int64_t num_terms = fill_items(plan, num_axes, permutation, num_blocks, blocks, unsorted,
                                       plan->terms, stride);
        /* Order the items alone and the groups' leaders (with their
         * followers after them), heaviest first. */
        int64_t num_leaders = 0;
        for (int64_t k = 0; k < num_items; k++) {
            const spart_permute_item *it = &unsorted[k];
            if (it->group_items == 0) {
                continue;
            }
            double elements = (double)it->size_x * (double)it->size_y * (double)rest_elements(it);
            int64_t terms = 0;
            for (int32_t g = 0; g < it->group_items; g++) {
                terms += unsorted[k + g].num_terms;
            }
            int small = ((int64_t)1 << (it->shift_x + it->shift_y)) <= SPART_PERMUTE_SMALL_TILE;
            order[num_leaders++] =
                (item_weight){small, elements * (double)(terms > 0 ? terms : 1), k};
        }
        qsort(order, (size_t)num_leaders, sizeof *order, heavier_first);
        int bytes = spart_permute_element_bytes((int)plan->type);
        int64_t tiles = 0, tile_bytes = bytes, first_small_tile = -1, placed = 0;
        for (int64_t o = 0; o < num_leaders; o++) {
            const spart_permute_item *it = &unsorted[order[o].index];
            if (order[o].small && first_small_tile < 0) {
                first_small_tile = tiles;
            }
            for (int32_t g = 0; g < it->group_items; g++) { /* the leader first */
                plan->items[placed] = unsorted[order[o].index + g];
                plan->tile_start[placed++] =
                    tiles + (g > 0 ? it->tiles_x * it->tiles_y * rest_elements(it) : 0);
            }
            tiles += it->tiles_x * it->tiles_y * rest_elements(it);
            int64_t at_once = it->group_items > 1 ? it->group_sources
                              : it->num_terms < SPART_PERMUTE_TERMS_AT_ONCE
                                  ? (it->num_terms > 1 ? it->num_terms : 1)
                                  : SPART_PERMUTE_TERMS_AT_ONCE;
            int64_t used =
                spart_permute_tile_pitch(it) * ((int64_t)1 << it->shift_y) * bytes * at_once;
            tile_bytes = used > tile_bytes ? used : tile_bytes;
        }
        plan->tile_start[num_items] = tiles;
        plan->num_terms = num_terms;
        plan->tile_bytes = tile_bytes;
        spart_permute_work work = {0};
        work.items = plan->items;
        work.terms = plan->terms;
        work.tile_start = plan->tile_start;
        work.num_items = num_items;
        work.num_tiles = tiles;
        work.first_small_tile = first_small_tile >= 0 ? first_small_tile : tiles;
        work.kind = (int)plan->type;
        work.conjugate = conjugate;
        work.one_term = 1;
        for (int64_t k = 0; k < num_items; k++) {
            if (plan->tile_start[k] < work.first_small_tile &&
                (plan->items[k].num_terms != 1 || plan->items[k].group_items > 1)) {
                work.one_term = 0;
            }
        }
        /* The device kernel as measured on an H200 (docs/dev/permute-notes.md):
         * plain permutes of real types fastest with design 2 at four blocks
         * an SM (round 8: 71-78 % of the copy rate against 60-64 % for
         * design 1's cp.async gather), complex ones with design 1's
         * register loads at six (63 % on 48^4 complex128; design 2 54 %). */
        int complex_kind =
            plan->type == SPART_PERMUTE_COMPLEX64 || plan->type == SPART_PERMUTE_COMPLEX128;
        work.variant = !work.one_term ? 0 : complex_kind ? 2 : 4;
        if (work.first_small_tile == 0) {
            work.variant = 0; /* small tiles only: the general kernel (no spills), 20 % faster */
        }
        work.stream_stores = plan->destination_length >= SPART_PERMUTE_STREAM_BYTES / bytes;
        set_stream_layout(&work, bytes);
        work.host_staged = 1;
        work.host_y_order = 1;
        work.item_table_start = tiles <= SPART_PERMUTE_ITEM_TABLE ? 0 : work.first_small_tile;
        int64_t table_tiles = tiles - work.item_table_start;
        plan->small_item = spart_alloc(allocator, (size_t)(table_tiles + 1), sizeof(int32_t));
        if (plan->small_item == NULL || num_items > INT32_MAX) {
            status = spart_fail(context,
                                plan->small_item == NULL ? SPART_ERROR_OUT_OF_MEMORY
                                                         : SPART_ERROR_OVERFLOW,
                                "permute_plan_create: %s",
                                plan->small_item == NULL ? "out of memory"
                                                         : "more than 2^31 destination subblocks");
        } else {
            for (int64_t k = 0; k < num_items; k++) {
                for (int64_t t = plan->tile_start[k]; t < plan->tile_start[k + 1]; t++) {
                    if (t >= work.item_table_start) {
                        plan->small_item[t - work.item_table_start] = (int32_t)k;
                    }
                }
            }
        }
        work.small_item = plan->small_item;
        plan->work = work;
    }
    spart_free(allocator, unsorted);
    spart_free(allocator, order);
    spart_free(allocator, stride);
    return status;
}
