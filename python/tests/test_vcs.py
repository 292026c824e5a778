"""VCS count matrices from Python: A @ B and B @ A of the normalized view
against a dense NumPy normalization built from spart's own statistics, the
recipe's statistics checked independently, the transposed view, errors."""

import numpy as np
import pytest

import spart

scipy_sparse = pytest.importorskip("scipy.sparse")

G = {"raw": lambda u: u, "cp10k_log1p": np.log1p, "scanpy": np.log1p, "pearson": np.sqrt,
     "parafac2": lambda u: np.log10(1 + 1000 * u)}


def counts(rng, rows=37, columns=23):
    """Counts with empty rows, an empty column and a few large values."""
    dense = rng.poisson(0.6, size=(rows, columns)).astype(np.float64)
    dense[rng.random((rows, columns)) < 0.5] = 0
    dense[3] = 0
    dense[:, 5] = 0
    dense[7, 2] = 250
    return dense


def normalized(matrix, dense, recipe):
    stats = matrix.statistics()
    a = 1 / stats["row_scale"]
    b = np.where(stats["gene_scale"] > 0, 1 / np.where(stats["gene_scale"] > 0,
                                                         stats["gene_scale"], 1), 0)
    return stats["scale"] * (G[recipe]((dense * a[:, None]) * b) - stats["centre"])


@pytest.mark.parametrize("recipe", sorted(G))
def test_products_match_a_dense_normalization(recipe):
    rng = np.random.default_rng(20)
    dense = counts(rng)
    matrix = spart.VcsMatrix.from_scipy(scipy_sparse.csr_array(dense), recipe=recipe)
    assert matrix.shape == dense.shape and matrix.nnz == np.count_nonzero(dense)
    y = normalized(matrix, dense, recipe)
    b = rng.standard_normal((23, 6))
    np.testing.assert_allclose(matrix @ b, y @ b, rtol=1e-11, atol=1e-11)
    left = rng.standard_normal((4, 37))
    np.testing.assert_allclose(left @ matrix, left @ y, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(matrix.T @ np.ascontiguousarray(left.T), (left @ y).T, rtol=1e-11, atol=1e-11)
    as_float = matrix @ b.astype(np.float32)
    assert as_float.dtype == np.float32
    np.testing.assert_allclose(as_float, y @ b.astype(np.float32).astype(np.float64),
                               rtol=1e-5, atol=1e-5)


def test_statistics_of_cp10k_and_the_counts_round_trip():
    rng = np.random.default_rng(21)
    dense = counts(rng)
    matrix = spart.VcsMatrix.from_scipy(scipy_sparse.coo_array(dense), "cp10k_log1p", "vcsc")
    depth = dense.sum(axis=1)
    expected = np.where(depth > 0, depth / 1e4, 1.0)
    np.testing.assert_allclose(matrix.statistics()["row_scale"], expected, rtol=1e-15)
    assert np.array_equal(matrix.to_scipy().toarray(), dense)


def test_bad_input_is_named():
    rng = np.random.default_rng(22)
    matrix = spart.VcsMatrix.from_scipy(scipy_sparse.csr_array(counts(rng)))
    with pytest.raises(spart.SpartValueError, match="b: shape"):
        matrix @ np.ones((22, 3))
    with pytest.raises(spart.SpartValueError, match="recipe"):
        spart.VcsMatrix.from_scipy(scipy_sparse.csr_array(counts(rng)), recipe="tpm")
    with pytest.raises(spart.SpartTypeError, match="b: a int64"):
        matrix @ np.ones((23, 3), dtype=np.int64)
    negative = scipy_sparse.csr_array(-counts(rng))
    with pytest.raises(spart.SpartValueError):  # spart's own check: negative counts
        spart.VcsMatrix.from_scipy(negative, recipe="cp10k_log1p")
