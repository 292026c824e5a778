/*
 * tests/mpi/test_mpi_products.c: one operator split over the ranks gives
 * the one-process product bit for bit (label `mpi`; tests/modules/mpi.cmake
 * runs it with 1, 2 and 4 ranks; with --device each rank keeps its rows on
 * the CUDA device, several ranks sharing one device if need be).
 *
 * Matrices: CSR matrices (each row its own g: spart/csr_matrix.h) with a
 * row longer than a chunk that holds most entries (so that with 4 ranks
 * one rank gets no rows), empty rows, float64 and float32 values; and the
 * small instrument's forward and backward regridders (one g for all rows
 * from the whole matrix's mean: the split rows must keep it). Each is
 * compared with the whole matrix's product in this process: the product
 * with whole vectors (spart_distributed_operator_apply) and with
 * distributed vectors (spart_distributed_operator_multiply).
 */
#include <math.h>

#include "mpi_test_util.h"
#include "spart.h"
#include "spart/csr_matrix.h"

#define assert_int_equal(a, b) MPI_CHECK((a) == (b), "%lld != %lld", (long long)(a), (long long)(b))
#include "test_small_instrument.h"

/* A fixed pseudo-random sequence (the same on every rank). */
static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 33;
}

static double random_value(uint64_t *state)
{
    return ((double)next_random(state) / 2147483648.0) * 2.0 - 1.0;
}

/* A CSR matrix: row 0 holds `heavy` entries (past a chunk), the others
 * 0 to 40, about a tenth empty. */
static spart_csr_matrix *make_matrix(spart_context *context, int64_t rows, int64_t columns,
                                     int64_t heavy, spart_value_type type)
{
    uint64_t state = 12345;
    int64_t *row_ptr = malloc((size_t)(rows + 1) * sizeof *row_ptr);
    row_ptr[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t length = r == 0 ? heavy : (int64_t)(next_random(&state) % 50);
        row_ptr[r + 1] = row_ptr[r] + (length > 40 ? 0 : length);
    }
    int64_t n = row_ptr[rows];
    int32_t *cols = malloc((size_t)n * sizeof *cols);
    double *values64 = malloc((size_t)n * sizeof *values64);
    float *values32 = malloc((size_t)n * sizeof *values32);
    for (int64_t k = 0; k < n; k++) {
        cols[k] = (int32_t)(next_random(&state) % (uint64_t)columns);
        values64[k] = random_value(&state);
        values32[k] = (float)values64[k];
    }
    spart_csr_arrays arrays = {
        rows,        columns,
        n,           row_ptr,
        SPART_INT64, cols,
        SPART_INT32, type == SPART_FLOAT32 ? (const void *)values32 : (const void *)values64,
        type,        0};
    spart_csr_matrix *matrix = NULL;
    MPI_REQUIRE_OK(context, spart_csr_matrix_create(context, &arrays, NULL, &matrix));
    free(row_ptr);
    free(cols);
    free(values64);
    free(values32);
    return matrix;
}

/* x and y where the operator lives. */
typedef struct vectors {
    double *x, *y, *x_there, *y_there;
    int on_device;
} vectors;

static void vectors_make(spart_context *context, int on_device, int64_t columns, int64_t rows,
                         vectors *v)
{
    v->on_device = on_device;
    v->x = malloc((size_t)columns * sizeof(double));
    v->y = malloc((size_t)rows * sizeof(double));
    uint64_t state = 777;
    for (int64_t c = 0; c < columns; c++) {
        v->x[c] = random_value(&state);
    }
    v->x[0] = -0.0; /* a signed zero read by some rows */
    v->x_there = v->x;
    v->y_there = v->y;
    if (on_device) {
        MPI_REQUIRE_OK(
            context, spart_memory_allocate(context, 1, (size_t)columns * 8, (void **)&v->x_there));
        MPI_REQUIRE_OK(context,
                       spart_memory_allocate(context, 1, (size_t)rows * 8, (void **)&v->y_there));
        MPI_REQUIRE_OK(context,
                       spart_memory_copy(context, v->x_there, 1, v->x, 0, (size_t)columns * 8));
    }
}

static void vectors_free(spart_context *context, vectors *v)
{
    if (v->on_device) {
        spart_memory_free(context, 1, v->x_there);
        spart_memory_free(context, 1, v->y_there);
    }
    free(v->x);
    free(v->y);
}

/* This rank's rows of `whole`, an even split by rows (not by entries:
 * any contiguous blocks will do), as a CSR matrix of its own. */
static spart_csr_matrix *my_rows(spart_context *context, const spart_regridder *whole, int rank,
                                 int size)
{
    const int64_t *row_ptr = NULL;
    const int32_t *columns32 = NULL;
    const int64_t *columns64 = NULL;
    const void *values = NULL;
    MPI_REQUIRE_OK(context, spart_regridder_csr(whole, &row_ptr, &columns32, &columns64, &values));
    int64_t first[65];
    MPI_REQUIRE_OK(context, spart_distributed_partition_frames(
                                context, spart_regridder_num_rows(whole), size, first));
    int64_t rows = first[rank + 1] - first[rank];
    int64_t begin = row_ptr[first[rank]];
    int64_t *shifted = malloc((size_t)(rows + 1) * sizeof *shifted);
    for (int64_t r = 0; r <= rows; r++) {
        shifted[r] = row_ptr[first[rank] + r] - begin;
    }
    spart_value_type type = spart_regridder_value_type(whole);
    size_t value_bytes = type == SPART_FLOAT32 ? sizeof(float) : sizeof(double);
    spart_csr_arrays arrays = {rows,
                               spart_regridder_num_columns(whole),
                               shifted[rows],
                               shifted,
                               SPART_INT64,
                               columns32 != NULL ? (const void *)(columns32 + begin)
                                                 : (const void *)(columns64 + begin),
                               columns32 != NULL ? SPART_INT32 : SPART_INT64,
                               (const char *)values + (size_t)begin * value_bytes,
                               type,
                               0};
    spart_csr_matrix *matrix = NULL;
    MPI_REQUIRE_OK(context, spart_csr_matrix_create(context, &arrays, NULL, &matrix));
    free(shifted);
    return matrix;
}

/* The whole product here, the split one over the ranks: the same bits. */
static void check_operator(spart_context *context, const spart_communicator *communicator,
                           const spart_regridder *whole, spart_distributed_plan plan, int on_device,
                           const char *name)
{
    int rank = spart_communicator_rank(communicator);
    int size = spart_communicator_size(communicator);
    int64_t rows = spart_regridder_num_rows(whole);
    int64_t columns = spart_regridder_num_columns(whole);
    vectors v;
    vectors_make(context, on_device, columns, rows, &v);
    double *reference = malloc((size_t)rows * sizeof *reference);
    spart_array x = {v.x, spart_regridder_shape_input(whole)};
    MPI_REQUIRE_OK(context, spart_regridder_apply(context, whole, &x, reference, rows));

    spart_distributed_operator *split = NULL;
    MPI_REQUIRE_OK(context, spart_distributed_operator_create(context, communicator, whole,
                                                              on_device, &split));
    MPI_CHECK(spart_distributed_operator_num_rows(split) == rows, "%s", name);
    MPI_REQUIRE_OK(context, spart_distributed_operator_apply(context, split, v.x_there, v.y_there));
    if (on_device) {
        MPI_REQUIRE_OK(context, spart_memory_copy(context, v.y, 0, v.y_there, 1, (size_t)rows * 8));
    }
    MPI_CHECK(same_bits(v.y, reference, rows), "%s: apply differs at row %lld", name,
              (long long)first_difference(v.y, reference, rows));

    /* the rows of all ranks cover the matrix in rank order, balanced by entries */
    long long mine[3] = {spart_distributed_operator_first_row(split),
                         spart_distributed_operator_local_rows(split),
                         spart_distributed_operator_local_entries(split)};
    long long *all = malloc(3 * (size_t)size * sizeof *all);
    MPI_Allgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, MPI_COMM_WORLD);
    long long next = 0;
    long long entries = 0;
    for (int r = 0; r < size; r++) {
        MPI_CHECK(all[3 * r] == next, "%s: rank %d starts at row %lld, not %lld", name, r,
                  all[3 * r], next);
        next += all[3 * r + 1];
        entries += all[3 * r + 2];
    }
    MPI_CHECK(next == rows && entries == spart_regridder_num_entries(whole), "%s: %lld rows", name,
              next);
    free(all);

    {
        int64_t *first_column = malloc(((size_t)size + 1) * sizeof *first_column);
        MPI_REQUIRE_OK(context,
                       spart_distributed_operator_column_partition(context, split, first_column));
        int64_t first_row = spart_distributed_operator_first_row(split);
        int64_t local_rows = spart_distributed_operator_local_rows(split);
        double *y_local = malloc(((size_t)local_rows + 1) * sizeof *y_local);
        /* x and y where the operator is: the whole vectors' buffers there */
        const double *x_local = v.x_there + first_column[rank];
        double *y_there = on_device ? v.y_there : y_local;
        for (int round = 0; round < 2; round++) { /* the exchange is planned once, then reused */
            MPI_REQUIRE_OK(context,
                           spart_distributed_operator_multiply(context, split, x_local, y_there));
            if (on_device) {
                MPI_REQUIRE_OK(context, spart_memory_copy(context, y_local, 0, y_there, 1,
                                                          (size_t)local_rows * 8));
            }
            MPI_CHECK(same_bits(y_local, reference + first_row, local_rows),
                      "%s: multiply (round %d) differs at local row %lld", name, round,
                      (long long)first_difference(y_local, reference + first_row, local_rows));
        }
        free(y_local);
        free(first_column);
    }
    spart_distributed_operator_free(split);

    /* each rank brings its own rows (no rank holds the whole matrix) */
    spart_csr_matrix *mine_only = my_rows(context, whole, rank, size);
    MPI_REQUIRE_OK(context, spart_distributed_operator_create_from_rows(
                                context, communicator, spart_csr_matrix_regridder(mine_only), plan,
                                on_device, &split));
    spart_csr_matrix_free(mine_only);
    MPI_REQUIRE_OK(context, spart_distributed_operator_apply(context, split, v.x_there, v.y_there));
    if (on_device) {
        MPI_REQUIRE_OK(context, spart_memory_copy(context, v.y, 0, v.y_there, 1, (size_t)rows * 8));
    }
    MPI_CHECK(same_bits(v.y, reference, rows), "%s: from rows, apply differs at row %lld", name,
              (long long)first_difference(v.y, reference, rows));
    spart_distributed_operator_free(split);
    free(reference);
    vectors_free(context, &v);
}

/* Ranks that pass different matrices all fail, with a sentence. */
static void check_mismatch(spart_context *context, const spart_communicator *communicator)
{
    int rank = spart_communicator_rank(communicator);
    spart_csr_matrix *matrix = make_matrix(context, 50 + (rank > 0), 60, 5, SPART_FLOAT64);
    spart_distributed_operator *split = NULL;
    spart_status status = spart_distributed_operator_create(
        context, communicator, spart_csr_matrix_regridder(matrix), 0, &split);
    if (spart_communicator_size(communicator) > 1) {
        MPI_CHECK(status == SPART_ERROR_SHAPE_MISMATCH && split == NULL, "status %s",
                  spart_status_string(status));
        MPI_CHECK(strstr(spart_context_error(context), "same regridder") != NULL, "%s",
                  spart_context_error(context));
    } else {
        MPI_CHECK(status == SPART_OK, "%s", spart_context_error(context));
    }
    spart_distributed_operator_free(split);
    spart_csr_matrix_free(matrix);
    MPI_CHECK(spart_distributed_operator_create(context, communicator, NULL, 0, &split) ==
                  SPART_ERROR_NULL_POINTER,
              "NULL whole");
    spart_csr_matrix *narrow = make_matrix(context, 20, 30 + (rank > 0), 5, SPART_FLOAT64);
    status = spart_distributed_operator_create_from_rows(context, communicator,
                                                         spart_csr_matrix_regridder(narrow),
                                                         SPART_DISTRIBUTED_PLAN_MEAN, 0, &split);
    if (spart_communicator_size(communicator) > 1) {
        MPI_CHECK(status == SPART_ERROR_SHAPE_MISMATCH && split == NULL, "from rows: status %s",
                  spart_status_string(status));
    }
    spart_distributed_operator_free(split);
    split = NULL;
    MPI_CHECK(spart_distributed_operator_create_from_rows(
                  context, communicator, spart_csr_matrix_regridder(narrow),
                  (spart_distributed_plan)7, 0, &split) == SPART_ERROR_UNKNOWN_ENUM,
              "unknown plan");
    spart_csr_matrix_free(narrow);
}

/* An allocator that refuses blocks of 64 KiB or more. */
static void *small_malloc(void *user, size_t size)
{
    (void)user;
    return size < 65536 ? malloc(size) : NULL;
}

static void *small_realloc(void *user, void *pointer, size_t size)
{
    (void)user;
    return size < 65536 ? realloc(pointer, size) : NULL;
}

static void plain_free(void *user, void *pointer)
{
    (void)user;
    free(pointer);
}

/* The last rank runs out of memory while the others would succeed: every
 * rank fails, none is left to wait in its first product. */
static void check_memory_failure_on_one_rank(const spart_communicator *communicator,
                                             spart_context *context)
{
    int rank = spart_communicator_rank(communicator);
    int size = spart_communicator_size(communicator);
    spart_csr_matrix *matrix = make_matrix(context, 2000, 3000, 60000, SPART_FLOAT64);
    spart_allocator small = {small_malloc, small_realloc, plain_free, NULL};
    spart_context *tight = context;
    if (rank == size - 1) {
        MPI_REQUIRE_OK(context, spart_context_create_with_allocator(&small, &tight));
    }
    spart_distributed_operator *split = NULL;
    spart_status status = spart_distributed_operator_create(
        tight, communicator, spart_csr_matrix_regridder(matrix), 0, &split);
    spart_status expected = rank == size - 1 ? SPART_ERROR_OUT_OF_MEMORY : SPART_ERROR_INTERNAL;
    MPI_CHECK(status == expected && split == NULL, "rank %d: %s: %s", rank,
              spart_status_string(status), spart_context_error(tight));
    if (tight != context) {
        spart_context_free(tight);
    }
    spart_csr_matrix_free(matrix);
}

int main(int argc, char **argv)
{
    int provided = 0; /* spart calls MPI from the main thread, its OpenMP threads never */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int on_device = mpi_test_on_device(argc, argv);
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (on_device) {
        mpi_test_choose_device(context);
    }
    spart_communicator *communicator = NULL;
    MPI_REQUIRE_OK(context, spart_communicator_create(context, NULL, &communicator));

    spart_value_type types[2] = {SPART_FLOAT64, SPART_FLOAT32};
    const char *names[2] = {"csr float64", "csr float32"};
    for (int t = 0; t < 2; t++) {
        spart_csr_matrix *matrix = make_matrix(context, 2000, 3000, 60000, types[t]);
        check_operator(context, communicator, spart_csr_matrix_regridder(matrix),
                       SPART_DISTRIBUTED_PLAN_BY_ROW, on_device, names[t]);
        spart_csr_matrix_free(matrix);
    }
    small_instrument p;
    make_small_instrument(context, &p);
    spart_instrument *instrument = NULL;
    MPI_REQUIRE_OK(context, spart_instrument_create(context, &p.params, &instrument));
    check_operator(context, communicator, spart_instrument_forward(instrument),
                   SPART_DISTRIBUTED_PLAN_MEAN, on_device, "instrument forward");
    check_operator(context, communicator, spart_instrument_backward(instrument),
                   SPART_DISTRIBUTED_PLAN_MEAN, on_device, "instrument backward");
    spart_instrument_free(instrument);
    free(p.scene);
    check_mismatch(context, communicator);
    check_memory_failure_on_one_rank(communicator, context);

    spart_communicator_free(communicator);
    spart_context_free(context);
    int code = mpi_test_verdict(on_device ? "test_mpi_products --device" : "test_mpi_products");
    MPI_Finalize();
    return code;
}
