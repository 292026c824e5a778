/*
 * solvers/mart.c: the MART driver (spart/mart.h), ctis.inverters.
 * MartInverter step for step, over caller-supplied operators. Uses the
 * public API only.
 *
 * Every loop that sums runs in one fixed order (per channel, pixels in
 * order), so a run gives the same bits for any thread count; elementwise
 * loops run in parallel.
 */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spart/mart.h"
#include "mart_math.h"
#include "mart_internal.h"

struct spart_mart_result {
    const spart_context *context; /* whose allocator holds the arrays */
    int64_t num_channel;
    int64_t scene_size;
    int64_t num_iterations;
    int64_t capacity; /* rows allocated in the histories */
    int success;
    double gamma;
    char message[160];
    int64_t num_solutions;
    double *solutions; /* num_solutions x scene_size */
    double *mean_chi_squared;
    double *correlation;
};

void spart_mart_options_init(spart_mart_options *options)
{
    if (options == NULL) {
        return;
    }
    memset(options, 0, sizeof *options);
    options->gamma = 0.0;
    options->stop_rule = SPART_MART_STOP_THRESHOLD;
    options->threshold = 1e-3;
    options->target = 1.0;
    options->max_iterations = 100;
}

/* ---- result ------------------------------------------------------------------------------- */

void spart_mart_result_free(spart_mart_result *result)
{
    if (result == NULL) {
        return;
    }
    const spart_context *context = result->context;
    spart_context_free_memory(context, result->solutions);
    spart_context_free_memory(context, result->mean_chi_squared);
    spart_context_free_memory(context, result->correlation);
    spart_context_free_memory(context, result);
}

int64_t spart_mart_result_num_iterations(const spart_mart_result *result)
{
    return result != NULL ? result->num_iterations : 0;
}

int spart_mart_result_success(const spart_mart_result *result)
{
    return result != NULL ? result->success : 0;
}

const char *spart_mart_result_message(const spart_mart_result *result)
{
    return result != NULL ? result->message : "";
}

double spart_mart_result_gamma(const spart_mart_result *result)
{
    return result != NULL ? result->gamma : 0.0;
}

int64_t spart_mart_result_num_channel(const spart_mart_result *result)
{
    return result != NULL ? result->num_channel : 0;
}

int64_t spart_mart_result_scene_size(const spart_mart_result *result)
{
    return result != NULL ? result->scene_size : 0;
}

int64_t spart_mart_result_num_solutions(const spart_mart_result *result)
{
    return result != NULL ? result->num_solutions : 0;
}

const double *spart_mart_result_solutions(const spart_mart_result *result, int64_t k)
{
    if (result == NULL || k < 0 || k >= result->num_solutions) {
        return NULL;
    }
    return result->solutions + k * result->scene_size;
}

const double *spart_mart_result_solution(const spart_mart_result *result)
{
    if (result == NULL) {
        return NULL;
    }
    return spart_mart_result_solutions(result, result->num_solutions - 1);
}

const double *spart_mart_result_mean_chi_squared(const spart_mart_result *result)
{
    return result != NULL ? result->mean_chi_squared : NULL;
}

const double *spart_mart_result_correlation(const spart_mart_result *result)
{
    return result != NULL ? result->correlation : NULL;
}

/* ---- the steps ---------------------------------------------------------------------------- */

/* The merit of one channel: the mean over pixels whose width is not 0 of
 * ((observed - predicted) / width)^2; NaN when every width is 0 (as
 * NumPy's mean over an empty selection). */
double spart_mart_mean_chi_squared(const double *observed, const double *predicted,
                                   const double *widths, int64_t n)
{
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t p = 0; p < n; p++) {
        if (widths[p] != 0.0) {
            double z = (observed[p] - predicted[p]) / widths[p];
            sum += z * z;
            count++;
        }
    }
    return count > 0 ? sum / (double)count : NAN;
}

/* Pearson's correlation of e = predicted and r = observed - predicted,
 * population moments: mean((e - mean e)(r - mean r)) / (std e std r). */
double spart_mart_correlation_residual(const double *observed, const double *predicted, int64_t n)
{
    double sum_e = 0.0;
    double sum_r = 0.0;
    for (int64_t p = 0; p < n; p++) {
        sum_e += predicted[p];
        sum_r += observed[p] - predicted[p];
    }
    double mean_e = sum_e / (double)n;
    double mean_r = sum_r / (double)n;
    double cov = 0.0;
    double var_e = 0.0;
    double var_r = 0.0;
    for (int64_t p = 0; p < n; p++) {
        double de = predicted[p] - mean_e;
        double dr = (observed[p] - predicted[p]) - mean_r;
        cov += de * dr;
        var_e += de * de;
        var_r += dr * dr;
    }
    cov = cov / (double)n;
    double std_e = sqrt(var_e / (double)n);
    double std_r = sqrt(var_r / (double)n);
    return cov / (std_e * std_r);
}

/* The MART correction of one voxel from its clamped backprojections of the
 * observed and predicted images in each channel (stride apart):
 * (prod over c of ratio_c^gamma)^(1 / channels), each ratio with NaN and
 * +-inf replaced by 1. */
double spart_mart_correction(const double *observed_back, const double *predicted_back,
                             int64_t stride, int64_t num_channel, double gamma,
                             double inverse_channels)
{
    double product = 1.0;
    for (int64_t c = 0; c < num_channel; c++) {
        double ratio = observed_back[c * stride] / predicted_back[c * stride];
        if (isnan(ratio) || isinf(ratio)) {
            ratio = 1.0;
        }
        product = product * spart_mart_pow(ratio, gamma);
    }
    return spart_mart_pow(product, inverse_channels);
}

/* ---- the driver --------------------------------------------------------------------------- */

static spart_status check_arguments(spart_context *context, const spart_mart_operators *operators,
                                    const double *observed, const spart_mart_options *options,
                                    spart_mart_result **result)
{
    if (operators == NULL || observed == NULL || options == NULL || result == NULL) {
        return spart_context_set_error(
            context, SPART_ERROR_NULL_POINTER,
            "mart: operators, observed, options and result must not be NULL");
    }
    if (operators->forward == NULL || operators->backward == NULL) {
        return spart_context_set_error(
            context, SPART_ERROR_NULL_POINTER,
            "mart: operators->forward and operators->backward must be set");
    }
    if (operators->num_channel < 1 || operators->scene_size < 1 || operators->image_size < 1) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "mart: num_channel (%lld), scene_size (%lld) and image_size (%lld) "
            "must be at least 1",
            (long long)operators->num_channel, (long long)operators->scene_size,
            (long long)operators->image_size);
    }
    if (!(options->gamma >= 0.0) || isinf(options->gamma)) {
        return spart_context_set_error(
            context, SPART_ERROR_INVALID_ARGUMENT,
            "mart: gamma = %g must be positive and finite (0 for the default "
            "2 / num_channel)",
            options->gamma);
    }
    if (!isfinite(options->threshold) || !isfinite(options->target)) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart: threshold = %g and target = %g must be finite",
                                       options->threshold, options->target);
    }
    if (options->max_iterations < 1) {
        return spart_context_set_error(context, SPART_ERROR_INVALID_ARGUMENT,
                                       "mart: max_iterations = %lld must be at least 1",
                                       (long long)options->max_iterations);
    }
    if (options->stop_rule != SPART_MART_STOP_THRESHOLD &&
        options->stop_rule != SPART_MART_STOP_TARGET &&
        options->stop_rule != SPART_MART_STOP_COUNT) {
        return spart_context_set_error(context, SPART_ERROR_UNKNOWN_ENUM,
                                       "mart: stop_rule = %d is not a spart_mart_stop_rule",
                                       (int)options->stop_rule);
    }
    return SPART_OK;
}

/* Working arrays of one solve. */
typedef struct mart_work {
    double *scene;          /* the current state, scene_size */
    double *predicted;      /* num_channel x image_size */
    double *widths;         /* num_channel x image_size */
    double *observed_back;  /* clamped backprojection of the observations, C x scene */
    double *predicted_back; /* C x scene */
    double *chi2;           /* num_channel, this iteration */
    double *correlation;    /* num_channel */
} mart_work;

static void free_work(const spart_context *memory, mart_work *work)
{
    spart_context_free_memory(memory, work->scene);
    spart_context_free_memory(memory, work->predicted);
    spart_context_free_memory(memory, work->widths);
    spart_context_free_memory(memory, work->observed_back);
    spart_context_free_memory(memory, work->predicted_back);
    spart_context_free_memory(memory, work->chi2);
    spart_context_free_memory(memory, work->correlation);
}

static int allocate_work(const spart_context *memory, const spart_mart_operators *operators,
                         mart_work *work)
{
    int64_t c = operators->num_channel;
    size_t images = (size_t)(c * operators->image_size);
    size_t scenes = (size_t)(c * operators->scene_size);
    memset(work, 0, sizeof *work);
    work->scene = spart_mart_alloc_doubles(memory, (size_t)operators->scene_size);
    work->predicted = spart_mart_alloc_doubles(memory, images);
    work->widths = spart_mart_alloc_doubles(memory, images);
    work->observed_back = spart_mart_alloc_doubles(memory, scenes);
    work->predicted_back = spart_mart_alloc_doubles(memory, scenes);
    work->chi2 = spart_mart_alloc_doubles(memory, (size_t)c);
    work->correlation = spart_mart_alloc_doubles(memory, (size_t)c);
    return work->scene != NULL && work->predicted != NULL && work->widths != NULL &&
           work->observed_back != NULL && work->predicted_back != NULL && work->chi2 != NULL &&
           work->correlation != NULL;
}

/* Append the state `scene` to the kept solutions (growing by doubling). */
static int keep_solution(spart_mart_result *result, const double *scene, int64_t *capacity)
{
    if (result->num_solutions == *capacity) {
        int64_t grown = *capacity * 2;
        double *bigger = spart_mart_realloc_doubles(result->context, result->solutions,
                                                    (size_t)(grown * result->scene_size));
        if (bigger == NULL) {
            return 0;
        }
        result->solutions = bigger;
        *capacity = grown;
    }
    memcpy(result->solutions + result->num_solutions * result->scene_size, scene,
           (size_t)result->scene_size * sizeof(double));
    result->num_solutions++;
    return 1;
}

/* Append this iteration's merits to the histories. */
static int record_merit(spart_mart_result *result, const mart_work *work)
{
    int64_t c = result->num_channel;
    if (result->num_iterations == result->capacity) {
        int64_t grown = result->capacity * 2;
        double *chi2 = spart_mart_realloc_doubles(result->context, result->mean_chi_squared,
                                                  (size_t)(grown * c));
        if (chi2 == NULL) {
            return 0;
        }
        result->mean_chi_squared = chi2;
        double *r =
            spart_mart_realloc_doubles(result->context, result->correlation, (size_t)(grown * c));
        if (r == NULL) {
            return 0;
        }
        result->correlation = r;
        result->capacity = grown;
    }
    memcpy(result->mean_chi_squared + result->num_iterations * c, work->chi2,
           (size_t)c * sizeof(double));
    memcpy(result->correlation + result->num_iterations * c, work->correlation,
           (size_t)c * sizeof(double));
    result->num_iterations++;
    return 1;
}

static spart_mart_result *allocate_result(const spart_context *memory,
                                          const spart_mart_operators *operators)
{
    spart_mart_result *result = spart_context_malloc(memory, sizeof *result);
    if (result == NULL) {
        return NULL;
    }
    memset(result, 0, sizeof *result);
    result->context = memory;
    result->num_channel = operators->num_channel;
    result->scene_size = operators->scene_size;
    result->capacity = 16;
    result->solutions = spart_mart_alloc_doubles(memory, (size_t)operators->scene_size);
    result->mean_chi_squared =
        spart_mart_alloc_doubles(memory, (size_t)(result->capacity * operators->num_channel));
    result->correlation =
        spart_mart_alloc_doubles(memory, (size_t)(result->capacity * operators->num_channel));
    if (result->solutions == NULL || result->mean_chi_squared == NULL ||
        result->correlation == NULL) {
        spart_mart_result_free(result);
        return NULL;
    }
    return result;
}

/* The flat guess: every voxel the mean over channels, then over the
 * scene, of the unclamped backprojection of the observations. */
static void flat_guess(const double *back, int64_t num_channel, int64_t scene_size, double *scene)
{
    double total = 0.0;
    for (int64_t v = 0; v < scene_size; v++) {
        double sum = 0.0;
        for (int64_t c = 0; c < num_channel; c++) {
            sum += back[c * scene_size + v];
        }
        total += sum / (double)num_channel;
    }
    double mean = total / (double)scene_size;
    for (int64_t v = 0; v < scene_size; v++) {
        scene[v] = mean;
    }
}

static void clamp_at_zero(double *values, int64_t n, int threads)
{
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; i++) {
        values[i] = values[i] > 0.0 ? values[i] : (values[i] < 0.0 ? 0.0 : values[i]);
    }
}

/* chi2 and r of every channel (channels in parallel, pixels in order). */
static void merits(const spart_mart_operators *operators, const double *observed, mart_work *work,
                   int threads)
{
    int64_t n = operators->image_size;
#pragma omp parallel for num_threads(threads) schedule(static, 1) if (n > 4096)
    for (int64_t c = 0; c < operators->num_channel; c++) {
        work->chi2[c] = spart_mart_mean_chi_squared(observed + c * n, work->predicted + c * n,
                                                    work->widths + c * n, n);
        work->correlation[c] =
            spart_mart_correlation_residual(observed + c * n, work->predicted + c * n, n);
    }
}

/* L *= correction, voxel by voxel. */
static void update_scene(const spart_mart_operators *operators, mart_work *work, double gamma,
                         int threads)
{
    int64_t s = operators->scene_size;
    double inverse_channels = 1.0 / (double)operators->num_channel;
#pragma omp parallel for num_threads(threads) schedule(static) if (s > 16384)
    for (int64_t v = 0; v < s; v++) {
        double f = spart_mart_correction(work->observed_back + v, work->predicted_back + v, s,
                                         operators->num_channel, gamma, inverse_channels);
        work->scene[v] = work->scene[v] * f;
    }
}

static spart_status call_forward(spart_context *context, const spart_mart_operators *operators,
                                 mart_work *work, int64_t iteration)
{
    spart_status status =
        operators->forward(operators->user, context, work->scene, work->predicted, work->widths);
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status,
                                    "mart: the forward operator failed at "
                                    "iteration %lld",
                                    (long long)iteration);
    }
    return SPART_OK;
}

static spart_status call_backward(spart_context *context, const spart_mart_operators *operators,
                                  const double *images, double *scenes, const char *what)
{
    spart_status status = operators->backward(operators->user, context, images, scenes);
    if (status != SPART_OK) {
        return spart_mart_fail_keep(context, status, "mart: the backward operator failed on the %s",
                                    what);
    }
    return SPART_OK;
}

/* Whether the rule ends the run at this merit; sets the message. */
static int rule_stops(const spart_mart_options *options, double merit_previous, double merit,
                      int64_t iteration, spart_mart_result *result)
{
    switch (options->stop_rule) {
    case SPART_MART_STOP_THRESHOLD:
        if (merit_previous - merit < options->threshold) {
            snprintf(result->message, sizeof result->message, "Achieved merit less than %s.",
                     spart_mart_python_float(options->threshold).text);
            return 1;
        }
        return 0;
    case SPART_MART_STOP_TARGET:
        if (merit <= options->target) {
            snprintf(result->message, sizeof result->message,
                     "Mean chi-squared %.17g at or under the target %.17g at iteration %lld.",
                     merit, options->target, (long long)iteration);
            return 1;
        }
        return 0;
    default: return 0;
    }
}

spart_status spart_mart_solve(spart_context *context, const spart_mart_operators *operators,
                              const double *observed, const spart_mart_options *options,
                              spart_mart_result **result)
{
    if (context == NULL) {
        return spart_context_set_error(NULL, SPART_ERROR_NULL_POINTER, "mart: context is NULL");
    }
    spart_mart_options defaults;
    spart_mart_options_init(&defaults);
    if (options == NULL) {
        options = &defaults;
    }
    spart_status status = check_arguments(context, operators, observed, options, result);
    if (status != SPART_OK) {
        return status;
    }
    *result = NULL;
    double start = omp_get_wtime();
    int threads = spart_context_threads(context);
    int64_t channels = operators->num_channel;
    int64_t scene_size = operators->scene_size;
    double gamma = options->gamma > 0.0 ? options->gamma : 2.0 / (double)channels;

    mart_work work;
    spart_mart_result *made = allocate_result(context, operators);
    if (made == NULL || !allocate_work(context, operators, &work)) {
        if (made != NULL) {
            free_work(context, &work);
        }
        spart_mart_result_free(made);
        return spart_context_set_error(
            context, SPART_ERROR_OUT_OF_MEMORY,
            "mart: could not allocate the working arrays (%lld channels, "
            "%lld values per scene, %lld per image)",
            (long long)channels, (long long)scene_size, (long long)operators->image_size);
    }
    made->gamma = gamma;

    /* The guess and the clamped backprojection of the observations. */
    status = call_backward(context, operators, observed, work.observed_back, "observed images");
    if (status == SPART_OK) {
        if (options->guess != NULL) {
            memcpy(work.scene, options->guess, (size_t)scene_size * sizeof(double));
        } else {
            flat_guess(work.observed_back, channels, scene_size, work.scene);
        }
        clamp_at_zero(work.observed_back, channels * scene_size, threads);
    }

    int64_t solution_capacity = 1;
    double merit_previous = INFINITY;
    int stopped = 0;
    for (int64_t i = 0; status == SPART_OK && i < options->max_iterations; i++) {
        if (options->keep_intermediate && !keep_solution(made, work.scene, &solution_capacity)) {
            status = SPART_ERROR_OUT_OF_MEMORY;
            break;
        }
        status = call_forward(context, operators, &work, i);
        if (status != SPART_OK) {
            break;
        }
        merits(operators, observed, &work, threads);
        double merit = 0.0;
        for (int64_t c = 0; c < channels; c++) {
            merit += work.chi2[c];
        }
        merit = merit / (double)channels;
        if (!record_merit(made, &work)) {
            status = SPART_ERROR_OUT_OF_MEMORY;
            break;
        }
        if (options->callback != NULL) {
            spart_mart_progress progress = {
                i, channels, work.chi2, work.correlation, merit, omp_get_wtime() - start};
            if (options->callback(options->callback_user, &progress) != 0) {
                snprintf(made->message, sizeof made->message,
                         "Stopped by the callback at iteration %lld.", (long long)i);
                made->success = 0;
                stopped = 1;
                break;
            }
        }
        if (rule_stops(options, merit_previous, merit, i, made)) {
            made->success = 1;
            stopped = 1;
            break;
        }
        status = call_backward(context, operators, work.predicted, work.predicted_back,
                               "predicted images");
        if (status != SPART_OK) {
            break;
        }
        clamp_at_zero(work.predicted_back, channels * scene_size, threads);
        update_scene(operators, &work, gamma, threads);
        merit_previous = merit;
    }
    if (status == SPART_ERROR_OUT_OF_MEMORY) {
        spart_context_set_error(context, status, "mart: could not grow the histories");
    }
    if (status == SPART_OK && !stopped) {
        if (options->stop_rule == SPART_MART_STOP_COUNT) {
            made->success = 1;
            snprintf(made->message, sizeof made->message, "Completed %lld iterations.",
                     (long long)options->max_iterations);
        } else {
            made->success = 0;
            snprintf(made->message, sizeof made->message,
                     "Max number of iterations (%lld) exceeded.",
                     (long long)options->max_iterations);
        }
    }
    /* The solution: without intermediate states, the current state (after
     * the last update when the iteration limit ended the run); with them,
     * ctis's solutions[-1], which is the state at the start of the last
     * iteration (docs/differences.md). */
    if (status == SPART_OK && (!options->keep_intermediate || made->num_solutions == 0)) {
        memcpy(made->solutions, work.scene, (size_t)scene_size * sizeof(double));
        made->num_solutions = 1;
    }
    free_work(context, &work);
    if (status != SPART_OK) {
        spart_mart_result_free(made);
        return status;
    }
    *result = made;
    return SPART_OK;
}
