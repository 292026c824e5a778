"""
The streaming assembly from Python (spart.WeightsStream,
Regridder.from_stream): blocks from a Python function (a cffi extern
"Python" callback) or from weights files give the CSR arrays of
Regridder.from_weights bit for bit (spart_regridder_create, the C API's
assembly), for any block sizes; errors in the function come back as
Python exceptions; budgets too small are refused with spart's sentence.
"""

import numpy as np
import pytest

import spart
from conftest import grid_2d  # noqa: F401 (test_gpu_build and test_gpu_grids import it from here)



@pytest.fixture(scope="module")
def weights():
    """Multilinear weights with 3 orthogonal elements (a batch axis of 3
    grids, each its own input) and their in-memory Regridder."""
    x_in = np.stack([np.linspace(0.0, 1.0, 41) * (1 + 0.1 * k) for k in range(3)])
    x_out = np.stack([np.linspace(0.05, 0.95, 29) for _ in range(3)])
    w = spart.weights(x_in, x_out, axis_input=1, axis_output=1)
    return w, spart.Regridder.from_weights(w)


def cut_blocks(w, block_entries):
    """A block function over a Weights' arrays, cut every `block_entries`
    entries (elements split across blocks), and the block count."""
    offsets, ii, io, v = w.arrays()
    total = int(offsets[-1])
    starts = list(range(0, total, block_entries)) or [0]
    calls = []

    def blocks(block, pass_):
        calls.append((block, pass_))
        start, stop = starts[block], min(starts[block] + block_entries, total)
        first = int(np.searchsorted(offsets, start, side="right")) - 1
        last = int(np.searchsorted(offsets, stop, side="left"))  # elements [first, last)
        local = np.clip(offsets[first:last + 1], start, stop) - start
        return (first, np.ascontiguousarray(local, dtype=np.int64), ii[start:stop],
                io[start:stop], v[start:stop])

    return blocks, len(starts), calls


def same_matrix(a, b):
    return all(np.array_equal(p, q) and p.dtype == q.dtype for p, q in zip(a.csr(), b.csr()))


@pytest.mark.parametrize("block_entries", [1, 7, 50, 10_000])
def test_blocks_from_python_same_bits(weights, block_entries):
    w, direct = weights
    blocks, count, calls = cut_blocks(w[0], block_entries)
    stream = spart.WeightsStream(blocks, count, block_entries, w[0].shape, w[1], w[2],
                                 axis_input=w[0].axis_input, axis_output=w[0].axis_output)
    budget = stream.bytes_needed(direct.nnz)
    r = spart.Regridder.from_stream(stream, budget)
    assert same_matrix(r, direct)
    assert r.shape_input == direct.shape_input and r.shape_output == direct.shape_output
    x = np.random.default_rng(1).random(direct.shape_input)
    assert np.array_equal(r(x), direct(x))
    # two passes over every block, in block order
    assert calls == [(b, p) for p in (0, 1) for b in range(count)]
    report = r.stream_report
    assert report["num_blocks"] == count and report["num_entries"] == direct.nnz
    assert report["peak_bytes"] <= budget == report["budget_bytes"]


def test_files_same_bits(weights, tmp_path):
    w, direct = weights
    path = tmp_path / "w.fits"
    w[0].save(path)
    stream = spart.WeightsStream.from_files([path], block_entries=13)
    assert stream.max_block_entries == 13 and stream.num_blocks >= w[0].num_entries // 13
    r = spart.Regridder.from_stream(stream, stream.bytes_needed(direct.nnz), dtype=np.float32)
    assert same_matrix(r, spart.Regridder.from_weights(w, dtype=np.float32))


def test_budget_and_block_size(weights):
    w, direct = weights
    blocks, count, _ = cut_blocks(w[0], 50)
    stream = spart.WeightsStream(blocks, count, 50, w[0].shape, w[1], w[2],
                                 axis_input=1, axis_output=1)
    need = stream.bytes_needed(direct.nnz)
    assert stream.block_entries_for(direct.nnz, need) == direct.nnz  # host: blocks read in place
    with pytest.raises(spart.SpartValueError, match="bytes") as caught:
        spart.Regridder.from_stream(stream, need // 4)
    assert caught.value.status_name == "SPART_ERROR_INVALID_ARGUMENT"


def test_errors_in_the_function(weights):
    w, direct = weights
    blocks, count, _ = cut_blocks(w[0], 50)
    shapes = (w[0].shape, w[1], w[2])

    def failing(block, pass_):
        if block == 1:
            raise KeyError("no block 1 here")
        return blocks(block, pass_)

    stream = spart.WeightsStream(failing, count, 50, *shapes, axis_input=1, axis_output=1)
    with pytest.raises(KeyError, match="no block 1 here"):
        spart.Regridder.from_stream(stream, 1 << 24)

    def wrong_dtype(block, pass_):
        first, offsets, ii, io, v = blocks(block, pass_)
        return first, offsets, ii.astype(np.int32), io, v

    stream = spart.WeightsStream(wrong_dtype, count, 50, *shapes, axis_input=1, axis_output=1)
    with pytest.raises(TypeError, match="indices_input: an? int32"):
        spart.Regridder.from_stream(stream, 1 << 24)

    def changing(block, pass_):  # a different block at the second pass
        first, offsets, ii, io, v = blocks(block, pass_)
        return first, offsets, ii, io, v * (1.0 + pass_)

    stream = spart.WeightsStream(changing, count, 50, *shapes, axis_input=1, axis_output=1)
    r = spart.Regridder.from_stream(stream, 1 << 24)  # values are not fingerprinted
    assert r.nnz == direct.nnz

    def moved(block, pass_):  # entries of another row at the second pass
        first, offsets, ii, io, v = blocks(block, pass_)
        return first, offsets, ii, (io + pass_) % 28, v

    stream = spart.WeightsStream(moved, count, 50, *shapes, axis_input=1, axis_output=1)
    with pytest.raises(spart.SpartValueError, match="changed|block"):
        spart.Regridder.from_stream(stream, 1 << 24)
    with pytest.raises(TypeError, match="blocks: a int"):
        spart.WeightsStream(3, count, 50, *shapes)
    with pytest.raises(TypeError, match="stream: a tuple"):
        spart.Regridder.from_stream(shapes, 1 << 24)
    with pytest.raises(spart.SpartError, match="missing|No such|open") as caught:
        spart.WeightsStream.from_files(["/nonexistent/w.fits"], 10)
    assert caught.value.status_name == "SPART_ERROR_IO"


def test_two_threads_one_stream(weights):
    """Two threads assemble one WeightsStream at once (the GIL is released
    during the assembly, taken again in each block call): both get the
    in-memory CSR arrays."""
    import threading

    w, direct = weights
    blocks, count, _ = cut_blocks(w[0], 11)
    stream = spart.WeightsStream(blocks, count, 11, w[0].shape, w[1], w[2],
                                 axis_input=1, axis_output=1)
    results = [None, None]

    def run(k):
        results[k] = spart.Regridder.from_stream(stream, 1 << 24)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is not None and same_matrix(r, direct) for r in results)
