#!/usr/bin/env python3
"""test_softmax_pyg.py: spart's segmented softmax (host, through ctypes on
the shared library) against PyG's torch_geometric.utils.softmax on the ptr
path (CPU), float32 and float64, 1 and 8 heads, on power-law graphs with
empty rows and a row longer than a chunk. Tolerance: float64 within 1e-12
absolute (both compute in float64; values <= 1), float32 within 2e-7
absolute (PyG computes in float32: its exp and sums round at 6e-8 of
each value, a few times over). Exit 77 (skipped) without torch or
torch_geometric.

Usage: test_softmax_pyg.py --library LIBSPART
"""
import argparse
import ctypes
import sys

try:
    import torch
    from torch_geometric.utils import softmax as pyg_softmax
except Exception as error:  # noqa: BLE001
    print("skipped: torch and torch_geometric are needed (%s)" % error)
    sys.exit(77)


class Segments(ctypes.Structure):
    _fields_ = [("num_rows", ctypes.c_int64), ("num_edges", ctypes.c_int64),
                ("num_heads", ctypes.c_int64), ("row_ptr", ctypes.c_void_p),
                ("row_ptr32", ctypes.c_void_p), ("value_type", ctypes.c_int),
                ("on_device", ctypes.c_int)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    lib = ctypes.CDLL(args.library)
    lib.spart_context_error.restype = ctypes.c_char_p
    context = ctypes.c_void_p()
    assert lib.spart_context_create(ctypes.byref(context)) == 0
    generator = torch.Generator().manual_seed(5)
    failures = 0
    for rows, long_row in ((3000, 0), (500, 5000)):
        lengths = torch.floor(3.0 * (1.0 - torch.rand(rows, generator=generator, dtype=torch.float64))
                              .pow(-1.0 / 1.2)).to(torch.int64)
        lengths[::7] = 0
        if long_row:
            lengths[3] = long_row
        ptr = torch.zeros(rows + 1, dtype=torch.int64)
        ptr[1:] = torch.cumsum(lengths, 0)
        edges = int(ptr[-1])
        for dtype, value_type, tolerance in ((torch.float64, 0, 1e-12), (torch.float32, 1, 2e-7)):
            for heads in (1, 8):
                scores = (8.0 * torch.randn(edges, heads, generator=generator,
                                            dtype=torch.float64)).to(dtype)
                out = torch.empty_like(scores)
                segments = Segments(rows, edges, heads, ptr.data_ptr(), None, value_type, 0)
                status = lib.spart_softmax_forward(context, ctypes.byref(segments),
                                                   ctypes.c_void_p(scores.data_ptr()),
                                                   ctypes.c_void_p(out.data_ptr()))
                if status != 0:
                    print("spart:", lib.spart_context_error(context).decode())
                    return 1
                expected = pyg_softmax(scores, ptr=ptr, num_nodes=rows)
                worst = float((out - expected).abs().max()) if edges else 0.0
                ok = worst <= tolerance
                failures += not ok
                print("%s rows %d edges %d %s H %d: max |spart - PyG| = %.2e (%s)" % (
                    "ok" if ok else "FAILED", rows, edges, dtype, heads, worst, tolerance))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
