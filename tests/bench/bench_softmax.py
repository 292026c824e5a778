#!/usr/bin/env python3
"""bench_softmax.py: spart's segmented softmax (spart/softmax.h, through
ctypes) against PyG's softmax (the ptr and the index paths) and
torch_scatter.scatter_softmax where installed, on the same graphs in the
same run, with the copy rate measured by the same program; the fused
aggregation against the softmax followed by a gather and scatter-add (as
PyG's message passing does it); the host against PyG's CPU softmax.

Graphs: power-law row lengths (Pareto, exponent 2.1) with the stated sizes
plus one hub row holding 10 % of the edges: ogbn-arxiv-sized (169,343
nodes, 1,166,243 edges and their reverses), Reddit-sized (232,965 nodes,
114,615,892 edges), ogbn-products-sized (2,449,029 nodes, 61,859,140
edges); H in {1, 4, 8}; float32; rows = destination nodes, int64 row
pointers.

Usage: bench_softmax.py LIBSPART [--markdown FILE] [--repeat N] [--quick]
           [--graphs arxiv,products,reddit] [--heads 1,4,8] [--ptr-below E]
           [--no-fused] [--fused-heads 4,8] [--no-designs] [--no-host] [--budget S]
           [--host-only] [--host-graphs arxiv,products] [--host-heads 1,4,8]
           [--host-threads T] [--before OLDLIBSPART]

The fused aggregation is timed against spart's softmax followed by torch's
gather and index_add_ (PyG's message passing) and against spart's softmax
followed by spart's own SpMM (spart/csr_matrix.h, a wrapped matrix a head).
The host part (after the first graph, or alone with --host-only, which
needs no GPU) times the host forward against PyG's CPU softmax (ptr path)
with the same thread count for both, and, with --before, an earlier build
of the library on the same arrays (its bits compared).

Where the library has the benchmark's hook (spart_softmax_bench_set_forward_design),
the device forward is also timed with each of its layouts (design 0: a
group every row; 1: rows binned in tiles; 2, the default: a block a chunk
of more than 512 edges) and their parts: the same bits, checked equal. PyG's ptr path is timed only on
graphs of fewer than --ptr-below edges (it takes 0.7 to 1.5 s a call on
the products-sized graph).
"""
import argparse
import ctypes
import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np
import torch

GRAPHS = [
    ("ogbn-arxiv-sized", 169343, 2 * 1166243),
    ("ogbn-products-sized", 2449029, 61859140),
    ("Reddit-sized", 232965, 114615892),
]


class Segments(ctypes.Structure):
    _fields_ = [("num_rows", ctypes.c_int64), ("num_edges", ctypes.c_int64),
                ("num_heads", ctypes.c_int64), ("row_ptr", ctypes.c_void_p),
                ("row_ptr32", ctypes.c_void_p), ("value_type", ctypes.c_int),
                ("on_device", ctypes.c_int)]


class Gather(ctypes.Structure):
    _fields_ = [("num_nodes", ctypes.c_int64), ("width", ctypes.c_int64),
                ("columns", ctypes.c_void_p), ("columns32", ctypes.c_void_p)]


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


class Spart:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.spart_context_error.restype = ctypes.c_char_p
        self.lib.spart_softmax_workspace_size.restype = ctypes.c_size_t
        self.lib.spart_softmax_workspace_size.argtypes = [ctypes.POINTER(Segments), ctypes.c_int64]
        for name in ("spart_softmax_forward_workspace", "spart_softmax_backward_workspace",
                     "spart_softmax_aggregate_workspace"):
            getattr(self.lib, name).restype = ctypes.c_int
        self.context = ctypes.c_void_p()
        self.check(self.lib.spart_context_create(ctypes.byref(self.context)))

    def check(self, status):
        if status != 0:
            raise RuntimeError("spart: " + self.lib.spart_context_error(self.context).decode())

    def set_device(self, device):
        self.check(self.lib.spart_context_set_cuda_device(self.context, ctypes.c_int(device)))

    def set_threads(self, threads):
        self.check(self.lib.spart_context_set_threads(self.context, ctypes.c_int(threads)))

    def segments(self, ptr, edges, heads, on_device):
        s = Segments(ptr.numel() - 1, edges, heads, ptr.data_ptr(), None, 1, on_device)
        return s

    def workspace(self, s, width, device):
        size = self.lib.spart_softmax_workspace_size(ctypes.byref(s), width)
        return torch.empty(max(size // 8, 1), dtype=torch.float64, device=device)

    def set_design(self, design):
        """The benchmark's hook; False where the library has none."""
        try:
            hook = self.lib.spart_softmax_bench_set_forward_design
        except AttributeError:
            return False
        hook(ctypes.c_int(design))
        return True

    def exp_pass(self, scores, out, shorter=0):
        """The exp-once floor's pass (spart_exp, or with `shorter` the
        candidate of src/softmax/softmax_exp.h); False where the library
        has none."""
        try:
            hook = self.lib.spart_softmax_bench_exp_pass
        except AttributeError:
            return False
        hook.restype = ctypes.c_int
        status = hook(ctypes.c_void_p(scores.data_ptr()), ctypes.c_void_p(out.data_ptr()),
                      ctypes.c_int64(scores.numel()), ctypes.c_int(shorter),
                      ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if status != 0:
            raise RuntimeError("spart_softmax_bench_exp_pass: CUDA error %d" % status)
        return True

    def forward(self, s, scores, out, ws):
        self.check(self.lib.spart_softmax_forward_workspace(
            self.context, ctypes.byref(s), ctypes.c_void_p(scores.data_ptr()),
            ctypes.c_void_p(out.data_ptr()), ctypes.c_void_p(ws.data_ptr()),
            ctypes.c_size_t(ws.numel() * 8)))

    def csr_matrix(self, ptr, col, values, num_columns):
        """spart's own CSR matrix (spart/csr_matrix.h) wrapping device
        arrays: int64 row pointers and columns, float32 values read where
        they lie (so a softmax written into `values` is the matrix's)."""
        arrays = CsrArrays(ptr.numel() - 1, num_columns, col.numel(), ptr.data_ptr(), 0,
                           col.data_ptr(), 0, values.data_ptr(), 1, int(values.is_cuda))
        options = CsrOptions(1, 0)
        matrix = ctypes.c_void_p()
        self.check(self.lib.spart_csr_matrix_create(self.context, ctypes.byref(arrays),
                                                    ctypes.byref(options), ctypes.byref(matrix)))
        return matrix

    def csr_free(self, matrix):
        self.lib.spart_csr_matrix_free(matrix)

    def csr_workspace(self, matrix, vectors):
        product = CsrProduct(0, vectors, 1.0, 0.0, 1)
        size = ctypes.c_size_t()
        self.check(self.lib.spart_csr_matrix_workspace_size(
            self.context, matrix, ctypes.byref(product), ctypes.byref(size)))
        return size.value

    def csr_multiply(self, matrix, vectors, x, y, ws):
        """y = A x for `vectors` float32 vectors laid one after another."""
        product = CsrProduct(0, vectors, 1.0, 0.0, 1)
        self.check(self.lib.spart_csr_matrix_multiply_workspace(
            self.context, matrix, ctypes.byref(product), ctypes.c_void_p(x.data_ptr()),
            ctypes.c_void_p(y.data_ptr()), ctypes.c_void_p(ws.data_ptr()),
            ctypes.c_size_t(ws.numel() * 8)))

    def aggregate(self, s, g, scores, features, y, ws):
        self.check(self.lib.spart_softmax_aggregate_workspace(
            self.context, ctypes.byref(s), ctypes.byref(g), ctypes.c_void_p(scores.data_ptr()),
            ctypes.c_void_p(features.data_ptr()), ctypes.c_void_p(y.data_ptr()), None,
            ctypes.c_void_p(ws.data_ptr()), ctypes.c_size_t(ws.numel() * 8)))


def power_law_ptr(rows, edges, seed, device):
    """Row pointers of `rows` rows holding `edges` edges: one hub row with
    10 % of them, the rest Pareto (exponent 2.1) lengths, some empty."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    u = torch.rand(rows, generator=g, dtype=torch.float64)
    w = (1.0 - u).pow(-1.0 / 1.1)
    hub = edges // 10
    lengths = torch.floor(w * (edges - hub) / w.sum()).to(torch.int64)
    lengths[rows // 3] = 0
    short = (edges - hub) - int(lengths.sum())
    idx = torch.randint(0, rows, (short,), generator=g)
    lengths += torch.bincount(idx, minlength=rows)
    lengths[rows // 3] = hub
    ptr = torch.zeros(rows + 1, dtype=torch.int64)
    ptr[1:] = torch.cumsum(lengths, 0)
    assert int(ptr[-1]) == edges
    return ptr.to(device)


def cuda_time(fn, repeat):
    """Median of `repeat` timed calls after one untimed (one timed call
    only when the first takes over 50 ms: the slow peers)."""
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    if time.perf_counter() - t0 > 0.05:
        repeat = 1
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


def cpu_time(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def header(args):
    try:
        import torch_geometric
        pyg = torch_geometric.__version__
    except Exception as e:  # noqa: BLE001
        pyg = "absent (%s)" % e
    try:
        import torch_scatter  # noqa: F401
        ts = torch_scatter.__version__
    except Exception:  # noqa: BLE001
        ts = "absent"
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return ["# Segmented softmax (spart/softmax.h)", "",
            "- machine: %s, %d CPU cores, GPU %s" % (platform.node(), os.cpu_count(), gpu),
            "- versions: torch %s, torch_geometric %s, torch_scatter %s, CUDA %s, Python %s"
            % (torch.__version__, pyg, ts, torch.version.cuda, platform.python_version()),
            "- date: %s" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
            "- command: `python3 tests/bench/bench_softmax.py %s`" % " ".join(sys.argv[1:]),
            "- times: median of %d runs (CUDA events on the default stream), float32" % args.repeat,
            ""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--markdown")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-host", action="store_true")
    parser.add_argument("--budget", type=float, default=28.0,
                        help="seconds: start no new graph after this")
    parser.add_argument("--graphs", default="arxiv,products,reddit")
    parser.add_argument("--heads", default="1,4,8")
    parser.add_argument("--ptr-below", type=float, default=1e7,
                        help="time PyG's ptr path only on graphs of fewer edges")
    parser.add_argument("--no-fused", action="store_true")
    parser.add_argument("--fused-heads", default="4,8",
                        help="head counts of the fused aggregation's table")
    parser.add_argument("--no-designs", action="store_true",
                        help="time only the default layout (no designs 0-2, no exp floors)")
    parser.add_argument("--host-only", action="store_true", help="no GPU part")
    parser.add_argument("--host-graphs", default="arxiv")
    parser.add_argument("--host-heads", default="1,4,8")
    parser.add_argument("--host-threads", type=int, default=0,
                        help="threads of both spart and torch (0: every core)")
    parser.add_argument("--before", help="an earlier libspart to time beside (host part)")
    parser.add_argument("--default-design", type=int, default=2,
                        help="the library's default layout (the 'spart ms' column)")
    args = parser.parse_args()
    wanted = args.graphs.split(",")
    head_list = [int(h) for h in args.heads.split(",")]
    fused_heads = [int(h) for h in args.fused_heads.split(",")]
    from torch_geometric.utils import softmax as pyg_softmax
    try:
        from torch_scatter import scatter_softmax
    except Exception:  # noqa: BLE001
        scatter_softmax = None
    sp = Spart(args.library)
    before, before_error = None, ""
    if args.before:
        try:
            before = Spart(args.before)
        except OSError as e:
            before_error = str(e)
    lines = header(args)
    gpu_rows, fused_rows, host_rows = [], [], []

    def write():
        out = list(lines)
        out += ["## GPU forward", "",
                "| graph | H | copy floor ms | exp-once floor ms | the same, table exp ms | "
                "spart ms | % of copy | design 1, rows of up to a chunk alone ms | "
                "design 0 ms | design 1 ms | design 2 ms | design 2, rows of up to a chunk "
                "alone ms | "
                "PyG ptr ms | PyG index ms "
                "| torch_scatter ms | spart vs best peer | index path: runs differing | "
                "max abs diff vs PyG |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + gpu_rows
        out += ["", "exp-once floor: one pass reading each score, computing spart_exp once "
                "(double) and writing it, timed in the same run: the floor of a softmax that "
                "computes every term once, before any row work; 'table exp': the same with the "
                "shorter exp of src/softmax/softmax_exp.h (a candidate: a table of 2^(j/64) and "
                "e^r to r^3, about half the operations).", ""]
        out += ["## GPU fused aggregation (F features a head)", "",
                "| graph | H | F | spart fused ms | spart softmax + torch gather/index_add_ ms | "
                "speed-up | spart softmax + transpose + spart SpMM ms | of which SpMM ms | "
                "speed-up vs spart SpMM | max abs diff fused vs SpMM |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + fused_rows + [""]
        out += ["spart SpMM: the softmax's out (E, H) transposed to (H, E) by torch, then for "
                "each head spart's own CSR matrix (spart/csr_matrix.h, wrapping the row "
                "pointers, the columns and that head's values where they lie, made once "
                "outside the timing) times the F feature vectors of that head, laid (H, F, N) "
                "beforehand outside the timing (a layout that favours the baseline); y comes "
                "out (H, F, R), not permuted back. float32 values and vectors, summed in "
                "float64.", ""]
        out += ["## Host forward (same cores)", "",
                "| graph | H | threads | spart ms | spart before ms | PyG CPU ptr ms | "
                "spart vs PyG | spart vs before | same bits as before | max abs diff vs PyG |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"] + host_rows + [""]
        if args.before:
            out += ["spart before: `%s` (%s), the same calls on the same arrays." % (
                args.before, "loaded" if before is not None else "NOT loadable: " + before_error),
                ""]
        text = "\n".join(out)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(text + "\n")
        print(text, flush=True)

    def host_part():
        """The host forward against PyG's CPU softmax (ptr path) on the same
        cores, and against an earlier build of the library (--before) in the
        same run; the graphs of --host-graphs, the heads of --host-heads."""
        threads = args.host_threads or os.cpu_count()
        torch.set_num_threads(threads)
        sp.set_threads(threads)
        if before is not None:
            before.set_threads(threads)
        for name, rows, edges in [g for g in GRAPHS
                                  if g[0].split("-")[-2].lower() in args.host_graphs.split(",")]:
            ptr = power_law_ptr(rows, edges, 7, "cpu")
            for heads in [int(h) for h in args.host_heads.split(",")]:
                repeat = args.repeat if edges * heads < 1e8 else 3
                scores = torch.randn(edges, heads, dtype=torch.float32)
                out = torch.empty_like(scores)
                s = sp.segments(ptr, edges, heads, 0)
                ws = sp.workspace(s, 0, "cpu")
                t_spart = cpu_time(lambda: sp.forward(s, scores, out, ws), repeat)
                t_before, same = float("nan"), "no --before"
                if before is not None:
                    out_before = torch.empty_like(scores)
                    t_before = cpu_time(lambda: before.forward(s, scores, out_before, ws), repeat)
                    same = "yes" if torch.equal(out.view(torch.int32),
                                                out_before.view(torch.int32)) else "NO"
                    del out_before
                t_pyg = cpu_time(lambda: pyg_softmax(scores, ptr=ptr, num_nodes=rows), repeat)
                diff = float((pyg_softmax(scores, ptr=ptr, num_nodes=rows) - out).abs().max())
                host_rows.append("| %s | %d | %d | %.2f | %s | %.2f | %.2fx | %s | %s | %.1e |" % (
                    name, heads, threads, t_spart,
                    "%.2f" % t_before if t_before == t_before else "-", t_pyg, t_pyg / t_spart,
                    "%.2fx" % (t_before / t_spart) if t_before == t_before else "-", same, diff))
                write()
                del scores, out, ws
            del ptr

    def spmm_baseline(rows, edges, heads, width, ptr, col, s, scores, out, ws, feats, y, t_fused):
        """The cells of the 'softmax + spart SpMM' columns (see write())."""
        dev = scores.device
        out_t = torch.empty(heads, edges, device=dev, dtype=torch.float32)
        feats_t = feats.permute(1, 2, 0).contiguous()  # (H, F, N)
        y_t = torch.empty(heads, width, rows, device=dev, dtype=torch.float32)
        matrices = [sp.csr_matrix(ptr, col, out_t[h], rows) for h in range(heads)]
        try:
            size = max(sp.csr_workspace(m, width) for m in matrices)
            wsm = torch.empty(max(size // 8, 1), dtype=torch.float64, device=dev)

            def products():
                for h in range(heads):
                    sp.csr_multiply(matrices[h], width, feats_t[h], y_t[h], wsm)

            def softmax_then_spmm():
                sp.forward(s, scores, out, ws)
                out_t.copy_(out.t())
                products()
            t_all = cuda_time(softmax_then_spmm, args.repeat)
            t_products = cuda_time(products, args.repeat)
            softmax_then_spmm()
            torch.cuda.synchronize()
            diff = float((y_t.permute(2, 0, 1) - y).abs().max())
        finally:
            for m in matrices:
                sp.csr_free(m)
        return "%.3f | %.3f | %.2fx | %.1e" % (t_all, t_products, t_all / t_fused, diff)

    if args.host_only:
        host_part()
        write()
        return
    dev = torch.device("cuda")
    sp.set_device(0)
    graphs = GRAPHS[:1] if args.quick else [g for g in GRAPHS
                                             if g[0].split("-")[-2].lower() in wanted]
    started = time.perf_counter()
    for number, (name, rows, edges) in enumerate(graphs):
        if number == 1 and not args.no_host:
            host_part()
        if time.perf_counter() - started > args.budget:
            lines.append("- stopped before %s: the time budget (--budget %.0f s) was spent"
                         % (name, args.budget))
            break
        ptr = power_law_ptr(rows, edges, 7, dev)
        counts = ptr[1:] - ptr[:-1]
        index = torch.repeat_interleave(torch.arange(rows, device=dev), counts)
        col = torch.randint(0, rows, (edges,), device=dev)
        for heads in head_list:
            if time.perf_counter() - started > args.budget:
                break
            scores = torch.randn(edges, heads, device=dev, dtype=torch.float32)
            out = torch.empty_like(scores)
            s = sp.segments(ptr, edges, heads, 1)
            ws = sp.workspace(s, 0, dev)
            t_spart = cuda_time(lambda: sp.forward(s, scores, out, ws), args.repeat)
            t_copy = cuda_time(lambda: out.copy_(scores), args.repeat)
            moved = 2 * edges * heads * 4
            rate = moved / (t_copy * 1e-3)
            floor = (moved + 8 * (rows + 1)) / rate * 1e3
            t_exp, t_exp8 = float("nan"), float("nan")
            if not args.no_designs and sp.exp_pass(scores, out):
                t_exp = cuda_time(lambda: sp.exp_pass(scores, out), args.repeat)
                t_exp8 = cuda_time(lambda: sp.exp_pass(scores, out, 1), args.repeat)
            t_design = {}
            t_rows, t_rows2 = float("nan"), float("nan")
            if not args.no_designs and sp.set_design(args.default_design):
                check = torch.empty_like(scores)
                for design in (0, 1, 2):
                    sp.set_design(design)
                    t_design[design] = cuda_time(lambda: sp.forward(s, scores, check, ws),
                                                 args.repeat)
                    sp.set_design(args.default_design)
                    sp.forward(s, scores, out, ws)
                    if not torch.equal(check.view(torch.int32), out.view(torch.int32)):
                        raise RuntimeError("%s H %d: designs %d and %d gave different bits"
                                           % (name, heads, design, args.default_design))
                sp.set_design(3)  # design 1's rows of up to a chunk alone (long rows undone)
                t_rows = cuda_time(lambda: sp.forward(s, scores, check, ws), args.repeat)
                sp.set_design(4)  # the same for design 2
                t_rows2 = cuda_time(lambda: sp.forward(s, scores, check, ws), args.repeat)
                sp.set_design(args.default_design)
                del check
            t_ptr = float("nan")
            if edges < args.ptr_below:
                t_ptr = cuda_time(lambda: pyg_softmax(scores, ptr=ptr, num_nodes=rows),
                                  args.repeat)
            t_index = cuda_time(lambda: pyg_softmax(scores, index, num_nodes=rows), args.repeat)
            first = pyg_softmax(scores, index, num_nodes=rows)
            sp.forward(s, scores, out, ws)
            torch.cuda.synchronize()
            diff = float((first - out).abs().max())
            differing = sum(int(not torch.equal(first, pyg_softmax(scores, index, num_nodes=rows)))
                            for _ in range(3))
            del first
            t_scatter = float("nan")
            if scatter_softmax is not None:
                t_scatter = cuda_time(lambda: scatter_softmax(scores, index, dim=0), args.repeat)
            best = min(t for t in (t_ptr, t_index, t_scatter) if t == t)
            def ms(t, missing):
                return "%.3f" % t if t == t else missing
            gpu_rows.append("| %s | %d | %.3f | %s | %s | %.3f | %.0f %% | %s | %s | %s | %s | "
                            "%s | %s | %.3f | %s | %.2fx | %d of 3 | %.1e |" % (
                                name, heads, floor, ms(t_exp, "no hook"),
                                ms(t_exp8, "no hook"), t_spart,
                                100 * floor / t_spart, ms(t_rows, "no hook"),
                                ms(t_design.get(0, float("nan")), "no hook"),
                                ms(t_design.get(1, float("nan")), "no hook"),
                                ms(t_design.get(2, float("nan")), "no hook"),
                                ms(t_rows2, "no hook"),
                                ms(t_ptr, "not timed"), t_index,
                                ms(t_scatter, "absent"), best / t_spart, differing, diff))
            write()
            if heads in fused_heads and not (name == "Reddit-sized" and heads == 8) \
                    and not args.no_fused:
                width = 64 // heads
                feats = torch.randn(rows, heads, width, device=dev, dtype=torch.float32)
                y = torch.empty(rows, heads, width, device=dev, dtype=torch.float32)
                g = Gather(rows, width, col.data_ptr(), None)
                wsa = sp.workspace(s, width, dev)
                t_fused = cuda_time(lambda: sp.aggregate(s, g, scores, feats, y, wsa), args.repeat)
                sp.aggregate(s, g, scores, feats, y, wsa)

                def unfused():
                    sp.forward(s, scores, out, ws)
                    msg = out.unsqueeze(-1) * feats[col]
                    return torch.zeros(rows, heads, width, device=dev).index_add_(0, index, msg)
                t_unfused = cuda_time(unfused, args.repeat)
                spmm = spmm_baseline(rows, edges, heads, width, ptr, col, s, scores, out, ws,
                                     feats, y, t_fused)
                fused_rows.append("| %s | %d | %d | %.3f | %.3f | %.2fx | %s |" % (
                    name, heads, width, t_fused, t_unfused, t_unfused / t_fused, spmm))
                write()
            del scores, out, ws
            torch.cuda.empty_cache()
        del ptr, counts, index, col
        torch.cuda.empty_cache()
    if len(graphs) == 1 and not args.no_host:
        host_part()
    write()


if __name__ == "__main__":
    main()
