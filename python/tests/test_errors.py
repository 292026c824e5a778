"""Bad input gives a clear exception naming the argument, never a crash."""

import numpy as np
import pytest

import spart


@pytest.fixture(scope="module")
def regridder():
    w = spart.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 6), method="conservative")
    return spart.Regridder.from_weights(w)


def test_wrong_dtype(regridder):
    for dtype in (np.float32, np.int64, np.complex128):
        with pytest.raises(spart.SpartTypeError, match=r"x: a \w+ array; spart reads float64"):
            regridder(np.ones(10, dtype=dtype))
    with pytest.raises(TypeError, match="values_input"):
        spart.regrid_from_weights(*spart.weights(np.arange(5.0), np.arange(5.0)),
                                  np.arange(5))
    with pytest.raises(spart.SpartTypeError, match=r"coordinates_input\[0\]: a int64"):
        spart.weights(np.arange(5), np.arange(5.0))


def test_not_contiguous(regridder):
    with pytest.raises(spart.SpartValueError, match="x: an array that is not C-contiguous"):
        regridder(np.ones(20)[::2])
    with pytest.raises(ValueError, match="out: an array that is not C-contiguous"):
        regridder(np.ones(10), out=np.ones(10)[::2])
    with pytest.raises(ValueError, match="x: an array that is not C-contiguous"):
        regridder(np.ones((10, 3)).T)


def test_shape_mismatch(regridder):
    with pytest.raises(spart.SpartValueError, match=r"x: shape \(11,\) does not end with") as e:
        regridder(np.ones(11))
    assert e.value.status_name == "SPART_ERROR_SHAPE_MISMATCH" and e.value.status == 3
    with pytest.raises(ValueError, match=r"out: shape \(4,\), but the result has shape \(5,\)"):
        regridder(np.ones(10), out=np.empty(4))
    read_only = np.empty(5)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out: a read-only array"):
        regridder(np.ones(10), out=read_only)
    small = spart.weights(np.linspace(0, 1, 5), np.linspace(0, 1, 3), method="conservative")
    with pytest.raises(ValueError, match=r"shape_input: \(5,\), but the weights were built"):
        spart.regrid_from_weights(small[0], (5,), (2,), np.ones(4))


def test_errors_of_the_c_library_carry_the_status():
    with pytest.raises(spart.SpartError) as e:
        spart.weights(np.linspace(0, 1, 5), np.linspace(0, 1, 3), axis_input=4)
    assert e.value.status_name == "SPART_ERROR_AXIS_OUT_OF_RANGE"
    assert e.value.function == "spart_weights_build" and "axis" in e.value.sentence
    assert isinstance(e.value, ValueError)
    with pytest.raises(spart.SpartError) as e:
        spart.weights(np.array([0.0, np.nan, 1.0]), np.linspace(0, 1, 3), method="conservative")
    assert e.value.status_name == "SPART_ERROR_NOT_FINITE"
    with pytest.raises(spart.SpartError) as e:
        spart.Regridder.load("/nonexistent/file.fits")
    assert e.value.status_name == "SPART_ERROR_IO" and not isinstance(e.value, ValueError)


def test_bad_choices_and_arguments():
    x = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="method: 'cubic'; expected one of"):
        spart.weights(x, x, method="cubic")
    with pytest.raises(ValueError, match="coordinates_input has 2 arrays and coordinates_output 1"):
        spart.weights((x, x), x)
    with pytest.raises(TypeError, match="weights: a str"):
        spart.transpose_weights("weights")
    with pytest.raises(TypeError, match="dtype"):
        spart.Regridder.from_weights(spart.weights(x, x), dtype=np.int32)
    with pytest.raises(TypeError, match="x: not an array of numbers"):
        spart.Regridder.from_weights(spart.weights(x, x))("text")


def test_gpu_arrays_on_a_host_regridder(regridder):
    class FakeGpuArray:
        __cuda_array_interface__ = {"shape": (10,), "typestr": "<f8", "data": (0, False),
                                    "version": 3}

    with pytest.raises(TypeError, match="x: an array in GPU memory"):
        regridder(FakeGpuArray())


def test_instrument_arguments():
    from conftest import tiny_instrument_parameters

    parameters = tiny_instrument_parameters()
    instrument = spart.IdealInstrument(**parameters)
    with pytest.raises(ValueError, match=r"scene: shape \(4, 8\); the instrument's scenes"):
        instrument.image(np.ones((4, 8)))
    with pytest.raises(ValueError, match=r"images: shape \(2, 32, 15\)"):
        spart.mart(instrument, np.ones((2, 32, 15)))
    with pytest.raises(ValueError, match="guess: shape"):
        spart.mart(instrument, np.ones((2, 32, 16)), guess=np.ones(3))
    bad = dict(parameters, plate_scale=-1.0)
    with pytest.raises(spart.SpartValueError, match="plate_scale") as e:
        spart.IdealInstrument(**bad)
    assert e.value.function == "spart_instrument_create"
