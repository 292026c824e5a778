/*
 * src/permute/permute_kernels.h: the tiled block permute (spart/permute.h)
 * on the host (host/permute.c) and on a CUDA device (kernels/permute.cu),
 * with the same operations in the same order. src/permute/permute_ops.h
 * chooses between them; nothing else should.
 *
 * The plan (src/permute/permute_plan.c) turns every destination subblock
 * into an item: its axes in destination order with size-1 axes dropped and
 * axes that are contiguous in the destination and in every source merged;
 * two of them are the tile's axes, x (the first source's fastest) and y
 * (the destination's fastest, or its next fastest when that is x); the
 * rest (at most SPART_PERMUTE_REST_AXES) are walked tile by tile. A tile is
 * 2^shift_x by 2^shift_y elements (cut at the item's edges), at most
 * spart_permute_tile_elements(type) elements. Each term is one source
 * subblock with its nonzero U[i,j], in increasing j, its strides
 * pre-permuted into the item's axes.
 *
 * The order of operations for one destination element (both twins):
 *   acc = U_1 * x_1; acc = fma(U_k, x_k, acc) for terms k = 2..; no terms:
 *   acc = 0; x = conj(src) when asked (the imaginary part negated);
 *   beta_zero: dst = alpha * acc (dst not read); else dst = fma(beta, dst,
 *   alpha * acc). Complex: U times each part; alpha * acc = (fma(ar, cr,
 *   -(ai * ci)), fma(ar, ci, ai * cr)) = t; with beta: (fma(br, dr,
 *   fma(-bi, di, t_re)), fma(br, di, fma(bi, dr, t_im))).
 * float32 types compute in float (fmaf; U and the scalars held as doubles
 * that are exactly floats).
 */
#ifndef SPART_PERMUTE_KERNELS_H
#define SPART_PERMUTE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define SPART_PERMUTE_AXES 8      /* as SPART_PERMUTE_MAX_AXES */
#define SPART_PERMUTE_REST_AXES 6 /* the axes that are not the tile's */
#define SPART_PERMUTE_THREADS 256 /* threads of a device tile */
/* The bytes of one tile's elements (16 KiB): 2048 float64, 1024 complex128. */
#define SPART_PERMUTE_TILE_BYTES 16384
/* The terms whose tiles the device gathers together (an item with more
 * takes them in groups); an item with several terms has tiles of at most
 * 1/min(terms, this) of the tile bytes, so that they fit at once. */
#define SPART_PERMUTE_TERMS_AT_ONCE 4
/* The most distinct sources of a group (a fusion block whose destinations
 * share one tiling, its sources gathered once a tile); a fusion block with
 * more keeps an item per destination, each gathering its own terms. */
#define SPART_PERMUTE_GROUP_SOURCES 8
/* Destinations of at least this many bytes are streamed on the host. */
#define SPART_PERMUTE_STREAM_BYTES ((int64_t)64 << 20)
/* Plans of at most this many tiles have the item of every tile in a
 * table (4 bytes a tile), not only of the small ones. */
#define SPART_PERMUTE_ITEM_TABLE ((int64_t)1 << 24)
/* Tiles of at most this many elements (a warp's lanes) are small. */
#define SPART_PERMUTE_SMALL_TILE 32

/* The element types as spart_permute_type numbers them. */
enum {
    SPART_PERMUTE_KIND_FLOAT32 = 0,
    SPART_PERMUTE_KIND_FLOAT64 = 1,
    SPART_PERMUTE_KIND_COMPLEX64 = 2,
    SPART_PERMUTE_KIND_COMPLEX128 = 3
};

/* The small helpers both twins call (host and device code under nvcc). */
#if defined(__CUDACC__)
#define SPART_PERMUTE_FUNCTION static __host__ __device__ inline
#else
#define SPART_PERMUTE_FUNCTION static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes of one element of `kind`. */
SPART_PERMUTE_FUNCTION int spart_permute_element_bytes(int kind)
{
    return kind == SPART_PERMUTE_KIND_FLOAT32     ? 4
           : kind == SPART_PERMUTE_KIND_FLOAT64   ? 8
           : kind == SPART_PERMUTE_KIND_COMPLEX64 ? 8
                                                  : 16;
}

/* The most elements of one tile of `kind`. */
SPART_PERMUTE_FUNCTION int64_t spart_permute_tile_elements(int kind)
{
    return SPART_PERMUTE_TILE_BYTES / spart_permute_element_bytes(kind);
}

/* One destination subblock: where it is, its tiles and its terms. */
typedef struct spart_permute_item {
    int64_t destination_offset;
    int64_t size_x, size_y; /* the extents along the tile's axes */
    int64_t tiles_x;        /* ceil(size_x / 2^shift_x) */
    int64_t tiles_y;        /* ceil(size_y / 2^shift_y) */
    int64_t destination_stride_x, destination_stride_y;
    int64_t rest_size[SPART_PERMUTE_REST_AXES]; /* the other axes, slowest first */
    int64_t destination_rest_stride[SPART_PERMUTE_REST_AXES];
    int64_t first_term; /* its terms in the plan's term array */
    int32_t num_terms;
    int32_t num_rest;
    int32_t shift_x, shift_y; /* tile extents 2^shift */
    int32_t write_y_first;    /* 1: the destination is written with y fastest */
    /* A fusion block's destinations that share one tiling (a group): the
     * first item (the leader) holds the tiles and group_items, the number
     * of its items (the leader and the group_items - 1 after it, which
     * have no tiles of their own and 0 here); an item alone has 1. The
     * group's distinct sources, in increasing j, are terms
     * group_first_source .. + group_sources - 1 (coefficients unused); the
     * device gathers each once a tile and writes every destination of the
     * group from them (a term's `slot` names its source there). */
    int32_t group_items;
    int32_t group_sources;
    int32_t group_unused;
    int64_t group_first_source;
} spart_permute_item;

/* The elements from one row of a device tile in shared memory to the
 * next: 2^shift_x, one more when the tile is written y first (a
 * transpose), so that the threads of a warp, reading down a column, fall
 * in distinct banks. */
SPART_PERMUTE_FUNCTION int64_t spart_permute_tile_pitch(const spart_permute_item *it)
{
    return ((int64_t)1 << it->shift_x) + (it->write_y_first && it->shift_x > 0);
}

/* One source subblock of an item, with its coefficient U[i,j] (a double
 * that is exactly a float for float32 types). */
typedef struct spart_permute_term {
    int64_t source_offset;
    int64_t source_stride_x, source_stride_y;
    int64_t source_rest_stride[SPART_PERMUTE_REST_AXES];
    double coefficient;
    int32_t slot; /* in a group: the index of its source among the group's sources */
    int32_t unused;
} spart_permute_term;

/* A plan's work as the twins take it (host or device pointers). Items
 * with tiles of more than SPART_PERMUTE_SMALL_TILE elements come first,
 * then those with small tiles, each group heaviest first (the device
 * gives a small tile one warp, eight to a thread block); tile_start[k] is the index of item k's
 * first tile (tile_start[num_items] = num_tiles); a tile of an item is numbered tile x fastest,
 * then tile y, then the rest axes, fastest last. */
typedef struct spart_permute_work {
    const spart_permute_item *items;
    const spart_permute_term *terms;
    const int64_t *tile_start;
    /* The item of tile item_table_start + t at small_item[t] (one load
     * instead of a binary search, whose dependent loads a tile waits for):
     * every small tile's, and every tile's where the plan has at most
     * SPART_PERMUTE_ITEM_TABLE tiles (then item_table_start is 0). */
    const int32_t *small_item;
    int64_t item_table_start;
    int64_t num_items;
    int64_t num_tiles;
    int64_t first_small_tile; /* the first tile of the small-tile items */
    int kind;                 /* SPART_PERMUTE_KIND_* */
    int conjugate;            /* 1: conjugate complex sources */
    int one_term;             /* 1: every item with large tiles has exactly one term */
    /* The device kernel: 0 the general one (sums across barriers, four
     * thread blocks an SM); with one_term, 1 the one-term kernel at eight
     * blocks an SM, 2 the same at six (the default for complex types), 3
     * at eight with an asynchronous gather (cp.async; the default for real
     * types). */
    int variant;
    /* Design 2 (variants 4-6, kernels/permute_stream.cuh): a fixed grid
     * walks the large tiles with the next tile's gather in flight. 4: two
     * buffers (one tile in flight), 5: three (two in flight), both at four
     * blocks an SM with 16-byte copies where `vector` allows them; 6: two
     * buffers, element copies. 7: the general kernel at eight blocks an
     * SM (recoupled plans' tiles wait on latency more than on registers). */
    int vector;           /* 1: every large tile is a transpose (written y first) whose
                           * source is contiguous along x and destination along y, with
                           * sizes, offsets and strides multiples of the elements of 16
                           * bytes, so that the device may copy 16 bytes at a time */
    int64_t stream_plane; /* design 2: the elements of one of its two tile buffers */
    /* Host: stream float64 destination runs around the caches (beta = 0,
     * one term, unit stride), set when the destination is far larger than
     * the caches (SPART_PERMUTE_STREAM_BYTES). */
    int stream_stores;
    /* Host: a one-term transpose tile's source rows copied whole into the
     * thread's buffer before the destination is written from it (1, the
     * default), or read in place (0). */
    int host_staged;
    /* Host: each item's tiles walked y fastest (1, the default) or x
     * fastest as the plan numbers them (0). */
    int host_y_order;
} spart_permute_work;

/* alpha and beta as (real, imaginary) doubles (exactly floats for float32
 * types); beta_zero: the destination is not read. */
typedef struct spart_permute_scalars {
    double alpha[2];
    double beta[2];
    int beta_zero;
} spart_permute_scalars;

/* The item of tile `tile`: the k with tile_start[k] <= tile <
 * tile_start[k + 1] (a binary search; items without tiles are skipped). */
SPART_PERMUTE_FUNCTION int64_t spart_permute_item_of_tile(const int64_t *tile_start,
                                                          int64_t num_items, int64_t tile)
{
    int64_t low = 0, high = num_items - 1;
    while (low < high) {
        int64_t middle = low + (high - low + 1) / 2;
        if (tile_start[middle] <= tile) {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    return low;
}

/* The item of tile `tile`: from the plan's table where it has one, else
 * by the binary search. */
SPART_PERMUTE_FUNCTION int64_t spart_permute_item_of(const spart_permute_work *work, int64_t tile)
{
    return tile >= work->item_table_start
               ? work->small_item[tile - work->item_table_start]
               : spart_permute_item_of_tile(work->tile_start, work->num_items, tile);
}

/* ---- host ---- */
void spart_permute_host(const spart_permute_work *work, const spart_permute_scalars *scalars,
                        const void *source, void *destination, int threads);

/* ---- device: enqueues one kernel on `stream` (a cudaStream_t) and
 * returns a cudaError_t as int (0: success); `work`'s arrays are device
 * memory; shared_bytes is the plan's tile_bytes. ---- */
int spart_permute_device(const spart_permute_work *work, const spart_permute_scalars *scalars,
                         const void *source, void *destination, size_t shared_bytes, void *stream);
/* The sentence of a cudaError_t. */
const char *spart_permute_device_error_string(int error);

#ifdef __cplusplus
}
#endif

#endif /* SPART_PERMUTE_KERNELS_H */
