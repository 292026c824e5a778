/*
 * src/permute/permute_internal.h: the plan of spart/permute.h as the
 * module's files share it, and its table of operations: the one place
 * where a plan learns whether it runs on the host (permute_ops_host.c,
 * over host/permute.c) or on a CUDA device (permute_ops_cuda.c, over
 * kernels/permute.cu, built only with CUDA). The table is chosen once,
 * when the plan is made (as PETSc's Mat chooses its ops).
 */
#ifndef SPART_PERMUTE_INTERNAL_H
#define SPART_PERMUTE_INTERNAL_H

#include <stdint.h>

#include "core/internal.h"
#include "permute/permute_kernels.h"
#include "spart/permute.h"

typedef struct spart_permute_ops spart_permute_ops;

struct spart_permute_plan {
    spart_allocator allocator;
    const spart_permute_ops *ops;
    spart_permute_type type;
    int cuda_device;            /* a device plan's device */
    int64_t source_length;      /* elements */
    int64_t destination_length; /* elements */
    int64_t tile_bytes;         /* shared memory of one device tile */
    /* The tables in host memory (items, terms, tile starts), made by
     * spart_permute_build_work. */
    spart_permute_item *items;
    spart_permute_term *terms;
    int64_t *tile_start;
    int32_t *small_item; /* the item of each small tile (from first_small_tile on) */
    int64_t num_terms;
    spart_permute_work work; /* over the host tables */
    /* A device plan's copies of the tables (one allocation, NULL on the
     * host) and the work over them. */
    void *device_tables;
    spart_permute_work device_work;
};

struct spart_permute_ops {
    const char *where; /* for sentences: "host", "CUDA device" */
    /* Copy the plan's tables where it runs (host: nothing). */
    spart_status (*place)(spart_context *context, spart_permute_plan *plan);
    /* Free what place made. */
    void (*release)(spart_permute_plan *plan);
    /* Check that the arrays are this location's memory, then run. */
    spart_status (*execute)(spart_context *context, const spart_permute_plan *plan,
                            const spart_permute_scalars *scalars, const void *source,
                            void *destination);
};

/* The table of `on_device`'s location into *ops; SPART_ERROR_NO_DEVICE
 * ("spart was built without CUDA: ...") for a device without CUDA. */
spart_status spart_permute_select(spart_context *context, int on_device,
                                  const spart_permute_ops **ops);

extern const spart_permute_ops spart_permute_host_ops;
#if defined(SPART_HAVE_CUDA)
extern const spart_permute_ops spart_permute_cuda_ops;
#endif

/* The checked blocks of spart_permute_plan_create turned into the plan's
 * host tables (items heaviest first, terms, tile starts, tile_bytes) and
 * plan->work; plan->allocator and plan->type must be set. */
spart_status spart_permute_build_work(spart_context *context, spart_permute_plan *plan,
                                      int num_axes, const int *permutation, int conjugate,
                                      int64_t num_blocks, const spart_permute_block *blocks);

/* Check the blocks against the plan's lengths (each subblock inside its
 * array, U finite, no destination element covered twice). */
spart_status spart_permute_check_blocks(spart_context *context, int num_axes,
                                        const int *permutation, int64_t num_blocks,
                                        const spart_permute_block *blocks, int64_t source_length,
                                        int64_t destination_length);

/* Choose the device kernel of a plan (spart_permute_work.variant): for
 * benchmarks and tests that compare them; a one-term variant on a plan
 * whose large tiles have several terms runs the general kernel. */
void spart_permute_plan_set_variant(spart_permute_plan *plan, int variant);
/* Stream the host's float64 destination runs (1) or not (0), whatever the
 * size (spart_permute_work.stream_stores); for benchmarks and tests. */
void spart_permute_plan_set_stream_stores(spart_permute_plan *plan, int stream);
/* Stage the host's one-term transpose tiles' source rows (1) or not (0)
 * (spart_permute_work.host_staged); for benchmarks and tests. */
void spart_permute_plan_set_host_staging(spart_permute_plan *plan, int staged);
/* Walk the host's tiles y fastest (1) or x fastest (0)
 * (spart_permute_work.host_y_order); for benchmarks and tests. */
void spart_permute_plan_set_host_order(spart_permute_plan *plan, int y_fastest);

#endif /* SPART_PERMUTE_INTERNAL_H */
