/*
 * host/batch_pack_simd.c: a batch of 8 vectors laid one after another, as
 * leading axes lay them out (vector t's column c at x[t * columns + c]),
 * packed into the interleaved layout the batch kernels read
 * (packed[c * 8 + t]), with AVX-512: eight columns of the eight vectors
 * are eight registers, transposed in registers (unpacks, then two rounds
 * of 128-bit lane shuffles) into eight columns of 8 values, each stored
 * as one 64-byte line.
 *
 * A packed array much larger than the caches is written with streaming
 * stores: the product reads it from memory anyway, and an ordinary store
 * would first read each line it writes (a third more traffic). A smaller
 * one is written through the cache, where the product finds it.
 *
 * Values are copied, never computed: the packed batch holds x's bits.
 * Only compiled for x86-64 with GCC or clang; elsewhere (and on processors
 * without AVX-512) spart_host_pack_eight declines and the caller packs in
 * plain C.
 */
#include "operator/regridder_internal.h"

/* Packed arrays of more bytes than this are written past the caches:
 * beyond what the L2 caches of a few cores hold. */
#define STREAMING_BYTES ((size_t)16 << 20)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX512_FUNCTION                                                                            \
    static inline __attribute__((target("avx512f,avx512vl,avx2,fma"), always_inline))

/* Columns [c, c + 8) of the 8 vectors into packed lines c .. c + 7
 * (packed is 64-byte aligned). */
AVX512_FUNCTION void pack_eight_columns(const double *x, int64_t columns, int64_t c, double *packed,
                                        int streaming)
{
    __m512d vectors[8], pairs[8], quads[8];
    for (int t = 0; t < 8; t++) {
        vectors[t] = _mm512_loadu_pd(x + t * columns + c);
    }
    /* pairs[2i] holds (v2i[j], v2i+1[j]) for even j, pairs[2i+1] for odd j */
    for (int i = 0; i < 4; i++) {
        pairs[2 * i] = _mm512_unpacklo_pd(vectors[2 * i], vectors[2 * i + 1]);
        pairs[2 * i + 1] = _mm512_unpackhi_pd(vectors[2 * i], vectors[2 * i + 1]);
    }
    /* quads[4h + j] holds columns j and j + 4 of vectors 4h .. 4h + 3 */
    for (int h = 0; h < 2; h++) {
        quads[4 * h + 0] = _mm512_shuffle_f64x2(pairs[4 * h + 0], pairs[4 * h + 2], 0x88);
        quads[4 * h + 1] = _mm512_shuffle_f64x2(pairs[4 * h + 1], pairs[4 * h + 3], 0x88);
        quads[4 * h + 2] = _mm512_shuffle_f64x2(pairs[4 * h + 0], pairs[4 * h + 2], 0xdd);
        quads[4 * h + 3] = _mm512_shuffle_f64x2(pairs[4 * h + 1], pairs[4 * h + 3], 0xdd);
    }
    for (int j = 0; j < 4; j++) {
        __m512d low = _mm512_shuffle_f64x2(quads[j], quads[4 + j], 0x88);  /* column j */
        __m512d high = _mm512_shuffle_f64x2(quads[j], quads[4 + j], 0xdd); /* column j + 4 */
        if (streaming) {
            _mm512_stream_pd(packed + (c + j) * 8, low);
            _mm512_stream_pd(packed + (c + j + 4) * 8, high);
        } else {
            _mm512_store_pd(packed + (c + j) * 8, low);
            _mm512_store_pd(packed + (c + j + 4) * 8, high);
        }
    }
}

__attribute__((target("avx512f,avx512vl,avx2,fma"))) static void
pack_eight_avx512(const double *x, int64_t columns, double *packed, int threads)
{
    int streaming = (size_t)columns * 8 * sizeof(double) > STREAMING_BYTES;
    int64_t blocks = columns / 8;
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static) nowait
        for (int64_t block = 0; block < blocks; block++) {
            pack_eight_columns(x, columns, block * 8, packed, streaming);
        }
        if (streaming) {
            _mm_sfence(); /* each thread's streamed lines are visible before the product */
        }
    }
    for (int64_t c = blocks * 8; c < columns; c++) { /* the last few columns */
        for (int t = 0; t < 8; t++) {
            packed[c * 8 + t] = x[t * columns + c];
        }
    }
}

int spart_host_pack_eight(const double *x, int64_t columns, double *packed, int threads)
{
    if (spart_host_simd_level() != SPART_SIMD_AVX512 || (uintptr_t)packed % 64 != 0) {
        return 0;
    }
    pack_eight_avx512(x, columns, packed, threads);
    return 1;
}

#else

int spart_host_pack_eight(const double *x, int64_t columns, double *packed, int threads)
{
    (void)x, (void)columns, (void)packed, (void)threads;
    return 0;
}

#endif
