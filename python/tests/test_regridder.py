"""The Regridder through the package: products, transposes, scipy, files."""

import threading

import numpy as np
import pytest
from conftest import address, grid_2d

import spart



@pytest.fixture(scope="module")
def weights():
    return spart.weights(grid_2d(13), grid_2d(9, 0.0, 0.01, 1.2), method="conservative")


def test_product_equals_regrid_from_weights(weights):
    r = spart.Regridder.from_weights(weights)
    assert r.shape_input == (12, 12) and r.shape_output == (8, 8)
    assert r.shape == (64, 144) and r.nnz == weights[0].num_entries
    x = np.random.default_rng(0).random((12, 12))
    assert np.allclose(r(x), spart.regrid_from_weights(*weights, x), rtol=1e-13, atol=1e-15)


def test_batches_give_the_bits_of_single_vectors(weights):
    r = spart.Regridder.from_weights(weights)
    x = np.random.default_rng(1).random((5, 12, 12))
    y = r(x)
    assert y.shape == (5, 8, 8)
    for k in range(5):
        assert np.array_equal(r(x[k]), y[k])


def test_out_is_written_in_place(weights):
    r = spart.Regridder.from_weights(weights)
    x = np.random.default_rng(2).random((12, 12))
    out = np.empty((8, 8))
    before = address(out)
    returned = r(x, out=out)
    assert returned is out and address(out) == before
    assert np.array_equal(out, r(x))


def test_bound_product_reads_and_writes_in_place(weights):
    r = spart.Regridder.from_weights(weights)
    x = np.random.default_rng(3).random((12, 12))
    out = np.empty((8, 8))
    product = r.bind(x, out)
    assert product() is out and np.array_equal(out, r(x))
    x *= 2  # the bound x is read where it lies at every call
    product()
    assert np.array_equal(out, r(x))
    with pytest.raises(spart.SpartValueError, match="out: shape"):
        r.bind(x, np.empty((7, 8)))
    with pytest.raises(spart.SpartValueError, match="out: None"):
        r.bind(x, None)


def test_transpose_and_adjoint(weights):
    r = spart.Regridder.from_weights(weights)
    assert r.T.T is r and r.T is r.T
    assert r.T.shape_input == r.shape_output and r.T.shape_output == r.shape_input
    rng = np.random.default_rng(3)
    x, y = rng.random((12, 12)), rng.random((8, 8))
    assert np.isclose(np.vdot(r(x), y), np.vdot(x, r.T(y)), rtol=1e-13)


def test_conservative_transpose_is_replaced(weights):
    r = spart.Regridder.from_weights(weights)
    grids = (grid_2d(13), grid_2d(9, 0.0, 0.01, 1.2))
    first = r.transpose_conservative(*grids)
    expected = spart.transpose_weights_conservative(weights, *grids)
    y = np.random.default_rng(4).random((8, 8))
    first_values = first(y)
    assert np.allclose(first_values, spart.regrid_from_weights(*expected, y), rtol=1e-13,
                       atol=1e-15)
    second = r.transpose_conservative(*grids)
    assert np.array_equal(second(y), first_values)
    with pytest.raises(spart.SpartError, match="replaced"):
        first(y)


def test_to_scipy_shares_the_arrays(weights):
    scipy_sparse = pytest.importorskip("scipy.sparse")
    r = spart.Regridder.from_weights(weights)
    indptr, indices, data = r.csr()
    assert not data.flags.writeable and indices.dtype == np.int32
    a = r.to_scipy()
    assert isinstance(a, scipy_sparse.csr_array) and a.shape == r.shape
    assert address(a.data) == address(data) and address(a.indices) == address(indices)
    x = np.random.default_rng(5).random(144)
    assert np.allclose(a @ x, r(x.reshape(12, 12)).ravel(), rtol=1e-13, atol=1e-15)
    copied = r.to_scipy(copy=True)
    assert not np.shares_memory(copied.data, data)
    del r, indptr, indices, data  # the views keep spart's matrix alive
    assert np.allclose(a @ x, copied @ x)


def test_float32_values_and_roles(weights):
    r32 = spart.Regridder.from_weights(weights, dtype=np.float32)
    assert r32.dtype == np.float32 and r32.csr()[2].dtype == np.float32
    x = np.random.default_rng(6).random((12, 12))
    assert np.allclose(r32(x), spart.Regridder.from_weights(weights)(x), rtol=1e-6)
    # one element, a batch axis of 3 in front: (1, 12, 12) -> (1, 8, 8) applied to 3 inputs
    x_in = np.stack(grid_2d(13))[:, None]
    x_out = np.stack(grid_2d(9, 0.0, 0.01, 1.2))[:, None]
    w = spart.weights(tuple(x_in), tuple(x_out), axis_input=(1, 2), axis_output=(1, 2),
                      method="conservative")
    batch = spart.Regridder.from_weights(w, shape_input=(3, 12, 12), shape_output=(3, 8, 8))
    xs = np.random.default_rng(7).random((3, 12, 12))
    single = spart.Regridder.from_weights(weights)
    assert np.array_equal(batch(xs)[1], single(xs[1]))


def test_save_load_same_bits(weights, tmp_path):
    r = spart.Regridder.from_weights(weights)
    r.save(tmp_path / "r.fits")
    loaded = spart.Regridder.load(tmp_path / "r.fits")
    x = np.random.default_rng(8).random((4, 12, 12))
    assert np.array_equal(loaded(x), r(x))


def test_threads_give_the_same_bits(weights):
    r = spart.Regridder.from_weights(weights)
    x = np.random.default_rng(9).random((16, 12, 12))
    expected = r(x)
    results = [None] * 4

    def work(k):
        spart.set_threads(1 + k % 2)
        results[k] = [r(x) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(y, expected) for run in results for y in run)


def test_gpu_without_cuda_says_so(weights):
    r = spart.Regridder.from_weights(weights)
    try:
        r.to_device(0)
    except spart.SpartError as error:
        assert error.status_name == "SPART_ERROR_NO_DEVICE"
    else:
        pytest.skip("a CUDA device is visible: test_gpu.py covers it")
    with pytest.raises(spart.SpartError) as caught:
        spart.Regridder.from_weights(weights, device=0)
    assert caught.value.status_name == "SPART_ERROR_NO_DEVICE"
    assert "cuda" in caught.value.sentence.lower() or "device" in caught.value.sentence
