/*
 * host/permute.c: the tiled block permute on the host (OpenMP), twin of
 * kernels/permute.cu (src/permute/permute_kernels.h): the same tiles, and
 * for each destination element the same operations in the same order
 * (U times the first term, fma for the others, then alpha and beta), so
 * both give the same bits. A thread takes whole tiles (at most 16 KiB of
 * elements, so a tile's source and destination stay in the first-level
 * cache): it sums every term of the tile into a buffer in source order,
 * then writes the destination in its own order.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h> /* _mm_stream_si64, _mm_sfence: SSE2, every x86-64 */
#define HAVE_STREAM_STORES 1
#else
#define HAVE_STREAM_STORES 0
#endif

#include "permute/permute_kernels.h"

/* Where a tile starts: its item, its corner (x0, y0), its extents (w, h)
 * and the rest axes' coordinates. */
typedef struct tile_place {
    const spart_permute_item *item;
    int64_t x0, y0, w, h;
    int64_t rest[SPART_PERMUTE_REST_AXES];
} tile_place;

static tile_place place_of_tile(const spart_permute_work *work, int64_t tile)
{
    tile_place p;
    int64_t k = spart_permute_item_of_tile(work->tile_start, work->num_items, tile);
    const spart_permute_item *it = &work->items[k];
    int64_t t = tile - work->tile_start[k];
    p.item = it;
    p.x0 = (t % it->tiles_x) << it->shift_x;
    t /= it->tiles_x;
    p.y0 = (t % it->tiles_y) << it->shift_y;
    t /= it->tiles_y;
    for (int32_t r = it->num_rest - 1; r >= 0; r--) {
        p.rest[r] = t % it->rest_size[r];
        t /= it->rest_size[r];
    }
    int64_t tx = (int64_t)1 << it->shift_x, ty = (int64_t)1 << it->shift_y;
    p.w = it->size_x - p.x0 < tx ? it->size_x - p.x0 : tx;
    p.h = it->size_y - p.y0 < ty ? it->size_y - p.y0 : ty;
    return p;
}

/* The first element of the tile in the destination and in a term's source. */
static int64_t destination_corner(const tile_place *p)
{
    const spart_permute_item *it = p->item;
    int64_t at = it->destination_offset + p->x0 * it->destination_stride_x +
                 p->y0 * it->destination_stride_y;
    for (int32_t r = 0; r < it->num_rest; r++) {
        at += p->rest[r] * it->destination_rest_stride[r];
    }
    return at;
}

static int64_t source_corner(const tile_place *p, const spart_permute_term *term)
{
    int64_t at =
        term->source_offset + p->x0 * term->source_stride_x + p->y0 * term->source_stride_y;
    for (int32_t r = 0; r < p->item->num_rest; r++) {
        at += p->rest[r] * term->source_rest_stride[r];
    }
    return at;
}

/* A run of n float64 destination elements d[0..n-1] = ar * (u * a[i *
 * s_inner]) (beta = 0), stored around the caches where the destination is
 * far larger than them: whole 64-byte lines by non-temporal stores (no
 * read for ownership), the ragged ends as usual. The same values as the
 * cached loop. Returns 0 where it cannot (no SSE2). */
static inline __attribute__((always_inline)) int
stream_run(double *d, const double *a, int64_t s_inner, int64_t n, double u, double ar)
{
#if HAVE_STREAM_STORES
    int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63) / 8;
    if (((uintptr_t)d & 7) != 0) {
        return 0;
    }
    head = head < n ? head : n;
    int64_t body_end = head + (n - head) / 8 * 8;
    for (int64_t i = 0; i < head; i++) {
        d[i] = ar * (u * a[i * s_inner]);
    }
    for (int64_t i = head; i < body_end; i++) {
        double value = ar * (u * a[i * s_inner]);
        long long bits;
        memcpy(&bits, &value, sizeof bits);
        _mm_stream_si64((long long *)(void *)(d + i), bits);
    }
    for (int64_t i = body_end; i < n; i++) {
        d[i] = ar * (u * a[i * s_inner]);
    }
    return 1;
#else
    (void)d, (void)a, (void)s_inner, (void)n, (void)u, (void)ar;
    return 0;
#endif
}

/* float32 runs are not streamed. */
static inline int stream_run_float(float *d, const float *a, int64_t s_inner, int64_t n, float u,
                                   float ar)
{
    (void)d, (void)a, (void)s_inner, (void)n, (void)u, (void)ar;
    return 0;
}

/* The macros below are templates over the element type (a type cannot
 * be parenthesized). */
// NOLINTBEGIN(bugprone-macro-parentheses)
/* The blocks of cache lines of a one-term tile (see below) with these
 * strides: the common transpose passes literal 1s, so that the compiler
 * sees unit strides. */
#define COPY_LINE_BLOCKS(real, fma_of, s_outer, s_inner, d_outer, d_inner)                         \
    for (int64_t ob = 0; ob < outer; ob += line) {                                                 \
        const int64_t oe = ob + line < outer ? ob + line : outer;                                  \
        for (int64_t ib = 0; ib < inner; ib += line) {                                             \
            const int64_t ie = ib + line < inner ? ib + line : inner;                              \
            for (int64_t o = ob; o < oe; o++) {                                                    \
                const real *a = from + o * (s_outer);                                              \
                real *d = to + o * (d_outer);                                                      \
                if (beta_zero) {                                                                   \
                    for (int64_t i = ib; i < ie; i++) {                                            \
                        d[i * (d_inner)] = ar * (u * a[i * (s_inner)]);                            \
                    }                                                                              \
                } else {                                                                           \
                    for (int64_t i = ib; i < ie; i++) {                                            \
                        d[i * (d_inner)] =                                                         \
                            fma_of(br, d[i * (d_inner)], ar * (u * a[i * (s_inner)]));             \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

/* One tile of an item with one term, real type: straight from the source
 * to the destination in the destination's order, in blocks of a cache line
 * by a cache line, acc = u * x and then alpha and beta as in the general
 * tile (the same operations). */
#define DEFINE_SINGLE_TERM_TILE(name, real, fma_of, stream_of)                                     \
    static inline __attribute__((always_inline)) void name(                                        \
        const spart_permute_work *work, const spart_permute_scalars *s, const tile_place *p,       \
        const real *source, real *destination, real *buffer)                                       \
    {                                                                                              \
        const spart_permute_item *it = p->item;                                                    \
        const spart_permute_term *term = &work->terms[it->first_term];                             \
        const real u = (real)term->coefficient, ar = (real)s->alpha[0], br = (real)s->beta[0];     \
        const int y_first = it->write_y_first, beta_zero = s->beta_zero;                           \
        const int64_t outer = y_first ? p->w : p->h, inner = y_first ? p->h : p->w;                \
        const int64_t d_outer = y_first ? it->destination_stride_x : it->destination_stride_y;     \
        const int64_t d_inner = y_first ? it->destination_stride_y : it->destination_stride_x;     \
        int64_t s_outer = y_first ? term->source_stride_x : term->source_stride_y;                 \
        int64_t s_inner = y_first ? term->source_stride_y : term->source_stride_x;                 \
        const real *from = source + source_corner(p, term);                                        \
        real *to = destination + destination_corner(p);                                            \
        const int64_t line = 64 / (int64_t)sizeof(real); /* elements of a cache line */            \
        if (work->host_staged && y_first && s_outer == 1 && inner > 1) {                           \
            /* A transpose: the tile's source rows (contiguous, far apart:                         \
             * a 3-D permute's are 4 MiB apart, all in one cache set) copied                       \
             * whole into the buffer first, then read down its columns. */                         \
            for (int64_t i = 0; i < inner; i++) {                                                  \
                memcpy(buffer + i * outer, from + i * s_inner, (size_t)outer * sizeof(real));      \
            }                                                                                      \
            from = buffer;                                                                         \
            s_inner = outer;                                                                       \
        }                                                                                          \
        if (work->stream_stores && beta_zero && d_inner == 1) {                                    \
            int streamed = 1;                                                                      \
            for (int64_t o = 0; o < outer && streamed; o++) {                                      \
                streamed = stream_of(to + o * d_outer, from + o * s_outer, s_inner, inner, u, ar); \
            }                                                                                      \
            if (streamed) {                                                                        \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
        if (s_outer == 1 && d_inner == 1) {                                                        \
            COPY_LINE_BLOCKS(real, fma_of, 1, s_inner, d_outer, 1)                                 \
        } else {                                                                                   \
            COPY_LINE_BLOCKS(real, fma_of, s_outer, s_inner, d_outer, d_inner)                     \
        }                                                                                          \
    }

DEFINE_SINGLE_TERM_TILE(single_double, double, fma, stream_run)
DEFINE_SINGLE_TERM_TILE(single_float, float, fmaf, stream_run_float)

/* The same for a complex type: each element as the general tile makes it
 * (u times each part, the imaginary part negated first when conjugating,
 * then the complex alpha and beta), straight to the destination. */
#define DEFINE_SINGLE_TERM_COMPLEX_TILE(name, real, fma_of)                                        \
    static inline __attribute__((always_inline)) void name(                                        \
        const spart_permute_work *work, const spart_permute_scalars *s, const tile_place *p,       \
        const real *source, real *destination)                                                     \
    {                                                                                              \
        const spart_permute_item *it = p->item;                                                    \
        const spart_permute_term *term = &work->terms[it->first_term];                             \
        const real u = (real)term->coefficient;                                                    \
        const real ar = (real)s->alpha[0], ai = (real)s->alpha[1];                                 \
        const real br = (real)s->beta[0], bi = (real)s->beta[1];                                   \
        const int y_first = it->write_y_first, beta_zero = s->beta_zero;                           \
        const int conjugate = work->conjugate;                                                     \
        const int64_t outer = y_first ? p->w : p->h, inner = y_first ? p->h : p->w;                \
        const int64_t d_outer =                                                                    \
            2 * (y_first ? it->destination_stride_x : it->destination_stride_y);                   \
        const int64_t d_inner =                                                                    \
            2 * (y_first ? it->destination_stride_y : it->destination_stride_x);                   \
        const int64_t s_outer = 2 * (y_first ? term->source_stride_x : term->source_stride_y);     \
        const int64_t s_inner = 2 * (y_first ? term->source_stride_y : term->source_stride_x);     \
        const real *from = source + 2 * source_corner(p, term);                                    \
        real *to = destination + 2 * destination_corner(p);                                        \
        const int64_t line = 32 / (int64_t)sizeof(real); /* complex elements of a cache line */    \
        for (int64_t ob = 0; ob < outer; ob += line) {                                             \
            const int64_t oe = ob + line < outer ? ob + line : outer;                              \
            for (int64_t ib = 0; ib < inner; ib += line) {                                         \
                const int64_t ie = ib + line < inner ? ib + line : inner;                          \
                for (int64_t o = ob; o < oe; o++) {                                                \
                    for (int64_t i = ib; i < ie; i++) {                                            \
                        const real *x = from + o * s_outer + i * s_inner;                          \
                        real *d = to + o * d_outer + i * d_inner;                                  \
                        const real re = u * x[0];                                                  \
                        const real im = u * (conjugate ? -x[1] : x[1]);                            \
                        const real t_re = fma_of(ar, re, -(ai * im));                              \
                        const real t_im = fma_of(ar, im, ai * re);                                 \
                        if (beta_zero) {                                                           \
                            d[0] = t_re;                                                           \
                            d[1] = t_im;                                                           \
                        } else {                                                                   \
                            const real d_re = d[0], d_im = d[1];                                   \
                            d[0] = fma_of(br, d_re, fma_of(-bi, d_im, t_re));                      \
                            d[1] = fma_of(br, d_im, fma_of(bi, d_re, t_im));                       \
                        }                                                                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_SINGLE_TERM_COMPLEX_TILE(single_complex_double, double, fma)
DEFINE_SINGLE_TERM_COMPLEX_TILE(single_complex_float, float, fmaf)

/* Term q of a general tile into acc (source order; first: q == 0, the
 * product, else fma), with the x stride `stride_x` (a literal 1 where the
 * source is contiguous along x, so that the loop is tight). */
#define ACCUMULATE_TERM(real, fma_of, first, stride_x)                                             \
    for (int64_t v = 0; v < h; v++) {                                                              \
        for (int64_t x = 0; x < w; x++) {                                                          \
            const real *from = source + (at + x * (stride_x) + v * sy) * c;                        \
            real *into = acc + (v * w + x) * c;                                                    \
            real re = from[0];                                                                     \
            into[0] = (first) ? u * re : fma_of(u, re, into[0]);                                   \
            if (c == 2) {                                                                          \
                real im = work->conjugate ? -from[1] : from[1];                                    \
                into[1] = (first) ? u * im : fma_of(u, im, into[1]);                               \
            }                                                                                      \
        }                                                                                          \
    }

/* Element (x, v) of a general tile: alpha, and beta when it is not 0. */
#define WRITE_ELEMENT(real, fma_of)                                                                \
    {                                                                                              \
        const real *a = acc + (v * w + x) * c;                                                     \
        real *d = destination + (at + x * dx + v * dy) * c;                                        \
        if (c == 1) {                                                                              \
            real t = ar * a[0];                                                                    \
            d[0] = s->beta_zero ? t : fma_of(br, d[0], t);                                         \
        } else {                                                                                   \
            real t_re = fma_of(ar, a[0], -(ai * a[1]));                                            \
            real t_im = fma_of(ar, a[1], ai * a[0]);                                               \
            if (s->beta_zero) {                                                                    \
                d[0] = t_re;                                                                       \
                d[1] = t_im;                                                                       \
            } else {                                                                               \
                real d_re = d[0], d_im = d[1];                                                     \
                d[0] = fma_of(br, d_re, fma_of(-bi, d_im, t_re));                                  \
                d[1] = fma_of(br, d_im, fma_of(bi, d_re, t_im));                                   \
            }                                                                                      \
        }                                                                                          \
    }

/* One tile in `real` (float or double, with `fma_of`): components 1 (real)
 * or 2 (complex); acc holds w * h elements. */
#define DEFINE_TILE(type, real, fma_of)                                                            \
    static inline __attribute__((always_inline)) void item_tile_##type(                            \
        const spart_permute_work *work, const spart_permute_scalars *s, const tile_place *place,   \
        const real *source, real *destination, real *acc, int components)                          \
    {                                                                                              \
        const tile_place p = *place;                                                               \
        const spart_permute_item *it = p.item;                                                     \
        if (it->num_terms == 1) {                                                                  \
            if (components == 1) {                                                                 \
                single_##type(work, s, &p, source, destination, acc);                              \
            } else {                                                                               \
                single_complex_##type(work, s, &p, source, destination);                           \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        const int64_t w = p.w, h = p.h, c = components;                                            \
        for (int32_t q = 0; q < it->num_terms; q++) {                                              \
            const spart_permute_term *term = &work->terms[it->first_term + q];                     \
            const real u = (real)term->coefficient;                                                \
            const int64_t at = source_corner(&p, term);                                            \
            const int64_t sx = term->source_stride_x, sy = term->source_stride_y;                  \
            if (sx == 1) {                                                                         \
                ACCUMULATE_TERM(real, fma_of, q == 0, 1)                                           \
            } else {                                                                               \
                ACCUMULATE_TERM(real, fma_of, q == 0, sx)                                          \
            }                                                                                      \
        }                                                                                          \
        if (it->num_terms == 0) {                                                                  \
            for (int64_t e = 0; e < w * h * c; e++) {                                              \
                acc[e] = 0;                                                                        \
            }                                                                                      \
        }                                                                                          \
        const real ar = (real)s->alpha[0], ai = (real)s->alpha[1];                                 \
        const real br = (real)s->beta[0], bi = (real)s->beta[1];                                   \
        const int64_t at = destination_corner(&p);                                                 \
        const int64_t dx = it->destination_stride_x, dy = it->destination_stride_y;                \
        /* The destination's order: y fastest for a transpose. */                                  \
        if (it->write_y_first) {                                                                   \
            for (int64_t x = 0; x < w; x++) {                                                      \
                for (int64_t v = 0; v < h; v++) {                                                  \
                    WRITE_ELEMENT(real, fma_of)                                                    \
                }                                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t v = 0; v < h; v++) {                                                      \
                for (int64_t x = 0; x < w; x++) {                                                  \
                    WRITE_ELEMENT(real, fma_of)                                                    \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_TILE(double, double, fma)
DEFINE_TILE(float, float, fmaf)

/* A tile of an item alone, or of every item of a group in turn (the
 * followers share the leader's tiling; the device gathers the group's
 * sources once for them all, the same operations per element). */
#define DEFINE_GROUP_TILE(type, real)                                                              \
    static inline __attribute__((always_inline)) void tile_##type(                                 \
        const spart_permute_work *work, const spart_permute_scalars *s, int64_t tile,              \
        const real *source, real *destination, real *acc, int components)                          \
    {                                                                                              \
        tile_place p = place_of_tile(work, tile);                                                  \
        const spart_permute_item *leader = p.item;                                                 \
        for (int32_t g = 0; g < leader->group_items; g++) {                                        \
            p.item = leader + g;                                                                   \
            item_tile_##type(work, s, &p, source, destination, acc, components);                   \
        }                                                                                          \
    }

DEFINE_GROUP_TILE(double, double)
DEFINE_GROUP_TILE(float, float)

/* The clones of each type's tile, dispatched on CPU features: with FMA,
 * fma() is one instruction (the same correctly rounded value as the
 * library's; without, a call for every element of a complex tile). As
 * host/csr_product.c does: x86-64-v3 (AVX2 + FMA) from GCC 12. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERNEL_CLONES __attribute__((target_clones("fma", "default")))
#else
#define KERNEL_CLONES
#endif

/* The tiles of each type with its number of components a constant, so
 * that the compiler specializes the loops. */
#define DEFINE_TILE_OF_KIND(name, type, real, components)                                          \
    KERNEL_CLONES static void name(const spart_permute_work *work, const spart_permute_scalars *s, \
                                   int64_t tile, const void *source, void *destination, void *acc) \
    {                                                                                              \
        tile_##type(work, s, tile, source, destination, acc, components);                          \
    }

DEFINE_TILE_OF_KIND(tile_float32, float, float, 1)
DEFINE_TILE_OF_KIND(tile_float64, double, double, 1)
DEFINE_TILE_OF_KIND(tile_complex64, float, float, 2)
DEFINE_TILE_OF_KIND(tile_complex128, double, double, 2)
// NOLINTEND(bugprone-macro-parentheses)

/* The host's t-th tile when it walks each item's tiles y fastest (the
 * plan numbers them x fastest): consecutive tiles of a transpose then
 * write the same destination rows, whose pages and lines they share
 * (a 3-D permute's destination rows are 8 KiB apart, a page each). */
static int64_t y_order_tile(const spart_permute_work *work, int64_t t)
{
    int64_t k = spart_permute_item_of_tile(work->tile_start, work->num_items, t);
    const spart_permute_item *it = &work->items[k];
    int64_t local = t - work->tile_start[k];
    int64_t y = local % it->tiles_y, x = local / it->tiles_y % it->tiles_x;
    int64_t rest = local / it->tiles_y / it->tiles_x;
    return work->tile_start[k] + x + it->tiles_x * (y + it->tiles_y * rest);
}

void spart_permute_host(const spart_permute_work *work, const spart_permute_scalars *scalars,
                        const void *source, void *destination, int threads)
{
    const int kind = work->kind;
    void (*tile_of_kind)(const spart_permute_work *, const spart_permute_scalars *, int64_t,
                         const void *, void *, void *) =
        kind == SPART_PERMUTE_KIND_FLOAT32     ? tile_float32
        : kind == SPART_PERMUTE_KIND_FLOAT64   ? tile_float64
        : kind == SPART_PERMUTE_KIND_COMPLEX64 ? tile_complex64
                                               : tile_complex128;
#pragma omp parallel num_threads(threads)
    {
        /* A tile's sums: SPART_PERMUTE_TILE_BYTES of elements. */
        double buffer[SPART_PERMUTE_TILE_BYTES / sizeof(double)];
#pragma omp for schedule(dynamic, 4)
        for (int64_t t = 0; t < work->num_tiles; t++) {
            const int64_t tile = work->host_y_order ? y_order_tile(work, t) : t;
            tile_of_kind(work, scalars, tile, source, destination, buffer);
        }
#if HAVE_STREAM_STORES
        _mm_sfence(); /* this thread's streamed stores are visible before the region ends */
#endif
    }
}
