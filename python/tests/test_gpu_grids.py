"""
Weights from grids already on a GPU (spart.weights with CuPy or PyTorch
coordinates: spart_weights_build_device_grids): the entries of the host
build of NumPy copies, bit for bit; a NaN coordinate refused in the host
build's words; host and GPU grids not mixed. Skipped without a CUDA build
of spart, a visible device, or CuPy / PyTorch with CUDA.
"""

import numpy as np
import pytest
from test_stream import grid_2d

import spart


def gpu_module():
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        return lambda a: cupy.asarray(np.ascontiguousarray(a))
    except Exception:  # noqa: BLE001 - try torch
        pass
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("neither CuPy nor PyTorch with CUDA")
    return lambda a: torch.as_tensor(np.ascontiguousarray(a), device="cuda")


@pytest.fixture(scope="module")
def to_gpu():
    return gpu_module()


def same_weights(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a[0].to_host().arrays(), b[0].arrays()))


def build_or_skip(*args, **kwargs):
    try:
        return spart.weights(*args, **kwargs)
    except spart.SpartError as error:
        if "without CUDA" in error.sentence or "no CUDA" in error.sentence:
            pytest.skip(f"no device build here: {error.sentence}")
        raise


def test_clipped_from_gpu_grids(to_gpu):
    grid_in, grid_out = grid_2d(65, 0.2), grid_2d(41, 0.0, 0.01, 1.2)
    host = spart.weights(grid_in, grid_out, method="conservative")
    factors = np.linspace(0.5, 1.5, 64 * 64).reshape(64, 64)
    device = build_or_skip(tuple(to_gpu(a) for a in grid_in), tuple(to_gpu(a) for a in grid_out),
                           method="conservative")
    assert device[0].device == 0 and device[1:] == host[1:]
    assert same_weights(device, host)
    weighted = spart.weights(grid_in, grid_out, method="conservative", weights_input=factors)
    device = spart.weights(tuple(to_gpu(a) for a in grid_in),
                           tuple(to_gpu(a) for a in grid_out), method="conservative",
                           weights_input=to_gpu(factors))
    assert same_weights(device, weighted)


def test_multilinear_from_gpu_grids(to_gpu):
    grid_in = grid_2d(33, 0.3)
    rng = np.random.default_rng(3)
    points = (rng.uniform(-1, 1, (20, 30)), rng.uniform(-1, 1, (20, 30)))
    host = spart.weights(grid_in, points)
    device = build_or_skip(tuple(to_gpu(a) for a in grid_in), tuple(to_gpu(a) for a in points))
    assert same_weights(device, host)


def test_nan_refused_as_on_the_host(to_gpu):
    grid_in, grid_out = grid_2d(33, 0.2), grid_2d(21, 0.0)
    x = grid_in[0].copy()
    x[3, 4] = np.nan
    with pytest.raises(spart.SpartError) as on_host:
        spart.weights((x, grid_in[1]), grid_out, method="conservative")
    with pytest.raises(spart.SpartError) as on_gpu:
        spart.weights((to_gpu(x), to_gpu(grid_in[1])), tuple(to_gpu(a) for a in grid_out),
                      method="conservative")
    assert on_gpu.value.sentence == on_host.value.sentence


def test_mixed_places_refused(to_gpu):
    grid_in, grid_out = grid_2d(33, 0.2), grid_2d(21, 0.0)
    with pytest.raises(ValueError, match="one place"):
        spart.weights(tuple(to_gpu(a) for a in grid_in), grid_out, method="conservative")
