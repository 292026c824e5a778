/*
 * src/operator/csr_assemble_stream.h: the twin contract of the streaming
 * assembly (host/csr_assemble_stream.c | kernels/csr_assemble_stream.cu),
 * as src/operator/regridder_stream_host.c and regridder_stream_cuda.c
 * call it. Plain C types only, so that the header reads the same in C and
 * in CUDA C++.
 *
 * The matrix is built in two passes over the blocks of a stream, the
 * blocks in order, with one array `cursor` of num_rows + 1 int64:
 *
 *   pass 0 (count): for each kept entry of row r, cursor[r + 1] += 1
 *     (cursor[0] stays 0);
 *   between the passes: cursor becomes its exclusive prefix sum, so that
 *     cursor[r + 1] is the first slot of row r;
 *   pass 1 (place): each kept entry of row r goes to slot cursor[r + 1],
 *     which then advances by one; entries of one row in one block take
 *     their slots in the block's order.
 *
 * After pass 1, cursor[r + 1] is where row r ends, the start of row r + 1:
 * cursor is row_ptr, and no other per-row array was needed. A row holds
 * its entries in stream order (block after block, each block in its
 * order), which is the order of the stable counting sort of
 * host/csr_assemble.c over the concatenated blocks: the same arrays bit
 * for bit. The host walks each block in order; the device sorts each
 * block's rows stably with the entries' positions (CUB's radix sort, as
 * kernels/csr_assemble.cu), so the entries of a row in a block are a run
 * of the sorted keys in block order, and an entry's rank in its run is its
 * offset from the row's cursor; each run's length is added to its row's
 * cursor by the one thread at the run's end. Integers only: no rounding
 * anywhere; values are copied, or rounded to float by round-to-nearest on
 * both sides. No atomics.
 *
 * An entry is kept unless drop_zeros is set and its value is exactly 0.
 * Its row is row_offset[e] + row_lookup[indices_output[k]] (or
 * indices_output[k] * row_lookup_stride without a lookup), its column the
 * same from indices_input and the column tables, e its element.
 *
 * The check of a second pass: each block's entry and kept counts are
 * compared with the first pass's, a slot outside [0, num_entries) is never
 * written (it is counted instead), and the fingerprint
 * F(a, n, i0) = sum over j < n of spart_stream_mix(i0 + j, a[j]) (mod
 * 2^64, any order) of row_ptr[1 .. num_rows] after pass 1 must equal the
 * one predicted between the passes.
 */
#ifndef SPART_CSR_ASSEMBLE_STREAM_H
#define SPART_CSR_ASSEMBLE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "device/device_internal.h"

#ifndef SPART_STREAM_FUNCTION
#define SPART_STREAM_FUNCTION static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One block as the twins read it: its entries and elements, and the
 * assembly tables with row_offset and column_offset already advanced to
 * the block's first element (so element j of the block is entry j of
 * them). */
typedef struct spart_stream_source {
    int64_t num_elements;   /* the block's elements */
    int64_t num_entries;    /* offsets[num_elements] */
    const int64_t *offsets; /* num_elements + 1, from 0 */
    const int64_t *indices_input;
    const int64_t *indices_output;
    const double *values;
    const int64_t *row_offset;
    const int64_t *column_offset;
    const int64_t *row_lookup;    /* NULL: cell * row_lookup_stride */
    const int64_t *column_lookup; /* NULL: cell * column_lookup_stride */
    int64_t row_lookup_stride;
    int64_t column_lookup_stride;
    int64_t cells_input;  /* indices_input lie in [0, cells_input) */
    int64_t cells_output; /* indices_output in [0, cells_output) */
    int drop_zeros;
} spart_stream_source;

/* splitmix64's finaliser. */
SPART_STREAM_FUNCTION uint64_t spart_stream_scramble(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The fingerprint's term of value v at index i. */
SPART_STREAM_FUNCTION uint64_t spart_stream_mix(int64_t index, int64_t value)
{
    return spart_stream_scramble(spart_stream_scramble((uint64_t)index) ^ (uint64_t)value);
}

/* ---- host (host/csr_assemble_stream.c) --------------------------------------------- */

/* What one pass over a block found. */
typedef struct spart_stream_tally {
    int64_t first_bad; /* the first entry with an index out of range, or num_entries */
    int64_t bad_input; /* its indices */
    int64_t bad_output;
    int64_t kept;         /* entries kept */
    int64_t out_of_range; /* pass 1: entries whose slot fell outside the result */
} spart_stream_tally;

/* Pass 0 over one block: cursor[row + 1] += 1 for each kept entry, with
 * up to `threads` OpenMP threads (each owning a range of rows). The
 * indices are checked first; a block with a bad entry counts nothing. */
void spart_host_stream_count(const spart_stream_source *source, int64_t num_rows, int threads,
                             int64_t *cursor, spart_stream_tally *tally);

/* Pass 1 over one block: each kept entry to slot cursor[row + 1]++ of the
 * columns (int32 when columns32 is not NULL, else int64) and values
 * (float when values32 is not NULL), num_entries slots in all; threads
 * as for the count. */
void spart_host_stream_place(const spart_stream_source *source, int64_t num_rows, int threads,
                             int64_t *cursor, int64_t num_entries, int32_t *columns32,
                             int64_t *columns64, float *values32, double *values64,
                             spart_stream_tally *tally);

/* cursor[0 .. num_rows] into its exclusive prefix sum, in place. */
void spart_host_stream_scan(int64_t *cursor, int64_t num_rows);

/* F(values, count, first_index) of the contract above. */
uint64_t spart_host_stream_fingerprint(const int64_t *values, int64_t count, int64_t first_index);

/* ---- device (kernels/csr_assemble_stream.cu; builds with CUDA only) ---------------- */

/* Bytes of device scratch the scan of num_rows + 1 cursors and the
 * fingerprint need (either, not both at once). */
int spart_cuda_stream_scratch_bytes(int64_t num_rows, size_t *bytes);

/* Bytes of the device tally a block's pass needs (its two counts and
 * the placement's flags). */
int spart_cuda_stream_tally_bytes(void);

/* Pass 0 or 1's launches for one block already on the device. `sort`
 * was planned for source->num_entries items and key limit num_rows, with
 * its workspace set. tally (device memory, 2 int64) receives the kept
 * count and, pass 1, the count of slots out of range. Pass 1 writes into
 * `csr`'s columns and values (num_entries slots; its row_ptr is unused). */
int spart_cuda_stream_count(const spart_stream_source *source, int64_t num_rows,
                            spart_device_sort *sort, int64_t *cursor, int64_t *tally, void *stream);
int spart_cuda_stream_place(const spart_stream_source *source, int64_t num_rows,
                            spart_device_sort *sort, int64_t *cursor, int64_t num_entries,
                            const spart_device_csr_arrays *csr, int64_t *tally, void *stream);

/* cursor[0 .. num_rows] into its exclusive prefix sum, in place, with
 * scratch of spart_cuda_stream_scratch_bytes. */
int spart_cuda_stream_scan(int64_t *cursor, int64_t num_rows, void *scratch, size_t bytes,
                           void *stream);

/* F(values, count, first_index) into *result (device memory), with the
 * same scratch. */
int spart_cuda_stream_fingerprint(const int64_t *values, int64_t count, int64_t first_index,
                                  void *scratch, size_t bytes, uint64_t *result, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* SPART_CSR_ASSEMBLE_STREAM_H */
