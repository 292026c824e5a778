/*
 * src/operator/csr_product_designs.h: the shapes of the interleaved
 * product's kernels side by side, for the benchmark
 * (tests/bench/bench_esis_products.c) only: the library takes design 0.
 * Every design gives the same bits (each vector the one-vector order of
 * kernels/csr_row_sum.cuh); they differ in the entries each lane has in
 * flight and the blocks a multiprocessor holds.
 */
#ifndef SPART_CSR_PRODUCT_DESIGNS_H
#define SPART_CSR_PRODUCT_DESIGNS_H

#include <stdint.h>

#include "device/device_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Y = A X for 2 to 8 vectors already in tiles (2-4: spart_cuda_pack_x4,
 * one tile of 4; 5-8: spart_cuda_pack_tiles, one tile of 8), y in C
 * order. design 0: the library's shape (spart_cuda_csr_product_c_order);
 * for a float32 matrix with int32 columns and g = 32 only (else
 * cudaErrorNotSupported): design 1, twice the entries a lane a round
 * (tile of 4: 8, tile of 8: 4) without a bound on registers; design 2,
 * tile of 4: two rows a group, 4 entries a round, g fixed at compile time
 * (4 blocks a multiprocessor); tile of 8: 2 entries a round with g fixed
 * at compile time. */
int spart_cuda_csr_product_tile_design(const spart_device_csr *matrix, const double *x_tiles,
                                       int64_t num_vectors, double *y, double *chunk_sums,
                                       int design, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_PRODUCT_DESIGNS_H */
