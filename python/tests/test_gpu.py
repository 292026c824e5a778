"""
GPU Regridders with CuPy and PyTorch arrays (through __cuda_array_interface__):
the same bits as the host product, y written where asked, no copies.
Skipped without a CUDA build of spart, a visible device or those packages.
"""

import numpy as np
import pytest

import spart
from conftest import grid_2d



@pytest.fixture(scope="module")
def regridders():
    w = spart.weights(grid_2d(33), grid_2d(21, 0.0, 0.01, 1.2), method="conservative")
    host = spart.Regridder.from_weights(w)
    try:
        device = host.to_device(0)
    except spart.SpartError as error:
        pytest.skip(f"no GPU Regridder here: {error.sentence}")
    return host, device, w


def test_cupy_arrays(regridders):
    cupy = pytest.importorskip("cupy")
    host, device, w = regridders
    assert device.device == 0
    x = np.random.default_rng(0).random((5, 32, 32))
    y = device(cupy.asarray(x))
    assert isinstance(y, cupy.ndarray) and y.shape == (5, 20, 20)
    assert np.array_equal(cupy.asnumpy(y), host(x))
    out = cupy.empty((5, 20, 20))
    assert device(cupy.asarray(x), out=out) is out
    assert np.array_equal(cupy.asnumpy(out), host(x))
    assert np.array_equal(cupy.asnumpy(device.T(out)), host.T(host(x)))
    assembled = spart.Regridder.from_weights(w, device=0)
    assert np.array_equal(cupy.asnumpy(assembled(cupy.asarray(x))), host(x))
    with cupy.cuda.Stream(non_blocking=True) as stream:  # the product on x's stream
        on_stream = device(cupy.asarray(x))
    stream.synchronize()
    assert np.array_equal(cupy.asnumpy(on_stream), host(x))
    with pytest.raises(TypeError, match="x: a float32 array"):
        device(cupy.asarray(x, dtype=cupy.float32))
    with pytest.raises(TypeError, match="takes arrays in GPU memory"):
        device(x)


def test_torch_tensors(regridders):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    host, device, _ = regridders
    x = np.random.default_rng(1).random((3, 32, 32))
    y = device(torch.from_numpy(x).cuda())
    torch.cuda.synchronize()
    assert isinstance(y, torch.Tensor) and y.is_cuda
    assert np.array_equal(y.cpu().numpy(), host(x))


def test_back_to_host(regridders):
    host, device, _ = regridders
    again = device.to_host()
    x = np.random.default_rng(2).random((32, 32))
    assert again.device is None and np.array_equal(again(x), host(x))


class DLPackOnly:
    """A GPU array seen only through DLPack (as a JAX tensor would be)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_kernels_on_gpu_arrays_give_the_host_bits(regridders):
    """The softmax, its aggregation and candidate scoring on CuPy, PyTorch
    and DLPack-only GPU arrays: the same bits as on NumPy arrays."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(3)
    lengths = [0, 1, 5, 4100, 0, 37]
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    scores = rng.standard_normal((int(indptr[-1]), 2))
    host = spart.softmax(scores, indptr)
    on_gpu = spart.softmax(cupy.asarray(scores), cupy.asarray(indptr))
    assert isinstance(on_gpu, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(on_gpu), host)
    through = spart.softmax(DLPackOnly(cupy.asarray(scores)), DLPackOnly(cupy.asarray(indptr)),
                            out=cupy.empty_like(cupy.asarray(scores)))
    assert np.array_equal(cupy.asnumpy(through), host)
    indices = rng.integers(0, 9, size=scores.shape[0])
    features = rng.standard_normal((9, 2, 4))
    aggregated = spart.softmax_aggregate(scores, indptr, indices, features)
    aggregated_gpu = spart.softmax_aggregate(*(cupy.asarray(a) for a in
                                               (scores, indptr, indices, features)))
    assert np.array_equal(cupy.asnumpy(aggregated_gpu), aggregated)
    query = rng.standard_normal((3, 40)).astype(np.float32)
    candidates = rng.standard_normal((3, 3000, 40)).astype(np.float32)
    p = spart.score_candidates(query, candidates, "cosine")
    p_gpu = spart.score_candidates(cupy.asarray(query), cupy.asarray(candidates), "cosine")
    assert np.array_equal(cupy.asnumpy(p_gpu), p)
    with pytest.raises(spart.SpartValueError, match="candidates"):
        spart.score_candidates(cupy.asarray(query), candidates)  # one on each side
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        t = spart.softmax(torch.from_numpy(scores).cuda(), torch.from_numpy(indptr).cuda())
        torch.cuda.synchronize()
        assert isinstance(t, torch.Tensor) and np.array_equal(t.cpu().numpy(), host)


def test_vcs_products_on_gpu_give_the_host_bits(regridders):
    """A VCS matrix moved to the GPU: A @ B and B @ A on CuPy arrays are
    the host's bits (float64 and float32)."""
    cupy = pytest.importorskip("cupy")
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(4)
    dense = rng.poisson(0.8, size=(300, 70)).astype(np.float64)
    dense[rng.random(dense.shape) < 0.6] = 0
    host = spart.VcsMatrix.from_scipy(scipy_sparse.csr_array(dense), recipe="scanpy")
    device = host.to_device(0)
    b = rng.standard_normal((70, 9))
    left = rng.standard_normal((5, 300)).astype(np.float32)
    assert np.array_equal(cupy.asnumpy(device @ cupy.asarray(b)), host @ b)
    assert np.array_equal(cupy.asnumpy(cupy.asarray(left) @ device), left @ host)
    with pytest.raises(spart.SpartTypeError, match="host"):
        device @ b


def test_permute_plan_on_gpu_gives_the_host_bits(regridders):
    """A device plan on CuPy arrays: the host plan's bits."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(5)
    shape, axes = (17, 3, 40, 9), (3, 1, 0, 2)
    a = rng.standard_normal(shape).astype(np.float32)
    host = spart.PermutePlan.transpose(shape, axes, np.float32)(a.reshape(-1))
    plan = spart.PermutePlan.transpose(shape, axes, np.float32, device=0)
    assert np.array_equal(cupy.asnumpy(plan(cupy.asarray(a.reshape(-1)))), host)
