/*
 * tests/unit/test_vcs.c: VCS count matrices (spart/vcs.h) on the host: the
 * canonical layout, each recipe against a dense float64 reference (both
 * sides, both formats, transposed views, float32 and float64, widths 0 to
 * 130), degenerate shapes, sub-selection, supplied factors, golden
 * digests for 1, 2 and 16 threads, and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "core/log_math.h"
#include "spart/vcs.h"
#include "test_util.h"
#include "vcs/vcs_kernels.h"
#include "vcs/vcs_math.h"
#include "vcs_test_data.h"

static const int64_t widths[] = {0, 1, 3, 8, 32, 64, 130};
#define N_WIDTHS ((int)(sizeof widths / sizeof widths[0]))

/* A matrix from COO, failing the test on error. */
static spart_vcs *make(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                       const int64_t *rows, const int64_t *cols, const double *values,
                       spart_vcs_recipe recipe, spart_vcs_format format)
{
    spart_vcs *vcs = NULL;
    spart_status status = spart_vcs_create_from_coo(context, n_rows, n_cols, nnz, rows, cols,
                                                    values, recipe, format, &vcs);
    if (status != SPART_OK) {
        fail_msg("create: %s", spart_context_error(context));
    }
    return vcs;
}

/* out = op(Y) B or B op(Y) from the dense view y (n_rows x n_cols). */
static void dense_product(const double *y, int64_t n_rows, int64_t n_cols, int transposed,
                          spart_vcs_direction direction, int64_t width, const double *b,
                          double *out, double *magnitude, double offset_bound)
{
    /* A (ar x ac) = y or y^T */
    const int64_t ar = transposed ? n_cols : n_rows, ac = transposed ? n_rows : n_cols;
#define A_AT(r, c) (transposed ? y[(c)*n_cols + (r)] : y[(r)*n_cols + (c)])
    if (direction == SPART_VCS_A_TIMES_B) {
        for (int64_t r = 0; r < ar; r++) {
            for (int64_t c = 0; c < width; c++) {
                double sum = 0.0, mag = 0.0;
                for (int64_t k = 0; k < ac; k++) {
                    sum += A_AT(r, k) * b[k * width + c];
                    mag += (fabs(A_AT(r, k)) + offset_bound) * fabs(b[k * width + c]);
                }
                out[r * width + c] = sum;
                magnitude[r * width + c] = mag;
            }
        }
    } else {
        for (int64_t c = 0; c < width; c++) {
            for (int64_t q = 0; q < ac; q++) {
                double sum = 0.0, mag = 0.0;
                for (int64_t k = 0; k < ar; k++) {
                    sum += b[c * ar + k] * A_AT(k, q);
                    mag += fabs(b[c * ar + k]) * (fabs(A_AT(k, q)) + offset_bound);
                }
                out[c * ac + q] = sum;
                magnitude[c * ac + q] = mag;
            }
        }
    }
#undef A_AT
}

/* Every direction, view, type and width of `vcs` against the dense view. */
static void check_products(spart_context *context, spart_vcs *vcs, const double *y, int64_t n_rows,
                           int64_t n_cols, uint64_t seed, int all_widths)
{
    /* |o| bounds the rounding of Delta + o where Y cancels to 0 */
    double offset_bound = 0.0;
    double *centre = malloc((size_t)(n_cols + 1) * sizeof(double));
    double *scale = malloc((size_t)(n_cols + 1) * sizeof(double));
    assert_int_equal(spart_vcs_statistics(context, vcs, NULL, NULL, centre, scale), SPART_OK);
    for (int64_t j = 0; j < n_cols; j++) {
        offset_bound = fmax(offset_bound, fabs(centre[j] * scale[j]));
    }
    free(centre);
    free(scale);
    spart_vcs *view = NULL;
    assert_int_equal(spart_vcs_transpose(context, vcs, &view), SPART_OK);
    for (int transposed = 0; transposed < 2; transposed++) {
        spart_vcs *a = transposed ? view : vcs;
        const int64_t ar = transposed ? n_cols : n_rows, ac = transposed ? n_rows : n_cols;
        for (int direction = 0; direction < 2; direction++) {
            const int64_t b_len = direction == 0 ? ac : ar, out_len = direction == 0 ? ar : ac;
            for (int w = 0; w < N_WIDTHS; w++) {
                const int64_t width = widths[w];
                if (!all_widths && width != 0 && width != 3 && width != 130) {
                    continue;
                }
                const size_t nb = (size_t)(b_len * width + 1), no = (size_t)(out_len * width + 1);
                double *b = malloc(nb * sizeof(double));
                float *bf = malloc(nb * sizeof(float));
                double *out = malloc(no * sizeof(double)), *ref = malloc(no * sizeof(double));
                double *mag = malloc(no * sizeof(double));
                float *outf = malloc(no * sizeof(float));
                uint64_t state = seed + (uint64_t)(w * 4 + direction * 2 + transposed);
                for (size_t k = 0; k < nb; k++) {
                    bf[k] = (float)(2.0 * vcs_uniform(&state) - 1.0);
                    b[k] = bf[k];
                }
                for (size_t k = 0; k < no; k++) {
                    out[k] = NAN; /* poisoned */
                    outf[k] = NAN;
                }
                dense_product(y, n_rows, n_cols, transposed, (spart_vcs_direction)direction, width,
                              b, ref, mag, offset_bound);
                if (spart_vcs_multiply(context, a, (spart_vcs_direction)direction, width, b, out) !=
                        SPART_OK ||
                    spart_vcs_multiply_float(context, a, (spart_vcs_direction)direction, width, bf,
                                             outf) != SPART_OK) {
                    fail_msg("multiply: %s", spart_context_error(context));
                }
                for (int64_t k = 0; k < out_len * width; k++) {
                    /* float64: sums of up to n terms, each rounded a few times */
                    const double tolerance =
                        1e-13 * mag[k] * (double)(n_rows + n_cols + 8) + 1e-300;
                    if (!(fabs(out[k] - ref[k]) <= tolerance)) {
                        fail_msg("float64 transposed %d direction %d width %lld [%lld]: %.17g, "
                                 "reference %.17g",
                                 transposed, direction, (long long)width, (long long)k, out[k],
                                 ref[k]);
                    }
                    /* float32: the float64 sum rounded once to float */
                    const double tolerance_f = 6.0e-8 * fabs(ref[k]) + tolerance + 1e-37;
                    if (!(fabs((double)outf[k] - ref[k]) <= tolerance_f)) {
                        fail_msg("float32 transposed %d direction %d width %lld [%lld]: %.9g, "
                                 "reference %.17g",
                                 transposed, direction, (long long)width, (long long)k,
                                 (double)outf[k], ref[k]);
                    }
                }
                free(b);
                free(bf);
                free(out);
                free(ref);
                free(mag);
                free(outf);
            }
        }
    }
    spart_vcs_free(view);
}

/* The counts and Delta of to_csr against the dense matrices. */
static void check_to_csr(spart_context *context, spart_vcs *vcs, const double *x, const double *y,
                         int64_t n_rows, int64_t n_cols, spart_vcs_recipe recipe)
{
    int64_t nr = 0, nc = 0, nnz = 0, runs = 0;
    assert_int_equal(spart_vcs_shape(vcs, &nr, &nc, &nnz, &runs), SPART_OK);
    assert_int_equal(nr, n_rows);
    assert_int_equal(nc, n_cols);
    int64_t *row_ptr = malloc((size_t)(nr + 1) * sizeof(int64_t));
    int64_t *col_idx = malloc((size_t)(nnz + 1) * sizeof(int64_t));
    double *values = malloc((size_t)(nnz + 1) * sizeof(double));
    double *delta = malloc((size_t)(nnz + 1) * sizeof(double));
    double *centre = malloc((size_t)(n_cols + 1) * sizeof(double));
    double *scale = malloc((size_t)(n_cols + 1) * sizeof(double));
    assert_int_equal(spart_vcs_to_csr(context, vcs, row_ptr, col_idx, values, delta), SPART_OK);
    assert_int_equal(spart_vcs_statistics(context, vcs, NULL, NULL, centre, scale), SPART_OK);
    int64_t count = 0;
    for (int64_t i = 0; i < n_rows; i++) {
        assert_int_equal(row_ptr[i], count);
        for (int64_t j = 0; j < n_cols; j++) {
            if (x[i * n_cols + j] != 0.0) {
                assert_int_equal(col_idx[count], j);
                assert_true(values[count] == x[i * n_cols + j]);
                /* Delta + o = Y */
                const double got = delta[count] - centre[j] * scale[j];
                const double want = y[i * n_cols + j];
                if (!(fabs(got - want) <=
                      1e-12 * (fabs(want) + fabs(centre[j] * scale[j])) + 1e-300)) {
                    fail_msg("recipe %d Delta (%lld, %lld): %.17g, reference %.17g", (int)recipe,
                             (long long)i, (long long)j, got, want);
                }
                count++;
            }
        }
    }
    assert_int_equal(count, nnz);
    free(row_ptr);
    free(col_idx);
    free(values);
    free(delta);
    free(centre);
    free(scale);
}

static void test_log_matches_the_c_library(void **state)
{
    (void)state;
    uint64_t seed = 7;
    double worst = 0.0;
    for (int k = 0; k < 200000; k++) {
        const double x = ldexp(0.5 + vcs_uniform(&seed), (int)(vcs_uniform(&seed) * 80.0) - 40);
        const double want = log(x);
        const double ulp = nextafter(fabs(want), INFINITY) - fabs(want);
        const double error = fabs(spart_log(x) - want) / (ulp > 0 ? ulp : 1e-300);
        worst = error > worst ? error : worst;
        const double want1 = log1p(x);
        const double ulp1 = nextafter(want1, INFINITY) - want1;
        const double error1 = fabs(spart_log1p(x) - want1) / ulp1;
        worst = error1 > worst ? error1 : worst;
    }
    if (!(worst <= 2.0)) {
        fail_msg("worst error %g units in the last place", worst);
    }
    assert_true(spart_log(1.0) == 0.0);
    assert_true(spart_log1p(0.0) == 0.0);
    assert_true(isinf(spart_log(0.0)) && spart_log(0.0) < 0);
    assert_true(isnan(spart_log(-1.0)));
    assert_true(isinf(spart_log(INFINITY)));
    assert_true(spart_log(4.9406564584124654e-324) == log(4.9406564584124654e-324));
}

/* The product's g of a block of entries (host/vcs_product.c: a vectorized
 * loop for the log recipes, both paths of log1p computed and one selected)
 * gives spart_vcs_g's bits at every argument: random ones over 2^-60 ..
 * 2^40, both sides of the series' bound 0.41, zeros, subnormals, the
 * largest double, infinities, NaN and negatives (those by the scalar g). */
static void test_block_g_equals_the_scalar_g(void **state)
{
    (void)state;
    const double special[] = {0.0,
                              -0.0,
                              4.9406564584124654e-324,
                              2.2250738585072014e-308,
                              1e-300,
                              1e-17,
                              0.40999999999999998,
                              0.41,
                              0.41000000000000003,
                              0.99,
                              1.0,
                              1.5,
                              2.0,
                              1e10,
                              1e300,
                              1.7976931348623157e308,
                              1.7976931348623157e305,
                              INFINITY,
                              -INFINITY,
                              NAN,
                              -1e-300,
                              -0.1,
                              -0.29,
                              -0.5,
                              -1.0,
                              -2.0};
    const int n_special = (int)(sizeof special / sizeof special[0]);
    enum { n = 20011 };
    double *argument = malloc(n * sizeof(double)), *got = malloc(n * sizeof(double));
    uint64_t seed = 23;
    for (int k = 0; k < n; k++) {
        if (k < n_special) {
            argument[k] = special[k];
        } else if (k % 3 == 0) {
            argument[k] = 0.35 + 0.12 * vcs_uniform(&seed); /* about 0.41 */
        } else {
            argument[k] = ldexp(0.5 + vcs_uniform(&seed), (int)(vcs_uniform(&seed) * 100.0) - 60);
        }
    }
    for (int code = SPART_VCS_G_IDENTITY; code <= SPART_VCS_G_SQRT; code++) {
        spart_vcs_host_g_block(code, argument, got, n);
        for (int k = 0; k < n; k++) {
            const double want = spart_vcs_g(code, argument[k]);
            if (memcmp(&want, &got[k], sizeof want) != 0 && !(isnan(want) && isnan(got[k]))) {
                fail_msg("g %d at %.17g: block %.17g, scalar %.17g", code, argument[k], got[k],
                         want);
            }
        }
    }
    free(argument);
    free(got);
}

/* The same arrays from CSR and from shuffled COO, ascending runs, ascending
 * minor indices within a run. */
static void test_layout_is_canonical(void **state)
{
    spart_context *context = *state;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(41, 29, 0.3, 11, &nnz, &rows, &cols, &values);
    int64_t *row_ptr = calloc(42, sizeof(int64_t));
    for (int64_t k = 0; k < nnz; k++) {
        row_ptr[rows[k] + 1]++;
    }
    for (int i = 0; i < 41; i++) {
        row_ptr[i + 1] += row_ptr[i];
    }
    /* shuffle the COO triples */
    uint64_t s = 5;
    for (int64_t k = nnz - 1; k > 0; k--) {
        int64_t j = (int64_t)(vcs_uniform(&s) * (double)(k + 1));
        int64_t tr = rows[k], tc = cols[k];
        double tv = values[k];
        rows[k] = rows[j], cols[k] = cols[j], values[k] = values[j];
        rows[j] = tr, cols[j] = tc, values[j] = tv;
    }
    int64_t *csr_cols = malloc((size_t)nnz * sizeof(int64_t));
    double *csr_values = malloc((size_t)nnz * sizeof(double));
    int64_t *cursor = malloc(42 * sizeof(int64_t));
    memcpy(cursor, row_ptr, 42 * sizeof(int64_t));
    for (int64_t k = nnz - 1; k >= 0; k--) { /* reversed order within rows */
        csr_cols[cursor[rows[k]]] = cols[k];
        csr_values[cursor[rows[k]]++] = values[k];
    }
    for (int format = 0; format < 2; format++) {
        spart_vcs *a = make(context, 41, 29, nnz, rows, cols, values, SPART_VCS_SCANPY,
                            (spart_vcs_format)format);
        spart_vcs *b = NULL;
        assert_int_equal(spart_vcs_create_from_csr(context, 41, 29, row_ptr, csr_cols, csr_values,
                                                   SPART_VCS_SCANPY, (spart_vcs_format)format, &b),
                         SPART_OK);
        assert_int_equal(spart_vcs_get_format(a), format);
        int64_t r1, r2;
        assert_int_equal(spart_vcs_shape(a, NULL, NULL, NULL, &r1), SPART_OK);
        assert_int_equal(spart_vcs_shape(b, NULL, NULL, NULL, &r2), SPART_OK);
        assert_int_equal(r1, r2);
        assert_true(r1 < nnz); /* fewer runs than entries: values are stored once a slice */
        int64_t *rp1 = malloc(42 * sizeof(int64_t)), *rp2 = malloc(42 * sizeof(int64_t));
        int64_t *c1 = malloc((size_t)nnz * sizeof(int64_t)),
                *c2 = malloc((size_t)nnz * sizeof(int64_t));
        double *v1 = malloc((size_t)nnz * sizeof(double)),
               *v2 = malloc((size_t)nnz * sizeof(double));
        double *d1 = malloc((size_t)nnz * sizeof(double)),
               *d2 = malloc((size_t)nnz * sizeof(double));
        assert_int_equal(spart_vcs_to_csr(context, a, rp1, c1, v1, d1), SPART_OK);
        assert_int_equal(spart_vcs_to_csr(context, b, rp2, c2, v2, d2), SPART_OK);
        assert_memory_equal(rp1, rp2, 42 * sizeof(int64_t));
        assert_memory_equal(rp1, row_ptr, 42 * sizeof(int64_t));
        assert_memory_equal(c1, c2, (size_t)nnz * sizeof(int64_t));
        assert_memory_equal(v1, v2, (size_t)nnz * sizeof(double));
        assert_memory_equal(d1, d2, (size_t)nnz * sizeof(double));
        for (int i = 0; i < 41; i++) {
            for (int64_t e = rp1[i] + 1; e < rp1[i + 1]; e++) {
                assert_true(c1[e] > c1[e - 1]);
            }
        }
        free(rp1), free(rp2), free(c1), free(c2), free(v1), free(v2), free(d1), free(d2);
        spart_vcs_free(a);
        spart_vcs_free(b);
    }
    free(rows), free(cols), free(values), free(row_ptr), free(csr_cols), free(csr_values);
    free(cursor);
}

/* One count matrix through every recipe, format, side and width. */
static void check_all_recipes(spart_context *context, int64_t n_rows, int64_t n_cols, int64_t nnz,
                              const int64_t *rows, const int64_t *cols, const double *values,
                              uint64_t seed, int all_widths)
{
    double *x = vcs_dense(n_rows, n_cols, nnz, rows, cols, values);
    for (int recipe = 0; recipe <= SPART_VCS_PEARSON; recipe++) {
        double *y = vcs_reference_view(x, n_rows, n_cols, (spart_vcs_recipe)recipe, NULL, NULL);
        for (int64_t k = 0; k < n_rows * n_cols; k++) {
            assert_true(isfinite(y[k]));
        }
        for (int format = 0; format < 2; format++) {
            spart_vcs *vcs = make(context, n_rows, n_cols, nnz, rows, cols, values,
                                  (spart_vcs_recipe)recipe, (spart_vcs_format)format);
            check_to_csr(context, vcs, x, y, n_rows, n_cols, (spart_vcs_recipe)recipe);
            check_products(context, vcs, y, n_rows, n_cols, seed + (uint64_t)recipe, all_widths);
            spart_vcs_free(vcs);
        }
        free(y);
    }
    free(x);
}

/* A random matrix with an empty row, an empty column and a constant column. */
static void test_recipes_match_the_dense_reference(void **state)
{
    spart_context *context = *state;
    const int64_t n_rows = 37, n_cols = 23;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(n_rows, n_cols, 0.35, 3, &nnz, &rows, &cols, &values);
    int64_t kept = 0;
    for (int64_t k = 0; k < nnz; k++) { /* row 4 and columns 2 and 9 emptied */
        if (rows[k] != 4 && cols[k] != 2 && cols[k] != 9) {
            rows[kept] = rows[k], cols[kept] = cols[k], values[kept] = values[k];
            kept++;
        }
    }
    rows = realloc(rows, (size_t)(kept + n_rows) * sizeof(int64_t));
    cols = realloc(cols, (size_t)(kept + n_rows) * sizeof(int64_t));
    values = realloc(values, (size_t)(kept + n_rows) * sizeof(double));
    for (int64_t i = 0; i < n_rows; i++) { /* column 9: 3 in every row */
        rows[kept] = i, cols[kept] = 9, values[kept] = 3.0;
        kept++;
    }
    check_all_recipes(context, n_rows, n_cols, kept, rows, cols, values, 100, 1);
    free(rows), free(cols), free(values);
}

/* The vsparse fixture: 300 x 90, counts at density 0.4. */
static void test_fixture_300_by_90(void **state)
{
    spart_context *context = *state;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(300, 90, 0.4, 17, &nnz, &rows, &cols, &values);
    check_all_recipes(context, 300, 90, nnz, rows, cols, values, 200, 0);
    free(rows), free(cols), free(values);
}

static void test_degenerate_shapes(void **state)
{
    spart_context *context = *state;
    const int64_t shapes[][2] = {{1, 1}, {1, 7}, {5, 1}, {3, 3}, {0, 0}, {0, 4}, {4, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t n_rows = shapes[s][0], n_cols = shapes[s][1];
        for (int full = 0; full < 3; full++) { /* empty, full, every other entry */
            int64_t rows[64], cols[64];
            double values[64];
            int64_t nnz = 0;
            for (int64_t i = 0; i < n_rows; i++) {
                for (int64_t j = 0; j < n_cols; j++) {
                    if (full == 1 || (full == 2 && (i + j) % 2 == 0)) {
                        rows[nnz] = i, cols[nnz] = j, values[nnz] = (double)(1 + (i + 2 * j) % 5);
                        nnz++;
                    }
                }
            }
            check_all_recipes(context, n_rows, n_cols, nnz, rows, cols, values, 300 + s, 1);
        }
    }
}

static void test_selection_recomputes_statistics(void **state)
{
    spart_context *context = *state;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(50, 30, 0.3, 23, &nnz, &rows, &cols, &values);
    double *x = vcs_dense(50, 30, nnz, rows, cols, values);
    const int64_t pick_rows[] = {7, 3, 49, 0, 21, 22, 30, 11};
    const int64_t pick_cols[] = {29, 1, 2, 15, 8};
    double xs[8 * 5];
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 5; j++) {
            xs[i * 5 + j] = x[pick_rows[i] * 30 + pick_cols[j]];
        }
    }
    for (int recipe = 0; recipe <= SPART_VCS_PEARSON; recipe++) {
        spart_vcs *vcs = make(context, 50, 30, nnz, rows, cols, values, (spart_vcs_recipe)recipe,
                              SPART_VCS_VCSC);
        spart_vcs *selected = NULL, *view = NULL, *selected_t = NULL;
        assert_int_equal(spart_vcs_select(context, vcs, 8, pick_rows, 5, pick_cols, &selected),
                         SPART_OK);
        double *y = vcs_reference_view(xs, 8, 5, (spart_vcs_recipe)recipe, NULL, NULL);
        check_to_csr(context, selected, xs, y, 8, 5, (spart_vcs_recipe)recipe);
        check_products(context, selected, y, 8, 5, 400, 1);
        /* through a transposed view: rows of the view are genes */
        assert_int_equal(spart_vcs_transpose(context, vcs, &view), SPART_OK);
        assert_int_equal(spart_vcs_select(context, view, 5, pick_cols, 8, pick_rows, &selected_t),
                         SPART_OK);
        assert_true(spart_vcs_is_transposed(selected_t));
        spart_vcs *back = NULL;
        assert_int_equal(spart_vcs_transpose(context, selected_t, &back), SPART_OK);
        check_to_csr(context, back, xs, y, 8, 5, (spart_vcs_recipe)recipe);
        spart_vcs_free(back);
        spart_vcs_free(selected_t);
        spart_vcs_free(view);
        spart_vcs_free(selected);
        spart_vcs_free(vcs);
        free(y);
    }
    free(x), free(rows), free(cols), free(values);
}

static void test_supplied_factors(void **state)
{
    spart_context *context = *state;
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(40, 12, 0.4, 29, &nnz, &rows, &cols, &values);
    double *x = vcs_dense(40, 12, nnz, rows, cols, values);
    double a[40], b[12];
    for (int i = 0; i < 40; i++) {
        a[i] = 0.25 + 0.01 * i;
    }
    for (int j = 0; j < 12; j++) {
        b[j] = 0.5 + 0.1 * j;
    }
    spart_vcs *vcs =
        make(context, 40, 12, nnz, rows, cols, values, SPART_VCS_PEARSON, SPART_VCS_VCSR);
    assert_int_equal(spart_vcs_set_factors(context, vcs, a, b), SPART_OK);
    double *y = vcs_reference_view(x, 40, 12, SPART_VCS_PEARSON, a, b);
    check_to_csr(context, vcs, x, y, 40, 12, SPART_VCS_PEARSON);
    check_products(context, vcs, y, 40, 12, 500, 1);
    free(y);
    a[3] = 0.0;
    assert_int_equal(spart_vcs_set_factors(context, vcs, a, NULL), SPART_ERROR_INVALID_ARGUMENT);
    a[3] = -1.0;
    assert_int_equal(spart_vcs_set_factors(context, vcs, a, NULL), SPART_ERROR_INVALID_ARGUMENT);
    b[0] = NAN;
    assert_int_equal(spart_vcs_set_factors(context, vcs, NULL, b), SPART_ERROR_NOT_FINITE);
    spart_vcs_free(vcs);
    free(x), free(rows), free(cols), free(values);
}

/* The digest of the four directions (VCSR and VCSC, both sides) in
 * float64 and float32, width 16, for a thread count. */
static uint64_t four_direction_digest(spart_context *context, int threads, spart_vcs_recipe recipe)
{
    assert_int_equal(spart_context_set_threads(context, threads), SPART_OK);
    int64_t nnz, *rows, *cols;
    double *values;
    vcs_random_counts(300, 90, 0.4, 17, &nnz, &rows, &cols, &values);
    uint64_t digest = 0;
    double b[300 * 16], out[300 * 16];
    float bf[300 * 16], outf[300 * 16];
    uint64_t s = 99;
    for (int k = 0; k < 300 * 16; k++) {
        b[k] = 2.0 * vcs_uniform(&s) - 1.0;
        bf[k] = (float)b[k];
    }
    for (int format = 0; format < 2; format++) {
        spart_vcs *vcs =
            make(context, 300, 90, nnz, rows, cols, values, recipe, (spart_vcs_format)format);
        for (int direction = 0; direction < 2; direction++) {
            const int64_t n = direction == 0 ? 300 * 16 : 90 * 16;
            assert_int_equal(
                spart_vcs_multiply(context, vcs, (spart_vcs_direction)direction, 16, b, out),
                SPART_OK);
            assert_int_equal(spart_vcs_multiply_float(context, vcs, (spart_vcs_direction)direction,
                                                      16, bf, outf),
                             SPART_OK);
            digest = digest * 31 + digest_doubles(out, n);
            digest = digest * 31 + digest_bytes(outf, (size_t)n * sizeof(float));
        }
        spart_vcs_free(vcs);
    }
    free(rows), free(cols), free(values);
    assert_int_equal(spart_context_set_threads(context, 0), SPART_OK);
    return digest;
}

static void test_golden_digests_for_1_2_16_threads(void **state)
{
    spart_context *context = *state;
    /* golden: host = device (tests/unit/test_cuda_vcs.c checks the same
     * numbers on a GPU) */
    const uint64_t golden[] = {0xae253ae4f2b46d86ULL, 0x8e84a9f00f15fd7eULL, 0x4f8ee793dce8a0eaULL,
                               0x85ef52585e6fad9aULL, 0x589223f14496bb18ULL};
    for (int recipe = 0; recipe <= SPART_VCS_PEARSON; recipe++) {
        const uint64_t one = four_direction_digest(context, 1, (spart_vcs_recipe)recipe);
        assert_true(one == four_direction_digest(context, 2, (spart_vcs_recipe)recipe));
        assert_true(one == four_direction_digest(context, 16, (spart_vcs_recipe)recipe));
        if (golden[recipe] != 0 && one != golden[recipe]) {
            fail_msg("recipe %d: digest 0x%016llx, golden 0x%016llx", recipe,
                     (unsigned long long)one, (unsigned long long)golden[recipe]);
        }
        print_message("recipe %d digest 0x%016llxULL\n", recipe, (unsigned long long)one);
    }
}

static void test_bad_input_is_refused(void **state)
{
    spart_context *context = *state;
    spart_vcs *vcs = NULL;
    const int64_t rows[] = {0, 1, 1}, cols[] = {0, 0, 2};
    const double good[] = {1.0, 2.0, 3.0}, negative[] = {1.0, -2.0, 3.0};
    const double nan_values[] = {1.0, NAN, 3.0};
    const int64_t dup_rows[] = {0, 1, 1}, dup_cols[] = {0, 2, 2};
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, negative,
                                               SPART_VCS_CP10K_LOG1P, SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "negative count"));
    assert_null(vcs);
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, negative,
                                               SPART_VCS_RAW, SPART_VCS_VCSR, &vcs),
                     SPART_OK); /* raw takes any value */
    spart_vcs_free(vcs);
    vcs = NULL;
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, good,
                                               (spart_vcs_recipe)9, SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_non_null(strstr(spart_context_error(context), "recipe = 9"));
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, good, SPART_VCS_RAW,
                                               (spart_vcs_format)2, &vcs),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, nan_values,
                                               SPART_VCS_RAW, SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_NOT_FINITE);
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, dup_rows, dup_cols, good,
                                               SPART_VCS_RAW, SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "(1, 2) is given twice"));
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 2, 3, rows, cols, good, SPART_VCS_RAW,
                                               SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_vcs_create_from_coo(context, -1, 2, 0, rows, cols, good, SPART_VCS_RAW,
                                               SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, NULL, cols, good, SPART_VCS_RAW,
                                               SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_NULL_POINTER);
    const int64_t bad_ptr[] = {0, 2, 1};
    assert_int_equal(spart_vcs_create_from_csr(context, 2, 3, bad_ptr, cols, good, SPART_VCS_RAW,
                                               SPART_VCS_VCSR, &vcs),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_vcs_create_from_coo(context, 2, 3, 3, rows, cols, good, SPART_VCS_SCANPY,
                                               SPART_VCS_VCSR, &vcs),
                     SPART_OK);
    double b[6] = {0}, out[6];
    assert_int_equal(spart_vcs_multiply(context, vcs, (spart_vcs_direction)3, 1, b, out),
                     SPART_ERROR_UNKNOWN_ENUM);
    assert_int_equal(spart_vcs_multiply(context, vcs, SPART_VCS_A_TIMES_B, -1, b, out),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_int_equal(spart_vcs_multiply(context, vcs, SPART_VCS_A_TIMES_B, 1, NULL, out),
                     SPART_ERROR_NULL_POINTER);
    size_t bytes = 0;
    assert_int_equal(spart_vcs_workspace_size(context, vcs, SPART_VCS_A_TIMES_B, 2, &bytes),
                     SPART_OK);
    assert_int_equal(spart_vcs_multiply_workspace(context, vcs, SPART_VCS_A_TIMES_B, 2, 0, b, out,
                                                  out, bytes > 0 ? bytes - 1 : 0),
                     SPART_ERROR_INVALID_ARGUMENT);
    spart_vcs *device = NULL;
    /* without CUDA or without a device: NO_DEVICE (test_cuda_vcs covers devices) */
    spart_status status = spart_vcs_to_device(context, vcs, 1, &device, NULL);
    assert_true(status == SPART_ERROR_NO_DEVICE || (status == SPART_OK && device != NULL));
    spart_vcs_free(device);
    spart_vcs_free(vcs);
    spart_vcs_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_matches_the_c_library),
        cmocka_unit_test(test_block_g_equals_the_scalar_g),
        cmocka_unit_test_setup_teardown(test_layout_is_canonical, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(test_recipes_match_the_dense_reference, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(test_fixture_300_by_90, context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(test_degenerate_shapes, context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(test_selection_recomputes_statistics, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(test_supplied_factors, context_set_up, context_tear_down),
        cmocka_unit_test_setup_teardown(test_golden_digests_for_1_2_16_threads, context_set_up,
                                        context_tear_down),
        cmocka_unit_test_setup_teardown(test_bad_input_is_refused, context_set_up,
                                        context_tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
