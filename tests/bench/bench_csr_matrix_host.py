#!/usr/bin/env python3
"""The CSR matrix of spart/csr_matrix.h on the host against scipy.sparse.

    bench_csr_matrix_host.py LIBSPART [--threads T] [--repeat R] [--markdown FILE] [--quick]

The same arrays (int32 row pointers and columns, float64 values, as
scipy holds them) go to both: scipy's csr_matrix @ x (one thread, its
only way) and spart_csr_matrix_multiply (wrapped arrays, T OpenMP
threads), one float64 vector and eight. Matrices: an R-MAT power-law
graph (a = 0.57, b = c = 0.19), random columns, a band whose rows hold 12
to 35 entries. The floor is the bytes a product must move at the copy
rate numpy measures with T threads copying slices of 1 GiB at once.

spart's y is checked against scipy's within the rounding of two orders of
the same sums (`within_rounding`), and the arrays spart wraps are checked
unchanged after every product. The check must not touch the matrix both
use: scipy's `abs(a)` sums a's duplicate entries *in place* (sorting the
columns of each row and compacting indices and data), and R-MAT rows hold
duplicate columns, so the earlier `abs(a) @ abs(x)` rewrote the arrays
spart had wrapped; the next product (eight vectors) then read old row
pointers over compacted columns and differed from scipy "beyond rounding"
(rounds 3 and 4 of 2026-12-01). The bound now comes from a separate matrix
of copied arrays.

--quick runs small matrices of the same kinds once (the CTest
`csr_matrix_scipy`, label parity: it fails on the old comparison). Exit 77
when numpy or scipy cannot be imported.
"""
import argparse
import ctypes
import os
import platform
import time

import sys

try:
    import numpy as np
    import scipy
    import scipy.sparse
except ImportError as error:
    print("skipped: numpy and scipy are needed (%s)" % error)
    sys.exit(77)


class CsrArrays(ctypes.Structure):
    _fields_ = [("num_rows", ctypes.c_int64), ("num_columns", ctypes.c_int64),
                ("num_entries", ctypes.c_int64), ("row_ptr", ctypes.c_void_p),
                ("row_ptr_type", ctypes.c_int), ("columns", ctypes.c_void_p),
                ("column_type", ctypes.c_int), ("values", ctypes.c_void_p),
                ("value_type", ctypes.c_int), ("on_device", ctypes.c_int)]


class CsrOptions(ctypes.Structure):
    _fields_ = [("wrap", ctypes.c_int), ("check", ctypes.c_int)]


class CsrProduct(ctypes.Structure):
    _fields_ = [("operation", ctypes.c_int), ("num_vectors", ctypes.c_int64),
                ("alpha", ctypes.c_double), ("beta", ctypes.c_double),
                ("vector_type", ctypes.c_int)]


SPART_INT32 = 1


def rmat(scale, edge_factor, rng):
    edges = (1 << scale) * edge_factor
    rows = np.zeros(edges, dtype=np.int64)
    cols = np.zeros(edges, dtype=np.int64)
    for _ in range(scale):
        u = rng.random(edges)
        down = u >= 0.76
        right = ((u >= 0.57) & (u < 0.76)) | (u >= 0.95)
        rows = 2 * rows + down
        cols = 2 * cols + right
    n = 1 << scale
    order = np.argsort(rows, kind="stable")
    rows, cols = rows[order], cols[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    indptr = np.cumsum(indptr)
    values = 0.5 + rng.random(edges)
    return f"R-MAT 2^{scale}, {edge_factor} a row", indptr, cols, values, n


def of_lengths(name, lengths, columns_of, rng, n):
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    cols = columns_of(indptr)
    values = 0.5 + rng.random(indptr[-1])
    return name, indptr, cols, values, n


def random_columns(n, per_row, rng):
    lengths = np.full(n, per_row)
    return of_lengths(f"random columns, {per_row} a row", lengths,
                      lambda p: rng.integers(0, n, p[-1]), rng, n)


def band(n, rng):
    lengths = rng.integers(12, 36, n)

    def columns(indptr):
        row = np.repeat(np.arange(n), lengths)
        first = (row / n * (n - 64)).astype(np.int64)
        return first + (np.arange(indptr[-1]) - indptr[row])

    return of_lengths("band, rows of 12 to 35", lengths, columns, rng, n)


def within_rounding(indptr, cols, values, n, xt, y, expected):
    """Whether y (spart) and expected (scipy) agree within the rounding of
    two orders of the same sums. A row of L entries summed in any order
    with products rounded (or fused) errs from the exact sum by at most
    gamma_L = L u / (1 - L u) of the sum of the terms' magnitudes
    (u = 2^-53; Higham, Accuracy and Stability, 3.1 and 4.2); two such
    orders differ by at most twice that: 2.3e-16 (L + 1) times the sum of
    magnitudes. A relative test of y alone fails where terms cancel.
    The magnitudes come from a matrix of *copies*: scipy's abs(a) would
    sum a's duplicates in place (see the module's docstring)."""
    magnitudes = scipy.sparse.csr_matrix((np.abs(values), cols.copy(), indptr.copy()),
                                         shape=(n, n))
    bound = magnitudes @ np.abs(xt)
    bound = bound.T if bound.ndim > 1 else bound[None, :]
    lengths = np.diff(indptr)[None, :] + 1
    return bool(np.all(np.abs(y - expected) <= 2.3e-16 * lengths * bound))


def best_time(call, repeat):
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def copy_rate(threads=1):
    """Bytes read and written a second by np.copyto of 1 GiB, cut into
    `threads` slices copied by as many Python threads at once (copyto
    releases the GIL), so the floor of T threads is measured with T."""
    a = np.ones(1 << 27)
    b = np.empty_like(a)
    cuts = np.linspace(0, a.size, threads + 1).astype(np.int64)
    if threads == 1:
        seconds = best_time(lambda: np.copyto(b, a), 5)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(threads) as pool:
            def copy_all():
                list(pool.map(lambda k: np.copyto(b[cuts[k]:cuts[k + 1]], a[cuts[k]:cuts[k + 1]]),
                              range(threads)))
            seconds = best_time(copy_all, 5)
    return 2 * a.nbytes / seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--markdown")
    parser.add_argument("--quick", action="store_true",
                        help="small matrices, once: the comparison only (CTest)")
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1
    lib = ctypes.CDLL(args.library)
    lib.spart_csr_matrix_create.argtypes = [ctypes.c_void_p, ctypes.POINTER(CsrArrays),
                                            ctypes.POINTER(CsrOptions),
                                            ctypes.POINTER(ctypes.c_void_p)]
    lib.spart_csr_matrix_multiply.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                              ctypes.POINTER(CsrProduct), ctypes.c_void_p,
                                              ctypes.c_void_p]
    lib.spart_csr_matrix_free.argtypes = [ctypes.c_void_p]
    lib.spart_context_error.restype = ctypes.c_char_p
    lib.spart_context_error.argtypes = [ctypes.c_void_p]
    context = ctypes.c_void_p()
    assert lib.spart_context_create(ctypes.byref(context)) == 0
    assert lib.spart_context_set_threads(context, args.threads) == 0
    rng = np.random.default_rng(2026)
    rate = copy_rate(args.threads) if not args.quick else float("nan")  # --quick: no floor
    rows_out = []
    scale, rows = (12, 1 << 14) if args.quick else (18, 1 << 20)
    for make in (lambda: rmat(scale, 16, rng), lambda: random_columns(rows, 8, rng),
                 lambda: band(rows, rng)):
        name, indptr, cols, values, n = make()
        a = scipy.sparse.csr_matrix((values, cols.astype(np.int32), indptr.astype(np.int32)),
                                    shape=(n, n))
        indptr32, cols32, values64 = a.indptr, a.indices, a.data
        pristine = (indptr32.copy(), cols32.copy(), values64.copy())
        arrays = CsrArrays(n, n, len(values64), indptr32.ctypes.data, SPART_INT32,
                           cols32.ctypes.data, SPART_INT32, values64.ctypes.data, 0, 0)
        matrix = ctypes.c_void_p()
        status = lib.spart_csr_matrix_create(context, ctypes.byref(arrays),
                                             ctypes.byref(CsrOptions(1, 0)), ctypes.byref(matrix))
        if status != 0:
            raise RuntimeError(lib.spart_context_error(context).decode())
        result = {"name": name, "rows": n, "entries": len(values64)}
        for width in (1, 8):
            x = rng.random((width, n)) - 0.5
            y = np.empty((width, n))
            product = CsrProduct(0, width, 1.0, 0.0, 0)

            def spart_call():
                assert lib.spart_csr_matrix_multiply(context, matrix, ctypes.byref(product),
                                                     x.ctypes.data, y.ctypes.data) == 0

            spart_s = best_time(spart_call, args.repeat)
            xt = np.ascontiguousarray(x.T) if width > 1 else x[0]
            scipy_s = best_time(lambda: a @ xt, args.repeat)
            expected = (a @ xt).T if width > 1 else (a @ xt)[None, :]
            if not within_rounding(indptr32, cols32, values64, n, xt, y, expected):
                raise RuntimeError(f"{name}, {width} vectors: spart differs from scipy "
                                   "beyond rounding")
            if not all(np.array_equal(now, then) for now, then in
                       zip((a.indptr, a.indices, a.data, indptr32, cols32, values64),
                           pristine + pristine)):
                raise RuntimeError(f"{name}: the arrays spart wraps changed during the run")
            moved = 4 * (n + 1) + 12 * len(values64) + 8 * width * 2 * n
            result[width] = (spart_s, scipy_s, moved / rate)
        lib.spart_csr_matrix_free(matrix)
        rows_out.append(result)
        print(name, {k: v for k, v in result.items() if k in (1, 8)}, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(f"- machine: {platform.processor() or platform.machine()}, "
                      f"{os.cpu_count()} logical processors; spart on {args.threads} threads\n")
            out.write(f"- peers: scipy {scipy.__version__} (csr_matrix @ x, one thread), "
                      f"numpy {np.__version__}\n")
            out.write(f"- command: `bench_csr_matrix_host.py ... --threads {args.threads} "
                      f"--repeat {args.repeat}`\n")
            out.write(f"- timing: best of {args.repeat} after a warm-up; floor: bytes moved at "
                      f"the copy rate of {args.threads} threads (np.copyto of slices of 1 GiB "
                      f"at once), {rate / 1e9:.1f} GB/s\n\n")
            out.write("| matrix | rows | entries | floor ms | spart ms | % of copy | scipy ms | "
                      "speed-up | floor 8 ms | spart 8 ms | scipy 8 ms | speed-up 8 |\n")
            out.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
            for r in rows_out:
                s1, c1, f1 = r[1]
                s8, c8, f8 = r[8]
                out.write(f"| {r['name']} | {r['rows']} | {r['entries']} | {f1 * 1e3:.3f} | "
                          f"{s1 * 1e3:.3f} | {100 * f1 / s1:.0f} % | {c1 * 1e3:.3f} | "
                          f"{c1 / s1:.1f}x | {f8 * 1e3:.3f} | "
                          f"{s8 * 1e3:.3f} | {c8 * 1e3:.3f} | {c8 / s8:.1f}x |\n")
    lib.spart_context_free(context)
    print("%s: spart agrees with scipy within rounding on %d matrices, 1 and 8 vectors"
          % ("quick" if args.quick else "bench", len(rows_out)))


if __name__ == "__main__":
    main()
