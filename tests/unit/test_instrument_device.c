/*
 * tests/unit/test_instrument_device.c: the checks of params.on_device that
 * need no device (spart/instrument.h): a value other than 0 or 1 is
 * refused with a sentence naming the field, and without a usable CUDA
 * device (a build without CUDA, or no device visible) on_device = 1 is
 * refused with SPART_ERROR_NO_DEVICE and nothing made. The host build
 * (on_device = 0, the default) is unchanged: its operators are compared
 * with the streamed ones in test_instrument_lines and with ctis in the
 * parity tests; the device build's bits in test_cuda_instrument.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spart.h"
#include "spart/instrument.h"
#include "test_small_instrument.h"

static int device_visible(void)
{
    spart_context *context = NULL;
    if (spart_context_create(&context) != SPART_OK) {
        return 0;
    }
    int visible = spart_context_set_cuda_device(context, 0) == SPART_OK;
    spart_context_free(context);
    return visible;
}

static void on_device_other_than_0_or_1_is_refused(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    small_instrument p;
    make_small_instrument(context, &p);
    spart_instrument *instrument = (spart_instrument *)&p; /* poisoned: must become NULL */
    p.params.on_device = 2;
    assert_int_equal(spart_instrument_create(context, &p.params, &instrument),
                     SPART_ERROR_INVALID_ARGUMENT);
    assert_null(instrument);
    assert_non_null(strstr(spart_context_error(context), "on_device = 2 must be 0 or 1"));
    free(p.scene);
    spart_context_free(context);
}

static void on_device_without_a_device_says_so(void **state)
{
    (void)state;
    if (device_visible()) {
        skip(); /* test_cuda_instrument builds on the device */
    }
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    small_instrument p;
    make_small_instrument(context, &p);
    for (int streamed = 0; streamed < 2; streamed++) {
        spart_instrument *instrument = (spart_instrument *)&p;
        p.params.on_device = 1;
        p.params.memory_budget = streamed ? (size_t)64 << 20 : 0;
        assert_int_equal(spart_instrument_create(context, &p.params, &instrument),
                         SPART_ERROR_NO_DEVICE);
        assert_null(instrument);
    }
    free(p.scene);
    spart_context_free(context);
}

/* The planes builder: its arguments checked before any device is asked
 * for, and without a device SPART_ERROR_NO_DEVICE; the host mapping of
 * the vertices is what the host instrument's weights are built from
 * (spart_instrument_map_vertices of plane (1, 3) is finite and moves the
 * scene rigidly: opposite corners keep the scene's diagonal over the
 * plate scale). */
static void planes_check_their_arguments(void **state)
{
    (void)state;
    spart_context *context = NULL;
    assert_int_equal(spart_context_create(&context), SPART_OK);
    small_instrument p;
    make_small_instrument(context, &p);
    double low[20], high[20];
    for (int l = 0; l < 20; l++) {
        low[l] = p.wavelength[l];
        high[l] = p.wavelength[l + 1];
    }
    spart_instrument_planes *planes = (spart_instrument_planes *)&p; /* must become NULL */
    assert_int_equal(
        spart_instrument_planes_create(context, &p.params, 20, low, NULL, p.scene, &planes),
        SPART_ERROR_NULL_POINTER);
    assert_null(planes);
    assert_int_equal(
        spart_instrument_planes_create(context, &p.params, 0, low, high, p.scene, &planes),
        SPART_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(spart_context_error(context), "num_bins = 0"));
    if (!device_visible()) {
        assert_int_equal(
            spart_instrument_planes_create(context, &p.params, 20, low, high, p.scene, &planes),
            SPART_ERROR_NO_DEVICE);
        assert_null(planes);
    }
    double x[33 * 33], y[33 * 33];
    spart_instrument_map_vertices(&p.params, 1, low[3], high[3], x, y);
    double dx = x[33 * 33 - 1] - x[0], dy = y[33 * 33 - 1] - y[0];
    double diagonal = 20.0 * sqrt(2.0) / p.params.plate_scale;
    assert_true(fabs(sqrt(dx * dx + dy * dy) - diagonal) < 1e-9 * diagonal);
    free(p.scene);
    spart_context_free(context);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(on_device_other_than_0_or_1_is_refused),
        cmocka_unit_test(on_device_without_a_device_says_so),
        cmocka_unit_test(planes_check_their_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
