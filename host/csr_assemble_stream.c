/*
 * host/csr_assemble_stream.c: the streaming assembly's passes over one
 * block on the host, the twin of kernels/csr_assemble_stream.cu (the order
 * and the checks are written in src/operator/csr_assemble_stream.h).
 *
 * Each block is walked in order: a row's entries of a block take
 * consecutive slots from its cursor, in the block's order, which is what
 * the device obtains by its stable sort. With several threads, each owns
 * a fixed range of rows (thread t of T: rows [R t / T, R (t + 1) / T)) and
 * walks the whole block in order, acting only on its own rows' entries:
 * every cursor is touched by one thread, in block order, so the arrays
 * are the same for any thread count, and no per-thread histogram (8 bytes
 * a row each, which the budget does not have) is needed. The walks read
 * the block T times but share the random writes, which cost the most.
 * The indices are checked first, by the same threads over 64 chunks.
 *
 * A second design, a bucket scatter by row range (each block staged, 16
 * bytes an entry, so that each thread reads its own entries only), gave
 * the same arrays but was no faster on 16 threads (round 9: 2.58 s
 * against the walk's 2.54 s at 2e8 entries) and was withdrawn;
 * docs/dev/streaming-notes.md has its figures.
 */
#include "operator/csr_assemble_stream.h"

/* The element holding entry k of the block: the last j with offsets[j] <= k. */
static int64_t element_of(const int64_t *offsets, int64_t num_elements, int64_t k)
{
    int64_t low = 0, high = num_elements; /* offsets[low] <= k < offsets[high] */
    while (high - low > 1) {
        int64_t middle = low + (high - low) / 2;
        if (offsets[middle] <= k) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

/* The first entry of [begin, end) with an index out of its cells, or end. */
static int64_t first_bad_in(const spart_stream_source *source, int64_t begin, int64_t end)
{
    for (int64_t k = begin; k < end; k++) {
        int64_t in = source->indices_input[k], out = source->indices_output[k];
        if (in < 0 || in >= source->cells_input || out < 0 || out >= source->cells_output) {
            return k;
        }
    }
    return end;
}

/* Chunks of the index check: the first bad entry of the block is the
 * first of the first chunk that has one, whatever the threads. */
#define CHECK_CHUNKS 64

/* The first entry of the block with an index out of its cells, by up to
 * `team` threads. */
static void find_bad(const spart_stream_source *source, int team, spart_stream_tally *tally)
{
    int64_t n = source->num_entries, first[CHECK_CHUNKS];
    tally->first_bad = n;
    if (team > 1) {
#pragma omp parallel for schedule(static, 1) num_threads(team)
        for (int c = 0; c < CHECK_CHUNKS; c++) {
            first[c] = first_bad_in(source, n * c / CHECK_CHUNKS, n * (c + 1) / CHECK_CHUNKS);
        }
        for (int c = 0; c < CHECK_CHUNKS; c++) {
            if (first[c] < n * (c + 1) / CHECK_CHUNKS) {
                tally->first_bad = first[c];
                tally->bad_input = source->indices_input[first[c]];
                tally->bad_output = source->indices_output[first[c]];
                return;
            }
        }
        return;
    }
    for (int64_t k = 0; k < source->num_entries; k++) {
        int64_t in = source->indices_input[k], out = source->indices_output[k];
        if (in < 0 || in >= source->cells_input || out < 0 || out >= source->cells_output) {
            tally->first_bad = k;
            tally->bad_input = in;
            tally->bad_output = out;
            return;
        }
    }
}

static int64_t row_of(const spart_stream_source *source, int64_t element, int64_t k)
{
    int64_t cell = source->indices_output[k];
    return source->row_offset[element] + (source->row_lookup != NULL
                                              ? source->row_lookup[cell]
                                              : cell * source->row_lookup_stride);
}

static int64_t column_of(const spart_stream_source *source, int64_t element, int64_t k)
{
    int64_t cell = source->indices_input[k];
    return source->column_offset[element] + (source->column_lookup != NULL
                                                 ? source->column_lookup[cell]
                                                 : cell * source->column_lookup_stride);
}

/* Blocks smaller than this are walked by one thread. */
#define PARALLEL_ENTRIES 65536

/* The threads for a block of n entries. */
static int threads_for(int threads, int64_t n)
{
    return n < PARALLEL_ENTRIES || threads < 1 ? 1 : threads;
}

/* Count the kept entries whose rows lie in [row_begin, row_end). */
static int64_t count_rows(const spart_stream_source *source, int64_t row_begin, int64_t row_end,
                          int64_t *cursor)
{
    int64_t kept = 0;
    int64_t element = element_of(source->offsets, source->num_elements, 0);
    for (int64_t k = 0; k < source->num_entries; k++) {
        while (source->offsets[element + 1] <= k) {
            element++;
        }
        if (source->drop_zeros && source->values[k] == 0.0) {
            continue;
        }
        int64_t row = row_of(source, element, k);
        if (row >= row_begin && row < row_end) {
            cursor[row + 1]++;
            kept++;
        }
    }
    return kept;
}

void spart_host_stream_count(const spart_stream_source *source, int64_t num_rows, int threads,
                             int64_t *cursor, spart_stream_tally *tally)
{
    tally->kept = 0;
    tally->out_of_range = 0;
    int team = threads_for(threads, source->num_entries);
    find_bad(source, team, tally);
    if (tally->first_bad < source->num_entries || source->num_entries == 0) {
        return;
    }
    int64_t kept = 0;
#pragma omp parallel for schedule(static, 1) num_threads(team) reduction(+ : kept)
    for (int t = 0; t < team; t++) {
        kept += count_rows(source, num_rows * t / team, num_rows * (t + 1) / team, cursor);
    }
    tally->kept = kept;
}

/* Place the kept entries whose rows lie in [row_begin, row_end); counts
 * the kept ones and those whose slot falls outside the result. */
static void place_rows(const spart_stream_source *source, int64_t row_begin, int64_t row_end,
                       int64_t *cursor, int64_t num_entries, int32_t *columns32, int64_t *columns64,
                       float *values32, double *values64, int64_t *kept, int64_t *outside)
{
    int64_t element = element_of(source->offsets, source->num_elements, 0);
    for (int64_t k = 0; k < source->num_entries; k++) {
        while (source->offsets[element + 1] <= k) {
            element++;
        }
        double value = source->values[k];
        if (source->drop_zeros && value == 0.0) {
            continue;
        }
        int64_t row = row_of(source, element, k);
        if (row < row_begin || row >= row_end) {
            continue;
        }
        (*kept)++;
        int64_t slot = cursor[row + 1]++;
        if (slot < 0 || slot >= num_entries) {
            (*outside)++; /* a block that changed between the passes */
            continue;
        }
        int64_t column = column_of(source, element, k);
        if (columns32 != NULL) {
            columns32[slot] = (int32_t)column;
        } else {
            columns64[slot] = column;
        }
        if (values32 != NULL) {
            values32[slot] = (float)value;
        } else {
            values64[slot] = value;
        }
    }
}

void spart_host_stream_place(const spart_stream_source *source, int64_t num_rows, int threads,
                             int64_t *cursor, int64_t num_entries, int32_t *columns32,
                             int64_t *columns64, float *values32, double *values64,
                             spart_stream_tally *tally)
{
    tally->kept = 0;
    tally->out_of_range = 0;
    int team = threads_for(threads, source->num_entries);
    find_bad(source, team, tally);
    if (tally->first_bad < source->num_entries || source->num_entries == 0) {
        return;
    }
    int64_t kept = 0, outside = 0;
#pragma omp parallel for schedule(static, 1) num_threads(team) reduction(+ : kept, outside)
    for (int t = 0; t < team; t++) {
        int64_t mine = 0, beyond = 0;
        place_rows(source, num_rows * t / team, num_rows * (t + 1) / team, cursor, num_entries,
                   columns32, columns64, values32, values64, &mine, &beyond);
        kept += mine;
        outside += beyond;
    }
    tally->kept = kept;
    tally->out_of_range = outside;
}

void spart_host_stream_scan(int64_t *cursor, int64_t num_rows)
{
    int64_t running = 0;
    for (int64_t r = 0; r <= num_rows; r++) {
        int64_t count = cursor[r];
        cursor[r] = running;
        running += count;
    }
}

uint64_t spart_host_stream_fingerprint(const int64_t *values, int64_t count, int64_t first_index)
{
    uint64_t sum = 0;
    for (int64_t j = 0; j < count; j++) {
        sum += spart_stream_mix(first_index + j, values[j]);
    }
    return sum;
}
