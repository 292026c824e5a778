#!/usr/bin/env python3
"""The scipy peer of bench_vcs: the CSR product of the same Delta plus the
rank-1 term, on one thread (scipy's sparse products are single-threaded).

    bench_vcs_scipy.py FOLDER REPEAT

FOLDER holds shape.txt (n_rows n_cols nnz width), indptr.i64, indices.i32,
delta.f64, b.f64 (max(n_rows, n_cols) x width), offset.f64 (n_cols), as
bench_vcs.c writes them. Prints one line: ab_ms ba_ms scipy_version.
"""
import sys
import time

import numpy as np
import scipy
import scipy.sparse


def median_ms(call, repeat):
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def main():
    folder, repeat = sys.argv[1], int(sys.argv[2])
    n_rows, n_cols, nnz, width = (int(v) for v in open(f"{folder}/shape.txt").read().split())
    indptr = np.fromfile(f"{folder}/indptr.i64", dtype=np.int64)
    indices = np.fromfile(f"{folder}/indices.i32", dtype=np.int32)
    delta = np.fromfile(f"{folder}/delta.f64", dtype=np.float64)
    b_all = np.fromfile(f"{folder}/b.f64", dtype=np.float64)
    offset = np.fromfile(f"{folder}/offset.f64", dtype=np.float64)
    a = scipy.sparse.csr_matrix((delta, indices, indptr), shape=(n_rows, n_cols))
    a.has_sorted_indices = True
    b_ab = b_all[: n_cols * width].reshape(n_cols, width)
    b_ba = b_all[: width * n_rows].reshape(width, n_rows)
    ab = median_ms(lambda: a @ b_ab + (offset @ b_ab)[None, :], repeat)
    ba = median_ms(lambda: b_ba @ a + np.outer(b_ba.sum(axis=1), offset), repeat)
    print(f"{ab:.4f} {ba:.4f} {scipy.__version__}")


if __name__ == "__main__":
    main()
