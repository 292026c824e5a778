/*
 * solvers/instrument_device.c: the ideal instrument's two operators built
 * on a CUDA device (params.on_device; solvers/instrument_build.h): the
 * device planes builder of spart/instrument.h makes each block of
 * (channel, bin) planes on the device, from tables it copied there once
 * (the scene's and sensor's vertices, the pixel areas, the photons per
 * radiance, the planes' constants), and the streamed assembly reads each
 * block where it lies (blocks_on_device). Every plane's entries are
 * counted first, so the blocks are cut to a number of entries (the
 * assembly's staging is made for the largest block, not for a bound).
 * A block's geometric weights are kept by the builder, so when all planes
 * make one block (in memory, when they are few enough) both passes of both
 * directions come from one clip. The operators are the host build's bit
 * for bit (tests/unit/test_cuda_instrument.c). Uses the public API only.
 */
#include <stdint.h>
#include <string.h>

#include "instrument_build.h"
#include "mart_internal.h"

/* Entries a block holds at most when there are several (the staging of
 * the assembly is about 16 bytes an entry, the builder's buffers 32 bytes
 * and 16 bytes a vertex of each plane): 2^26, about 3 GB in all, or less
 * when the budget is small. In memory every plane goes in one block up to
 * ONE_BLOCK_ENTRIES. */
static const int64_t BLOCK_ENTRIES = (int64_t)1 << 26;
static const int64_t ONE_BLOCK_ENTRIES = (int64_t)1 << 29;
/* Planes mapped and counted at once while the blocks are planned. */
enum { COUNT_PLANES = 64 };

typedef struct device_stream {
    spart_context *context;
    spart_instrument_planes *planes;
    int backward;
    int64_t *first; /* each block's first plane, num_blocks + 1 values */
} device_stream;

static spart_status device_block(void *user_data, int64_t block, int pass,
                                 spart_weights_block *result)
{
    (void)pass; /* both passes give the same block (the builder keeps it) */
    device_stream *d = user_data;
    return spart_instrument_planes_block(d->context, d->planes, d->backward, d->first[block],
                                         d->first[block + 1] - d->first[block], result);
}

/* Count every plane's entries and cut the planes into blocks of at most
 * `target` entries (a plane larger than that alone): d->first, and the
 * largest block's entries. */
static spart_status plan_blocks(device_stream *d, int64_t num_planes, size_t budget,
                                int64_t *num_blocks, int64_t *largest)
{
    spart_context *context = d->context;
    int64_t *entries = spart_context_malloc(context, (size_t)num_planes * sizeof *entries);
    d->first = spart_context_malloc(context, ((size_t)num_planes + 1) * sizeof *d->first);
    if (entries == NULL || d->first == NULL) {
        spart_context_free_memory(context, entries);
        return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                       "instrument: could not allocate the planes' counts (%lld "
                                       "planes)",
                                       (long long)num_planes);
    }
    spart_status status = SPART_OK;
    int64_t total = 0;
    for (int64_t at = 0; at < num_planes && status == SPART_OK; at += COUNT_PLANES) {
        int64_t count = num_planes - at < COUNT_PLANES ? num_planes - at : COUNT_PLANES;
        status = spart_instrument_planes_count(context, d->planes, at, count, entries + at);
        for (int64_t k = 0; status == SPART_OK && k < count; k++) {
            total += entries[at + k];
        }
    }
    int64_t target = BLOCK_ENTRIES;
    if (budget == 0 && total <= ONE_BLOCK_ENTRIES) {
        target = total; /* in memory: one block, one clip */
    } else if (budget > 0 && (size_t)target > budget / 64) {
        target = (int64_t)(budget / 64) > 0 ? (int64_t)(budget / 64) : 1;
    }
    int64_t blocks = 0, in_block = 0;
    *largest = 1;
    for (int64_t k = 0; status == SPART_OK && k < num_planes; k++) {
        if (k == 0 || (in_block > 0 && in_block + entries[k] > target)) {
            d->first[blocks++] = k;
            in_block = 0;
        }
        in_block += entries[k];
        *largest = in_block > *largest ? in_block : *largest;
    }
    d->first[blocks] = num_planes;
    *num_blocks = blocks;
    spart_context_free_memory(context, entries);
    return status;
}

spart_status spart_instrument_assemble_on_device(spart_context *context,
                                                 const spart_instrument_params *p,
                                                 const spart_spectral_bins *bins, const double *s,
                                                 spart_regridder **forward,
                                                 spart_regridder **backward)
{
    device_stream d;
    memset(&d, 0, sizeof d);
    d.context = context;
    spart_status status = spart_instrument_planes_create(context, p, bins->count, bins->low,
                                                         bins->high, s, &d.planes);
    int64_t num_blocks = 0, largest = 1;
    if (status == SPART_OK) {
        status =
            plan_blocks(&d, p->num_channel * bins->count, p->memory_budget, &num_blocks, &largest);
    }
    /* in memory: no limit of the call's own (the device's memory is) */
    size_t budget = p->memory_budget > 0 ? p->memory_budget : SIZE_MAX;
    for (int backward_op = 0; backward_op < 2 && status == SPART_OK; backward_op++) {
        d.backward = backward_op;
        spart_weights_stream stream;
        spart_instrument_stream_init(p, bins->count, backward_op, &stream);
        stream.num_blocks = num_blocks;
        stream.max_block_entries = largest;
        stream.blocks_on_device = 1;
        stream.function = device_block;
        stream.user_data = &d;
        spart_regridder_options options;
        spart_instrument_operator_options(p, bins->count, backward_op, &options);
        status = spart_regridder_create_streamed(context, &stream, &options, 1, budget,
                                                 backward_op ? backward : forward, NULL);
    }
    spart_instrument_planes_free(d.planes);
    spart_context_free_memory(context, d.first);
    return status;
}
