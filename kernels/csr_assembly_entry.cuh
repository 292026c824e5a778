/*
 * kernels/csr_assembly_entry.cuh: what the two device assemblies read of
 * one weights entry, written once (kernels/csr_assemble.cu, the whole
 * source at once; kernels/csr_assemble_stream.cu, a block at a time): the
 * entry's row (its key), its column, and its value as the matrix stores
 * it. The source is spart_device_assembly_source (device/device_internal.h),
 * whose layout both describe; the streamed assembly fills one for each
 * block.
 */
#ifndef SPART_CSR_ASSEMBLY_ENTRY_CUH
#define SPART_CSR_ASSEMBLY_ENTRY_CUH

#include <stdint.h>

#include "csr_search.cuh"
#include "device/device_internal.h"

/* Entry k's row, or num_rows (past every row) when it is dropped as zero. */
__device__ __forceinline__ int64_t assembly_entry_row(const spart_device_assembly_source &source,
                                                      int64_t k, int64_t num_rows)
{
    if (source.drop_zeros && source.values[k] == 0.0) {
        return num_rows;
    }
    const int64_t element = piece_holding(source.offsets, source.num_elements, k);
    const int64_t cell = source.indices_output[k];
    return source.row_offset[element] + (source.row_lookup != nullptr
                                             ? source.row_lookup[cell]
                                             : cell * source.row_lookup_stride);
}

/* Entry k's column. */
__device__ __forceinline__ int64_t assembly_entry_column(const spart_device_assembly_source &source,
                                                         int64_t k)
{
    const int64_t element = piece_holding(source.offsets, source.num_elements, k);
    const int64_t cell = source.indices_input[k];
    return source.column_offset[element] + (source.column_lookup != nullptr
                                                ? source.column_lookup[cell]
                                                : cell * source.column_lookup_stride);
}

/* A value as the matrix stores it: copied, or rounded to float by round to
 * nearest (the host's conversion). */
__device__ __forceinline__ void assembly_store_value(double *slot, double value)
{
    *slot = value;
}

__device__ __forceinline__ void assembly_store_value(float *slot, double value)
{
    *slot = __double2float_rn(value);
}

#endif /* SPART_CSR_ASSEMBLY_ENTRY_CUH */
