/*
 * solvers/mart_result.c: the result of a MART solve (spart/mart.h): its
 * allocation by the driver (solvers/mart.c), its accessors and its free.
 */
#include <string.h>

#include "spart/mart.h"
#include "mart_internal.h"

spart_mart_result *spart_mart_result_allocate(spart_context *context,
                                              const spart_mart_operators *operators)
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
    result->solutions = spart_mart_alloc_doubles(context, (size_t)operators->scene_size);
    result->mean_chi_squared =
        spart_mart_alloc_doubles(context, (size_t)(result->capacity * operators->num_channel));
    result->correlation =
        spart_mart_alloc_doubles(context, (size_t)(result->capacity * operators->num_channel));
    if (result->solutions == NULL || result->mean_chi_squared == NULL ||
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
