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

/* MART's fused backprojection and update of num_frames frames (at most
 * 1024; no gate) as spart_cuda_mart_backproject_update_frames makes it,
 * 4 frames a pass, but with each tile of 4 frames' images first copied
 * into images_x4 (ceil(num_frames / 4) * 4 * matrix->num_columns
 * doubles; the tile of frames t0 .. t0 + 3 at t0 * num_columns, a
 * column's 4 values in one sector, spart_cuda_pack_x4), so that a
 * term's gather serves the 4 frames. A float32 matrix with int32 columns
 * only (else cudaErrorNotSupported). The same bits. Benchmark only
 * (kernels/mart_backproject_update.cu): the frames solve does not give
 * the fused pass scratch for the copy. */
int spart_cuda_mart_backproject_update_frames_packed(const spart_device_csr *matrix,
                                                     const double *images, double *images_x4,
                                                     const double *observed_back, double *scenes,
                                                     int64_t num_frames, int64_t num_channel,
                                                     int64_t scene_size, double gamma,
                                                     void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_PRODUCT_DESIGNS_H */
