/*
 * src/weights/clip_pair.h: two doubles that go through the same
 * operations, the left column's (lane 0) and the right one's (lane 1), for
 * the lattice clipping arithmetic that host and device share
 * (src/weights/clip_lattice_math.h).
 *
 * On the host a vector of two lanes (the vector_size extension of GCC and
 * Clang): each operation is one instruction for both lanes where the
 * processor has two-lane vectors (SSE2 on every x86-64, NEON), which
 * takes about a tenth off the lattice kernel. On the device (CUDA C++) a
 * struct of two doubles with the same operators. Each lane's arithmetic
 * is IEEE double arithmetic, exactly as on a lone double, never
 * contracted (-ffp-contract=off; --fmad=false), so both give the bits of
 * scalar code.
 *
 * Written with +, -, *, / and +=, between pairs or a pair and a double,
 * and the functions below; nothing else.
 */
#ifndef SPART_CLIP_PAIR_H
#define SPART_CLIP_PAIR_H

#include <math.h>
#include <stdint.h>

#ifndef SPART_MATH_FUNCTION
#define SPART_MATH_FUNCTION static inline
#endif

#if defined(__CUDACC__)

struct spart_clip_pair {
    double lane[2];
};
typedef struct spart_clip_pair spart_clip_pair;

#define SPART_CLIP_PAIR_OPERATOR(op)                                                               \
    SPART_MATH_FUNCTION spart_clip_pair operator op(spart_clip_pair a, spart_clip_pair b)          \
    {                                                                                              \
        return spart_clip_pair{{a.lane[0] op b.lane[0], a.lane[1] op b.lane[1]}};                  \
    }                                                                                              \
    SPART_MATH_FUNCTION spart_clip_pair operator op(spart_clip_pair a, double b)                   \
    {                                                                                              \
        return spart_clip_pair{{a.lane[0] op b, a.lane[1] op b}};                                  \
    }                                                                                              \
    SPART_MATH_FUNCTION spart_clip_pair operator op(double a, spart_clip_pair b)                   \
    {                                                                                              \
        return spart_clip_pair{{a op b.lane[0], a op b.lane[1]}};                                  \
    }
SPART_CLIP_PAIR_OPERATOR(+)
SPART_CLIP_PAIR_OPERATOR(-)
SPART_CLIP_PAIR_OPERATOR(*)
SPART_CLIP_PAIR_OPERATOR(/)
#undef SPART_CLIP_PAIR_OPERATOR

SPART_MATH_FUNCTION spart_clip_pair &operator+=(spart_clip_pair &a, spart_clip_pair b)
{
    a.lane[0] = a.lane[0] + b.lane[0];
    a.lane[1] = a.lane[1] + b.lane[1];
    return a;
}

SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_make(double a, double b)
{
    return spart_clip_pair{{a, b}};
}

SPART_MATH_FUNCTION double spart_clip_pair_lane(spart_clip_pair a, int k)
{
    return a.lane[k];
}

/* a < b ? a : b and a > b ? a : b on each lane. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_min(spart_clip_pair a, spart_clip_pair b)
{
    return spart_clip_pair{{a.lane[0] < b.lane[0] ? a.lane[0] : b.lane[0],
                            a.lane[1] < b.lane[1] ? a.lane[1] : b.lane[1]}};
}

SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_max(spart_clip_pair a, spart_clip_pair b)
{
    return spart_clip_pair{{a.lane[0] > b.lane[0] ? a.lane[0] : b.lane[0],
                            a.lane[1] > b.lane[1] ? a.lane[1] : b.lane[1]}};
}

/* fabs on each lane: the sign bit cleared. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_abs(spart_clip_pair a)
{
    return spart_clip_pair{{fabs(a.lane[0]), fabs(a.lane[1])}};
}

/* value where test > 0, else +0, on each lane. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_where_positive(spart_clip_pair value,
                                                                   spart_clip_pair test)
{
    return spart_clip_pair{
        {test.lane[0] > 0.0 ? value.lane[0] : 0.0, test.lane[1] > 0.0 ? value.lane[1] : 0.0}};
}

#else /* the host */

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef double spart_clip_pair __attribute__((vector_size(16)));
typedef int64_t spart_clip_pair_mask __attribute__((vector_size(16)));

SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_make(double a, double b)
{
    return (spart_clip_pair){a, b};
}

SPART_MATH_FUNCTION double spart_clip_pair_lane(spart_clip_pair a, int k)
{
    return a[k];
}

/* a < b ? a : b and a > b ? a : b on each lane: SSE2's MINPD and MAXPD
 * compute exactly these, NaNs and signed zeros included (either
 * comparison false: the second operand), in one instruction where the
 * comparison and blend take five; elsewhere the blend is written out. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_min(spart_clip_pair a, spart_clip_pair b)
{
#ifdef __SSE2__
    return (spart_clip_pair)_mm_min_pd((__m128d)a, (__m128d)b);
#else
    const spart_clip_pair_mask a_smaller = a < b;
    return (spart_clip_pair)((a_smaller & (spart_clip_pair_mask)a) |
                             (~a_smaller & (spart_clip_pair_mask)b));
#endif
}

SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_max(spart_clip_pair a, spart_clip_pair b)
{
#ifdef __SSE2__
    return (spart_clip_pair)_mm_max_pd((__m128d)a, (__m128d)b);
#else
    const spart_clip_pair_mask a_larger = a > b;
    return (spart_clip_pair)((a_larger & (spart_clip_pair_mask)a) |
                             (~a_larger & (spart_clip_pair_mask)b));
#endif
}

/* fabs on each lane: the sign bit cleared. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_abs(spart_clip_pair a)
{
    return (spart_clip_pair)((spart_clip_pair_mask)a &
                             (spart_clip_pair_mask){INT64_MAX, INT64_MAX});
}

/* value where test > 0, else +0 (all bits clear), on each lane. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_where_positive(spart_clip_pair value,
                                                                   spart_clip_pair test)
{
    const spart_clip_pair_mask positive = test > 0.0;
    return (spart_clip_pair)((spart_clip_pair_mask)value & positive);
}

#endif /* __CUDACC__ */

SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_of(double a)
{
    return spart_clip_pair_make(a, a);
}

/* max(d, 0) on each lane, as MAXPD gives it (one instruction), the
 * same number as the scalar (d + |d|) / 2 for every height it is given
 * (within a block of 2 x 2 lattice cells, far from overflow; -0 gives
 * +0 both ways). A NaN, which only an edge of NaN crossings could bring,
 * gives 0 here but leaves the column's sums NaN all the same. Hosts
 * without SSE2 keep (d + |d|) / 2. */
SPART_MATH_FUNCTION spart_clip_pair spart_clip_pair_positive_part(spart_clip_pair d)
{
#if defined(__CUDACC__) || defined(__SSE2__)
    return spart_clip_pair_max(d, spart_clip_pair_of(0.0));
#else
    return (d + spart_clip_pair_abs(d)) * 0.5;
#endif
}

#endif /* SPART_CLIP_PAIR_H */
