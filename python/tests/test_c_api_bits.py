"""
The package gives the bits of the C API for the same inputs: each result
is compared, as a SHA-256 digest of its bytes, with the same call made
directly on libspart.so through the ctypes layer of tests/parity (run with
SPART_LIBRARY set; the CTest test python_package sets it).
"""

import hashlib

import numpy as np
from conftest import tiny_instrument_parameters, tiny_scene

import spart


def digest(array):
    array = np.ascontiguousarray(array)
    return hashlib.sha256(array.dtype.str.encode() + str(array.shape).encode()
                          + array.tobytes()).hexdigest()


def curvilinear(n, angle, shift):
    t = np.linspace(-1.0, 1.0, n)
    u, v = np.meshgrid(t, t, indexing="ij")
    return (np.cos(angle) * u - np.sin(angle) * v + 0.05 * u * v + shift,
            np.sin(angle) * u + np.cos(angle) * v + shift)


def test_weights_products_and_transposes(c_api):
    spart_ctypes, c = c_api
    grid_in, grid_out = curvilinear(17, 0.3, 0.0), curvilinear(11, -0.1, 0.02)
    values = np.random.default_rng(0).random((3, 16, 16))
    for algorithm in ("sweep", "clip"):
        ours = spart.weights(grid_in, grid_out, method="conservative", algorithm=algorithm)
        theirs = c.weights(grid_in, grid_out, method="conservative", algorithm=algorithm)
        for a, b in zip(ours[0].arrays(), theirs.arrays()):
            assert digest(a) == digest(b)
        assert digest(spart.regrid_from_weights(*ours, values)) == \
            digest(c.regrid_from_weights(theirs, values))
        r, rc = spart.Regridder.from_weights(ours), c.regridder(theirs)
        assert digest(r(values)) == digest(rc(values))
        y = np.random.default_rng(1).random((2, 10, 10))
        assert digest(r.T(y)) == digest(rc.transpose()(y))
        for a, b in zip(r.csr(), rc.csr()):
            assert digest(a) == digest(b)
        tc = spart.transpose_weights_conservative(ours, grid_in, grid_out)
        tc_c = c.transpose_weights_conservative(theirs, grid_in, grid_out)
        assert digest(tc[0].arrays()[3]) == digest(tc_c.arrays()[3])


def test_multilinear_with_axes(c_api):
    spart_ctypes, c = c_api
    x_in = np.linspace(0, 1, 9)[:, None] * np.array([1.0, 1.5])
    x_out = np.linspace(-0.1, 1.6, 13)[:, None] * np.ones(2)
    values = np.random.default_rng(2).random((9, 2))
    ours = spart.weights(x_in, x_out, axis_input=0, axis_output=0, bounds="nan")
    theirs = c.weights(x_in, x_out, axis_input=0, axis_output=0, bounds="nan")
    assert digest(spart.regrid_from_weights(*ours, values, axis_input=0, axis_output=0)) == \
        digest(c.regrid_from_weights(theirs, values, axis_input=0, axis_output=0))


def test_instrument_and_mart(c_api):
    spart_ctypes, c = c_api
    parameters = tiny_instrument_parameters()
    ours = spart.IdealInstrument(**parameters)
    renamed = dict(parameters)
    renamed["exposure_time"] = renamed.pop("timedelta_exposure")
    theirs = spart_ctypes.Instrument(c, **renamed)
    scene = tiny_scene()
    images, widths = ours.image(scene, uncertainty=True)
    images_c, widths_c = theirs.image(scene)
    assert digest(images) == digest(images_c) and digest(widths) == digest(widths_c)
    assert digest(ours.backproject(images)) == digest(theirs.backproject(images_c))
    result = spart.mart(ours, images)
    result_c = theirs.mart(images_c)
    assert result.num_iteration == result_c.num_iteration
    assert digest(result.solution.reshape(-1)) == digest(result_c.solution.reshape(-1))
    assert digest(result.mean_chi_squared) == digest(result_c.mean_chi_squared)


def test_streamed_assembly(c_api):
    """A Regridder streamed from Python blocks (and from a weights file) has
    the CSR arrays of spart_regridder_create called directly on the same
    weights."""
    from test_stream import cut_blocks

    spart_ctypes, c = c_api
    grid_in, grid_out = curvilinear(17, 0.3, 0.0), curvilinear(11, -0.1, 0.02)
    ours = spart.weights(grid_in, grid_out, method="conservative")
    theirs = c.regridder(c.weights(grid_in, grid_out, method="conservative"))
    blocks, count, _ = cut_blocks(ours[0], 37)
    stream = spart.WeightsStream(blocks, count, 37, ours[0].shape, ours[1], ours[2],
                                 axis_input=ours[0].axis_input,
                                 axis_output=ours[0].axis_output)
    streamed = spart.Regridder.from_stream(stream, 1 << 24)
    for a, b in zip(streamed.csr(), theirs.csr()):
        assert digest(a) == digest(b)
