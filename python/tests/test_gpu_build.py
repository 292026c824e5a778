"""
Building on a GPU from Python: weights built on the device
(spart.weights(..., device=0)) and Regridders assembled there from them, or
streamed there from blocks (host blocks, or CuPy blocks with
blocks_on_device): the same bits as the host's build and assembly.
Skipped without a CUDA build of spart or a visible device.
"""

import numpy as np
import pytest
from test_stream import cut_blocks, grid_2d

import spart


def same_matrix(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.csr(), b.csr()))


@pytest.fixture(scope="module")
def device_weights():
    grids = (grid_2d(65, 0.2), grid_2d(41, 0.0, 0.01, 1.2))
    host = spart.weights(*grids, method="conservative")
    try:
        device = spart.weights(*grids, method="conservative", device=0)
    except spart.SpartError as error:
        pytest.skip(f"no device build here: {error.sentence}")
    return host, device


def test_device_weights_same_bits(device_weights):
    host, device = device_weights
    assert device[0].device == 0 and host[0].device is None
    assert device[1:] == host[1:] and device[0].num_entries == host[0].num_entries
    back = device[0].to_host()
    for got, want in zip(back.arrays(), host[0].arrays()):
        assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="to_host"):
        device[0].arrays()
    with pytest.raises(spart.SpartValueError, match="spart_weights_to_host"):
        spart.transpose_weights(device)  # host-only functions refuse device weights
    cupy = pytest.importorskip("cupy")
    views = device[0].device_arrays()  # in place, through __cuda_array_interface__
    assert np.array_equal(views[0], host[0].arrays()[0])
    for view, want in zip(views[1:], host[0].arrays()[1:]):
        assert np.array_equal(cupy.asnumpy(cupy.asarray(view)), want)


def test_device_regridder_from_device_weights(device_weights):
    host, device = device_weights
    r = spart.Regridder.from_weights(device)  # assembled where the weights lie
    assert r.device == 0
    assert same_matrix(r.to_host(), spart.Regridder.from_weights(host))


def test_streamed_on_device(device_weights):
    host, _ = device_weights
    direct = spart.Regridder.from_weights(host)
    blocks, count, _ = cut_blocks(host[0], 997)
    stream = spart.WeightsStream(blocks, count, 997, host[0].shape, host[1], host[2],
                                 axis_input=host[0].axis_input,
                                 axis_output=host[0].axis_output)
    budget = stream.bytes_needed(direct.nnz, device=True)
    r = spart.Regridder.from_stream(stream, budget, device=0)
    assert r.device == 0 and r.stream_report["peak_bytes"] <= budget
    assert r.stream_report["staging_bytes"] > 0
    assert same_matrix(r.to_host(), direct)


def test_streamed_from_cupy_blocks(device_weights):
    cupy = pytest.importorskip("cupy")
    host, _ = device_weights
    direct = spart.Regridder.from_weights(host)
    blocks, count, _ = cut_blocks(host[0], 2000)

    def on_device(block, pass_):
        first, offsets, ii, io, v = blocks(block, pass_)
        return first, offsets, cupy.asarray(ii), cupy.asarray(io), cupy.asarray(v)

    stream = spart.WeightsStream(on_device, count, 2000, host[0].shape, host[1], host[2],
                                 axis_input=host[0].axis_input,
                                 axis_output=host[0].axis_output, blocks_on_device=True)
    r = spart.Regridder.from_stream(stream, 1 << 30, device=0)
    assert same_matrix(r.to_host(), direct)
    with pytest.raises(ValueError, match="blocks_on_device"):
        spart.Regridder.from_stream(stream, 1 << 30)  # a host assembly of device blocks


def test_device_weights_worked_on_there(device_weights):
    """The conservative transpose and a convolution of device weights run
    on the device and give the host's bits."""
    host, device = device_weights
    grids = (grid_2d(65, 0.2), grid_2d(41, 0.0, 0.01, 1.2))
    on_host = spart.transpose_weights_conservative(host, *grids)
    on_device = spart.transpose_weights_conservative(device, *grids)
    assert on_device[0].device == 0
    for got, want in zip(on_device[0].to_host().arrays(), on_host[0].arrays()):
        assert np.array_equal(got, want)
    kernel = np.array([[0.0, 0.1, 0.0], [0.1, 0.6, 0.1], [0.0, 0.1, 0.0]])
    for got, want in zip(spart.convolve_weights(device, kernel)[0].to_host().arrays(),
                         spart.convolve_weights(host, kernel)[0].arrays()):
        assert np.array_equal(got, want)


def test_instrument_on_device():
    """IdealInstrument(device=0): operators built on the GPU with the host
    build's CSR arrays; image and backproject on CuPy arrays give the host
    instrument's bits; MART from Python refuses it by name."""
    cupy = pytest.importorskip("cupy")
    from conftest import tiny_instrument_parameters, tiny_scene

    params = tiny_instrument_parameters()
    host = spart.IdealInstrument(**params)
    try:
        device = spart.IdealInstrument(**params, device=0)
    except spart.SpartError as error:
        pytest.skip(f"no device instrument here: {error.sentence}")
    assert device.device == 0 and device.forward.device == 0
    assert same_matrix(device.forward.to_host(), host.forward)
    assert same_matrix(device.backward.to_host(), host.backward)
    scene = tiny_scene()
    images, widths = device.image(cupy.asarray(scene), uncertainty=True)
    want_images, want_widths = host.image(scene, uncertainty=True)
    assert isinstance(images, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(images), want_images)
    assert np.array_equal(cupy.asnumpy(widths), want_widths)
    assert np.array_equal(cupy.asnumpy(device.backproject(images)),
                          host.backproject(want_images))
    with pytest.raises(TypeError, match="scene: in host memory"):
        device.image(scene)
    with pytest.raises(ValueError, match="on CUDA device 0"):
        spart.mart(device, want_images)
