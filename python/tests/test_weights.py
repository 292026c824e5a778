"""Weights as regridding computes and applies them, through the package."""

import numpy as np
import pytest
from conftest import address, grid_2d

import spart



def test_conservative_1d_as_regridding():
    w = spart.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 6), method="conservative")
    weights, shape_input, shape_output = w
    assert isinstance(weights, spart.Weights)
    assert (shape_input, shape_output) == ((10,), (5,))
    assert np.array_equal(spart.regrid_from_weights(*w, np.ones(10)), 2 * np.ones(5))
    refine = spart.weights(np.linspace(-1, 1, 11), np.linspace(-1, 1, 21), method="conservative")
    assert np.allclose(spart.regrid_from_weights(*refine, np.ones(10)), np.ones(20) / 2)


def test_multilinear_matches_interp_and_bounds():
    x = np.arange(5.0)
    xo = np.array([-0.5, 0.5, 3.5, 4.5])
    w = spart.weights(x, xo)
    assert np.allclose(spart.regrid_from_weights(*w, x**2), [-0.5, 0.5, 12.5, 19.5])
    w = spart.weights(x, xo, bounds="nan")
    got = spart.regrid_from_weights(*w, x**2)
    assert np.isnan(got[[0, 3]]).all() and np.allclose(got[1:3], [0.5, 12.5])
    with pytest.raises(spart.SpartValueError) as caught:
        spart.weights(x, xo, bounds="raise")
    assert caught.value.status_name == "SPART_ERROR_OUT_OF_BOUNDS"
    inside = np.linspace(0, 4, 17)
    assert np.allclose(spart.regrid_from_weights(*spart.weights(x, inside), x**3),
                       np.interp(inside, x, x**3))


def test_weights_arrays_are_views_and_round_trip():
    w = spart.weights(grid_2d(9), grid_2d(7, 0.0, 0.01), method="conservative")
    weights = w[0]
    offsets, ii, io, values = weights.arrays()
    assert offsets[-1] == weights.num_entries == values.size
    assert not values.flags.writeable
    again = weights.arrays()[3]
    assert address(again) == address(values)  # the same memory, no copy
    W, shape_input, shape_output = weights.to_regridding()
    assert np.shares_memory(W[()][2], values)
    back = spart.Weights.from_regridding(W, shape_input, shape_output)
    for a, b in zip(back.arrays(), weights.arrays()):
        assert np.array_equal(a, b)
    # regridding's own tuple is accepted wherever weights are
    values_in = np.random.default_rng(1).random((8, 8))
    assert np.array_equal(spart.regrid_from_weights(W, shape_input, shape_output, values_in),
                          spart.regrid_from_weights(*w, values_in))


def test_orthogonal_axes_and_values_output_in_place():
    x_in = np.linspace(0, 1, 11)[:, None] * np.array([1.0, 1.1, 1.2])
    x_out = np.linspace(0, 1.2, 7)[:, None] * np.ones(3)
    w = spart.weights(x_in, x_out, axis_input=0, axis_output=0, method="conservative")
    weights, shape_input, shape_output = w
    assert weights.shape == (3,)
    values = np.random.default_rng(2).random((10, 3))
    result = spart.regrid_from_weights(*w, values, axis_input=0, axis_output=0)
    out = np.full(result.shape, np.nan)
    returned = spart.regrid_from_weights(*w, values, values_output=out, axis_input=0,
                                         axis_output=0)
    assert returned is out and np.array_equal(out, result)
    for k in range(3):
        single = spart.weights(np.ascontiguousarray(x_in[:, k]), np.ascontiguousarray(x_out[:, k]),
                               method="conservative")
        column = np.ascontiguousarray(values[:, k])
        assert np.array_equal(spart.regrid_from_weights(*single, column), result[:, k])


def test_regrid_transposes_and_convolve():
    x_in, x_out = grid_2d(9), grid_2d(7, 0.0, 0.01)
    values = np.random.default_rng(3).random((8, 8))
    w = spart.weights(x_in, x_out, method="conservative", coalesce=False)
    assert np.array_equal(spart.regrid(x_in, x_out, values, method="conservative"),
                          spart.regrid_from_weights(*w, values))
    t, shape_a, shape_b = spart.transpose_weights(w)
    assert (shape_a, shape_b) == (w[2], w[1])
    assert np.array_equal(t.arrays()[1], w[0].arrays()[2])
    tc = spart.transpose_weights_conservative(w, x_in, x_out)
    assert tc[1] == (6, 6) and tc[2] == (8, 8)
    delta = np.zeros((3, 3))
    delta[1, 1] = 1.0
    convolved = spart.convolve_weights(w, delta)
    assert np.allclose(spart.regrid_from_weights(*convolved, values),
                       spart.regrid_from_weights(*w, values), rtol=0, atol=1e-15)


def test_save_and_load(tmp_path):
    w = spart.weights(grid_2d(9), grid_2d(7, 0.0, 0.01), method="conservative")
    path = tmp_path / "w.fits"
    w[0].save(path)
    with pytest.raises(spart.SpartError) as caught:
        w[0].save(path)
    assert caught.value.status_name == "SPART_ERROR_IO"
    loaded = spart.Weights.load(path)
    for a, b in zip(loaded.arrays(), w[0].arrays()):
        assert np.array_equal(a, b)


def test_device_build_refused_without_a_device():
    """weights(..., device=d) without a CUDA build or device: spart's
    SPART_ERROR_NO_DEVICE and sentence (python/tests/test_gpu.py runs it on
    a GPU)."""
    try:
        w = spart.weights(np.linspace(0, 1, 5), np.linspace(0, 1, 3), device=0)
    except spart.SpartError as error:
        assert error.status_name == "SPART_ERROR_NO_DEVICE" and error.sentence
        return
    assert w[0].device == 0  # a GPU is there: the build must say where it is
    with pytest.raises(ValueError, match="to_host"):
        w[0].arrays()
