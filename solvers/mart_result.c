/*
 * solvers/mart_result.c: the result of a MART solve (spart/mart.h): its
 * allocation by the drivers (solvers/mart.c, solvers/mart_frames.c),
 * what they append to it (merits, kept states, the message of the rule),
 * its accessors and its free.
 */
#include <stdio.h>
#include <string.h>

#include "spart/device_memory.h"
#include "spart/mart.h"
#include "mart_internal.h"

spart_mart_result *spart_mart_result_allocate(spart_context *context,
                                              const spart_mart_operators *operators,
                                              int with_solution)
{
    spart_mart_result *result = spart_context_malloc(context, sizeof *result);
    if (result == NULL) {
        return NULL;
    }
    memset(result, 0, sizeof *result);
    result->context = context;
    result->num_channel = operators->num_channel;
    result->scene_size = operators->scene_size;
    result->capacity = 16;
    /* the caller's buffer takes the solution (the _into forms): nothing
     * allocated for it here, and no host pages touched */
    result->solutions =
        with_solution ? spart_mart_alloc_doubles(context, (size_t)operators->scene_size) : NULL;
    result->mean_chi_squared =
        spart_mart_alloc_doubles(context, (size_t)(result->capacity * operators->num_channel));
    result->correlation =
        spart_mart_alloc_doubles(context, (size_t)(result->capacity * operators->num_channel));
    if ((with_solution && result->solutions == NULL) || result->mean_chi_squared == NULL ||
        result->correlation == NULL) {
        spart_mart_result_free(result);
        return NULL;
    }
    return result;
}

void spart_mart_result_free(spart_mart_result *result)
{
    if (result == NULL) {
        return;
    }
    spart_context *context = result->context;
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

/* Each page of the solution written once (a zero), on the context's
 * threads: a plain device solve's solution lands in host memory the result
 * has just allocated, whose pages the copy from the device would otherwise
 * fault in one at a time inside the copy (at ESIS scale 1.7 GB a frame).
 * The drivers call this while the device works and the host would only
 * wait. The values are overwritten by the copy, so the bits are the same. */
void spart_mart_result_touch(const spart_context *context, spart_mart_result *result)
{
    enum { page = 4096 };
    if (result->solutions == NULL) {
        return;
    }
    char *solution = (char *)result->solutions;
    int64_t bytes = result->scene_size * (int64_t)sizeof(double);
    int64_t pages = (bytes + page - 1) / page;
    int threads = spart_context_threads(context);
#pragma omp parallel for num_threads(threads) schedule(static) if (pages > 256)
    for (int64_t k = 0; k < pages; k++) {
        solution[k * page] = 0;
    }
    solution[bytes - 1] = 0; /* the last page, where the allocation is not page-aligned */
}

/* ---- what the drivers (solvers/mart.c, solvers/mart_frames.c) append ---- */

spart_status spart_mart_result_append_state(spart_context *context, spart_mart_result *result,
                                            const double *state, int on_device, int64_t *capacity)
{
    if (result->num_solutions == *capacity || result->solutions == NULL) {
        int64_t grown = result->solutions == NULL ? 1 : *capacity * 2;
        double *bigger = spart_mart_realloc_doubles(result->context, result->solutions,
                                                    (size_t)(grown * result->scene_size));
        if (bigger == NULL) {
            return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                           "mart: could not keep %lld intermediate states",
                                           (long long)grown);
        }
        result->solutions = bigger;
        *capacity = grown;
    }
    double *destination = result->solutions + result->num_solutions * result->scene_size;
    size_t bytes = (size_t)result->scene_size * sizeof(double);
    spart_status status = spart_memory_copy(context, destination, 0, state, on_device, bytes);
    if (status == SPART_OK) {
        result->num_solutions++;
    }
    return status;
}

spart_status spart_mart_result_append_merits(spart_context *context, spart_mart_result *result,
                                             const double *chi2, const double *correlation)
{
    int64_t c = result->num_channel;
    if (result->num_iterations == result->capacity) {
        int64_t grown = result->capacity * 2;
        double *grown_chi2 = spart_mart_realloc_doubles(result->context, result->mean_chi_squared,
                                                        (size_t)(grown * c));
        double *grown_r = grown_chi2 == NULL
                              ? NULL
                              : spart_mart_realloc_doubles(result->context, result->correlation,
                                                           (size_t)(grown * c));
        if (grown_chi2 != NULL) {
            result->mean_chi_squared = grown_chi2;
        }
        if (grown_r == NULL) {
            return spart_context_set_error(context, SPART_ERROR_OUT_OF_MEMORY,
                                           "mart: could not grow the histories to %lld rows",
                                           (long long)grown);
        }
        result->correlation = grown_r;
        result->capacity = grown;
    }
    memcpy(result->mean_chi_squared + result->num_iterations * c, chi2, (size_t)c * sizeof(double));
    memcpy(result->correlation + result->num_iterations * c, correlation,
           (size_t)c * sizeof(double));
    result->num_iterations++;
    return SPART_OK;
}

int spart_mart_rule_stops(const spart_mart_options *options, double merit_previous, double merit,
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

void spart_mart_out_of_iterations(const spart_mart_options *options, spart_mart_result *result)
{
    if (options->stop_rule == SPART_MART_STOP_COUNT) {
        result->success = 1;
        snprintf(result->message, sizeof result->message, "Completed %lld iterations.",
                 (long long)options->max_iterations);
    } else {
        result->success = 0;
        snprintf(result->message, sizeof result->message,
                 "Max number of iterations (%lld) exceeded.", (long long)options->max_iterations);
    }
}
