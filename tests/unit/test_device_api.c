/*
 * The device API where there may be no device: in a build without CUDA or
 * on a machine without a visible GPU every device call says
 * SPART_ERROR_NO_DEVICE with a sentence, never crashes, and host work goes
 * on as before. Where a device is visible, the checks that need none
 * still hold (a device number that does not exist, NULL arguments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"

/* A 2 x 3 regridder in host memory from a small weights object. */
static spart_regridder *small_regridder(spart_context *context)
{
    const spart_shape orthogonal = {0, {0}};
    const spart_shape input = {1, {3}};
    const spart_shape output = {1, {2}};
    const int axes[] = {0};
    const int64_t offsets[] = {0, 4};
    const int64_t indices_input[] = {0, 1, 2, 1};
    const int64_t indices_output[] = {0, 0, 1, 1};
    const double values[] = {0.5, 0.25, 2.0, -1.0};
    spart_weights *weights = NULL;
    assert_int_equal(spart_weights_create_from_arrays(context, &orthogonal, &input, &output, 1,
                                                      axes, 1, axes, offsets, indices_input,
                                                      indices_output, values, &weights),
                     SPART_OK);
    spart_regridder *regridder = NULL;
    assert_int_equal(spart_regridder_create(context, weights, NULL, &regridder), SPART_OK);
    spart_weights_free(weights);
    return regridder;
}

static int device_visible(spart_context *context)
{
    return spart_context_set_cuda_device(context, 0) == SPART_OK;
}

static void without_a_device_every_device_call_says_no_device(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    if (device_visible(context)) {
        spart_context_free(context);
        skip();
    }
    assert_int_equal(spart_context_set_cuda_device(context, 0), SPART_ERROR_NO_DEVICE);
    assert_true(strlen(spart_context_error(context)) > 0);
    spart_regridder *host = small_regridder(context);
    spart_regridder *device = (spart_regridder *)&device; /* must become NULL */
    assert_int_equal(spart_regridder_to_device(context, host, &device), SPART_ERROR_NO_DEVICE);
    assert_null(device);
    assert_non_null(strstr(spart_context_error(context), "CUDA"));
    spart_regridder *back = (spart_regridder *)&back;
    assert_int_equal(spart_regridder_to_host(context, host, &back), SPART_ERROR_NO_DEVICE);
    assert_null(back);
    spart_regridder_free(host);
    spart_context_free(context);
}

static void host_products_are_unaffected_by_the_device_api(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    spart_regridder *host = small_regridder(context);
    assert_int_equal(spart_regridder_cuda_device(host), -1);
    spart_regridder *device = NULL;
    spart_status status = spart_regridder_to_device(context, host, &device);
    assert_true(status == SPART_OK || status == SPART_ERROR_NO_DEVICE); /* whatever the machine */
    const double x[] = {1.0, 2.0, 4.0};
    spart_array xa = {x, {1, {3}}};
    double y[2] = {0.0, 0.0};
    assert_int_equal(spart_regridder_apply(context, host, &xa, y, 2), SPART_OK);
    assert_true(y[0] == 0.5 * 1.0 + 0.25 * 2.0);
    assert_true(y[1] == 2.0 * 4.0 - 1.0 * 2.0);
    spart_regridder_free(device);
    spart_regridder_free(host);
    spart_context_free(context);
}

static void a_device_that_does_not_exist_is_refused(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    assert_int_equal(spart_context_set_cuda_device(context, 4096), SPART_ERROR_NO_DEVICE);
    assert_true(strlen(spart_context_error(context)) > 0);
    assert_int_equal(spart_context_set_cuda_device(context, -1), SPART_ERROR_INVALID_ARGUMENT);
    spart_context_free(context);
}

static void null_arguments_are_refused(void **state)
{
    (void)state;
    assert_int_equal(spart_context_set_cuda_device(NULL, 0), SPART_ERROR_NULL_POINTER);
    assert_int_equal(spart_context_set_cuda_stream(NULL, NULL), SPART_ERROR_NULL_POINTER);
    spart_regridder *device = NULL;
    assert_int_equal(spart_regridder_to_device(NULL, NULL, &device), SPART_ERROR_NULL_POINTER);
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    spart_status status = spart_regridder_to_device(context, NULL, &device);
    assert_true(status == SPART_ERROR_NULL_POINTER || status == SPART_ERROR_NO_DEVICE);
    assert_int_equal(spart_regridder_cuda_device(NULL), -1);
    spart_context_free(context);
}

/* Without a device a PSF cannot go there: SPART_ERROR_NO_DEVICE, *device
 * NULL, and the host PSF says it lives on the host. */
static void without_a_device_a_psf_stays_on_the_host(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    if (device_visible(context)) {
        spart_context_free(context);
        skip();
    }
    double kernel[3] = {0.25, 0.5, 0.25};
    spart_array kernels = {kernel, {2, {1, 3}}};
    spart_shape images = {2, {4, 5}};
    spart_psf *psf = NULL;
    assert_int_equal(spart_psf_create(context, &kernels, &images, &psf), SPART_OK);
    assert_int_equal(spart_psf_cuda_device(psf), -1);
    spart_psf *device = (spart_psf *)&device; /* must become NULL */
    assert_int_equal(spart_psf_to_device(context, psf, &device), SPART_ERROR_NO_DEVICE);
    assert_null(device);
    assert_non_null(strstr(spart_context_error(context), "CUDA"));
    assert_int_equal(spart_psf_to_device(context, NULL, &device), SPART_ERROR_NULL_POINTER);
    spart_psf_free(psf);
    spart_context_free(context);
}

/* Stream-ordered memory (spart_memory_allocate_async): on the host the
 * context's allocator, whatever the build; without a device
 * SPART_ERROR_NO_DEVICE with a sentence and a NULL pointer; NULL
 * arguments refused; freeing NULL does nothing. */
static void stream_ordered_memory_on_the_host_and_without_a_device(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    double *values = NULL;
    assert_int_equal(spart_memory_allocate_async(context, 0, 3 * sizeof(double), (void **)&values),
                     SPART_OK);
    values[0] = 1.0;
    values[2] = -4.0;
    assert_true(values[0] + values[2] == -3.0);
    spart_memory_free_async(context, 0, values);
    spart_memory_free_async(context, 0, NULL);
    spart_memory_free_async(context, 1, NULL);
    spart_memory_free_async(NULL, 1, NULL);
    assert_int_equal(spart_memory_allocate_async(context, 0, 8, NULL), SPART_ERROR_NULL_POINTER);
    void *pointer = NULL;
    assert_int_equal(spart_memory_allocate_async(NULL, 0, 8, &pointer), SPART_ERROR_NULL_POINTER);
    if (!device_visible(context)) {
        pointer = &pointer; /* must become NULL */
        assert_int_equal(spart_memory_allocate_async(context, 1, 64, &pointer),
                         SPART_ERROR_NO_DEVICE);
        assert_null(pointer);
        assert_non_null(strstr(spart_context_error(context), "memory_allocate_async"));
    }
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_device_every_device_call_says_no_device),
        cmocka_unit_test(host_products_are_unaffected_by_the_device_api),
        cmocka_unit_test(a_device_that_does_not_exist_is_refused),
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(without_a_device_a_psf_stays_on_the_host),
        cmocka_unit_test(stream_ordered_memory_on_the_host_and_without_a_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
