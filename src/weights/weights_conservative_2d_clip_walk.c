/*
 * src/weights/weights_conservative_2d_clip_walk.c: the host's scratch for
 * the walk along a larger cell's edges (a thread's block of sums, grown
 * as cells need) and the appending of a walked cell's entries; the walk
 * itself is src/weights/clip_lattice_walk.h, shared with the device.
 */
#include <string.h>

#include "core/internal.h"
#include "weights/weights_conservative_2d_clip.h"

void spart_clip_sums_init(block_sums *sums, const spart_allocator *allocator)
{
    memset(sums, 0, sizeof *sums);
    sums->allocator = allocator;
}

void spart_clip_sums_release(block_sums *sums)
{
    spart_free(sums->allocator, sums->block.cells);
    spart_free(sums->allocator, sums->block.columns);
    spart_clip_sums_init(sums, sums->allocator);
}

/* Grow a scratch array to at least `count` elements of `size` bytes (to
 * twice what it had, when that is more). 0 on success, -1 when out of
 * memory (the array is unchanged then). */
static int grow_array(const spart_allocator *allocator, void **array, size_t *capacity,
                      size_t count, size_t size)
{
    if (count <= *capacity) {
        return 0;
    }
    size_t grown = 2 * *capacity > count ? 2 * *capacity : count;
    void *larger = spart_realloc(allocator, *array, grown, size);
    if (larger == NULL) {
        return -1;
    }
    *array = larger;
    *capacity = grown;
    return 0;
}

int spart_clip_sums_start(block_sums *sums, int64_t width, int64_t height)
{
    const size_t num_cells = (size_t)width * (size_t)height;
    const size_t num_columns = (size_t)width;
    if (grow_array(sums->allocator, (void **)&sums->block.cells, &sums->capacity_cells, num_cells,
                   sizeof(spart_clip_cell_sums)) != 0 ||
        grow_array(sums->allocator, (void **)&sums->block.columns, &sums->capacity_columns,
                   num_columns, sizeof(spart_clip_column_sums)) != 0) {
        return -1;
    }
    sums->block.width = width;
    sums->block.height = height;
    sums->block.first_column = 0;
    sums->block.num_columns = width;
    sums->block.first_row = 0;
    sums->block.num_rows = height;
    spart_clip_sums_clear(&sums->block);
    return 0;
}

int spart_clip_append_overlaps(block_sums *sums, const spart_clip_block *block, int64_t num_cells_y,
                               int64_t index_input, double weight_per_area, spart_triples *list)
{
    const int64_t height = block->height;
    for (int64_t c = 0; c < block->width; c++) {
        spart_clip_finish_rows(&sums->block, c, sums->block.columns[c].above);
        const int64_t first_output = (block->lower_x + c) * num_cells_y + block->lower_y;
        for (int64_t r = spart_clip_lowest_row(&sums->block, c); r < height; r++) {
            const double overlap = spart_clip_window_overlap(&sums->block, c, r);
            if (overlap == 0) {
                continue;
            }
            if (spart_triples_append(list, index_input, first_output + r,
                                     overlap * weight_per_area) != 0) {
                return -1;
            }
        }
    }
    return 0;
}
