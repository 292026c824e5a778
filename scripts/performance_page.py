#!/usr/bin/env python3
"""
Builds docs/performance.md from the benchmarks' own Markdown reports.

Every table on the page is written by a benchmark program (tests/bench/,
option --markdown FILE), under a header block that names the machine, the
versions and the exact command; this script only runs them and puts their
reports under the page's headings. It never types a figure.

    scripts/performance_page.py --build BUILD [--python PYTHON] [--host | --gpu]
                                [--page docs/performance.md] [--note TEXT] [--revision COMMIT]
                                [--psf-scale S] [--only SECTION ...]

--build is a build folder configured with -DSPART_BUILD_BENCHMARKS=ON (and
-DSPART_ENABLE_CUDA=ON for the GPU sections); --python a Python with the
reference packages of tests/parity/requirements.txt. --host runs only the
host sections, --gpu only the GPU sections; the sections not run keep what
the page already says (or, on a new page, say that they are not yet
measured and how to measure them), so a GPU run can fill in the GPU
sections later. --note adds a line to each section this run writes (say,
that the machine is shared). --psf-scale divides the PSF benchmark's scene
and sensor sides (1, the tutorial's shape, needs about 8 GB of memory).
--revision names the commit measured where git cannot tell (the device
tool's copy of a checkout names the session's first commit).
A benchmark that fails or is skipped leaves its section saying so.

    scripts/performance_page.py --build BUILD --report SECTION=FILE ... [--measured DATE]
                                [--revision COMMIT] [--note TEXT]

takes sections from reports the benchmarks already wrote with --markdown
(on a lent GPU machine whose files came back, say) and runs nothing; a
report's own header still names its command.
"""

import argparse
import datetime
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "tests", "bench")

# The questions, in the page's order: (heading, intro, [(section, kind, title)]).
QUESTIONS = [
    ("How fast are the weights against regridding?",
     "Conservative 2-D weights built by `spart_weights_build` and by the Python package "
     "[`regridding`](https://github.com/sun-data/regridding) "
     "(`regridding.weights(..., method=\"conservative\")`) on the same grids, in the same run, "
     "on the same threads (numba's `NUMBA_NUM_THREADS` set to spart's thread count). "
     "The weights are the same entries (counted by both). CPU seconds are all threads together.",
     [("weights-host", "host", "Host")]),
    ("How fast is a product against scipy and cuSPARSE?",
     "The product `y = W x` of a regridder on CTIS-shaped operators (bench_ctis_operators.h): "
     "on the host against `scipy.sparse` (`csr_matrix @ x` on spart's own CSR arrays) and "
     "`regridding.regrid_from_weights`; on the GPU against cuSPARSE SpMV and SpMM on the same "
     "arrays. Each product is also set against its floor, the bytes it must move at the copy "
     "rate measured in the same run (above 100 %: part of the operator stayed in the caches "
     "between repeats).",
     [("products-host", "host", "Host"), ("products-gpu", "gpu", "GPU")]),
    ("How fast is MART against ctis?",
     "MART on the ideal instrument of ctis's simple-mart tutorial: spart "
     "(`spart_mart_solve`) against ctis 0.3.1's `MartInverter` on the same observed images. "
     "ctis runs on the CPU only; on a GPU machine the same comparison is run on its CPU and "
     "spart's device iteration is set against its host iteration and its floor.",
     [("mart-host", "host", "Host"), ("mart-gpu", "gpu", "GPU")]),
    ("How fast is a PSF folded into the weights?",
     "The ctis PSF tutorial's convolution of the weights with one kernel per channel: "
     "`spart_weights_convolve` against `regridding.convolve_weights` on the host; on the GPU, "
     "`spart_regridder_create_device_convolved` against spart's own host path (no GPU peer "
     "exists).",
     [("psf-host", "host", "Host"), ("psf-gpu", "gpu", "GPU")]),
    ("How fast is a general sparse matrix against cuSPARSE and scipy?",
     "Any CSR matrix through `spart/csr_matrix.h` (wrapped arrays, no copy): on the GPU against "
     "cuSPARSE SpMV (CSR_ALG1, and ALG2, its deterministic one) and SpMM (ALG1-3, eight vectors) "
     "on the same device arrays, on R-MAT power-law graphs, random columns, bands and a skewed "
     "matrix; on the host against `scipy.sparse` on the same arrays and threads.",
     [("csr-host", "host", "Host"), ("csr-gpu", "gpu", "GPU")]),
    ("How fast is the segmented softmax against PyG?",
     "The multi-head CSR softmax of `spart/softmax.h` on power-law graphs of the sizes of "
     "ogbn-arxiv and ogbn-products, against PyG's `softmax` (its `ptr` and `index` paths) in the "
     "same run, and against the copy-rate floor; the fused aggregation against the softmax "
     "followed by a gather and scatter-add; the host against PyG on the CPU.",
     [("softmax-gpu", "gpu", "GPU and host")]),
    ("How fast are VCS count-matrix products against cuSPARSE and scipy?",
     "Normalized views of value-compressed count matrices (`spart/vcs.h`) in the four product "
     "directions, against cuSPARSE SpMM on the expanded, index-sorted CSR of the stored part "
     "plus the same rank-1 term, with the device bytes of each layout; on the host against "
     "scipy's CSR product of the same matrix.",
     [("vcs-host", "host", "Host"), ("vcs-gpu", "gpu", "GPU")]),
    ("How fast is fused candidate scoring against its unfused form and cuBLAS?",
     "A query against its K candidates to a probability distribution in one launch "
     "(`spart/scoring.h`), against the same arithmetic as separate launches at the same block "
     "size, and against cuBLAS batched GEMV with norms and a softmax; launched and "
     "graph-replayed times, against the copy-rate floor and an empty graph's launch.",
     [("scoring-gpu", "gpu", "GPU")]),
    ("How fast is the tiled block permute against a copy and torch?",
     "Strided N-d blocks permuted and recombined by a plan of `spart/permute.h`: large "
     "transposes, a 3-D and a rank-4 permute, thousands of small blocks with and without "
     "recoupling, against a device copy of the same bytes (the floor) and "
     "`torch.permute(...).contiguous()` on the same shapes; the host against its copy rate.",
     [("permute-host", "host", "Host"), ("permute-gpu", "gpu", "GPU")]),
    ("How fast is MART on many frames at once?",
     "`spart_mart_solve_frames` (each iteration one pass of the operators over a batch of "
     "frames, every frame its own merits and stopping rule, the same bits as solving it alone) "
     "against the loop of one-frame solves on the same frames, in frames per second, with the "
     "fraction of the copy rate of each product.",
     [("frames-gpu", "gpu", "GPU")]),
    ("How fast is the streamed assembly?",
     "`spart_regridder_create_streamed`: operators assembled from weights that arrive in blocks "
     "within a memory budget (two passes: count rows, then place), against the in-memory "
     "assembly where it fits, with the peak memory against the budget and the rate against "
     "the copy rate.",
     [("stream-gpu", "gpu", "GPU")]),
    ("How fast is an ESIS-scale instrument?",
     "The ideal instrument at ESIS-like sizes (`bench_instrument_esis`; docs/dev/esis-notes.md "
     "says which sizes are assumed): the time per stage (weights, assembly, MART), peak "
     "memory, in memory and streamed within a budget.",
     [("esis-gpu", "gpu", "GPU")]),
    ("How fast are weights built on the GPU against regridding's?",
     "`spart_weights_build_device` (multilinear, conservative 1-D and 2-D, straight into device "
     "memory, the same entries as the host build) against `regridding.weights(..., "
     "device=\"cuda\")` (numba-cuda; lattice outputs only) on the same grids, and against "
     "spart's host build on all cores; the 2-D clipping kernels on their own.",
     [("weights-gpu", "gpu", "GPU")]),
    ("How do frames and operators split over MPI ranks?",
     "`spart/distributed.h`: frames over ranks and one operator's rows over ranks (balanced "
     "by entries), the same bits as one process; times per rank count on one host (the "
     "GPU machine lends one GPU, which the ranks then share).",
     [("mpi-host", "host", "Host"), ("mpi-gpu", "gpu", "GPU ranks")]),
    ("How much does a call from Python cost?",
     "The package's Regridder product from Python (`r(x, out=y)`, `r(x)`, a bound product "
     "`r.bind(x, y)()`) against the same product timed inside C and a bare cffi call, thread "
     "CPU time with one OpenMP thread.",
     [("python-host", "host", "Host")]),
]

HOST_SECTIONS = [s for _, _, sections in QUESTIONS for s, kind, _ in sections if kind == "host"]
GPU_SECTIONS = [s for _, _, sections in QUESTIONS for s, kind, _ in sections if kind == "gpu"]


def runs(section, build, python, psf_scale):
    """The benchmark runs of a section: (environment, argv, report path
    placeholder '{out}')."""
    tests = os.path.join(build, "tests")
    library = os.path.join(build, "libspart.so")
    cache = os.path.join(tests, "parity_mart_cases")
    threads = str(os.cpu_count() or 1)
    same_threads = {"OMP_NUM_THREADS": threads, "NUMBA_NUM_THREADS": threads}
    mart_host = ({}, [python, os.path.join(BENCH, "bench_mart.py"), "--library", library,
                      "--cache", cache, "--repeat", "3", "--markdown", "{out}"])
    return {
        "weights-host": [(same_threads, [os.path.join(tests, "bench_weights"), "--python", python,
                                         "--repeat", "3", "--markdown", "{out}"])],
        "products-host": [(same_threads, [os.path.join(tests, "bench_regridder"), "--python",
                                          python, "--repeat", "5", "--products-only",
                                          "--markdown", "{out}"])],
        "mart-host": [mart_host],
        "psf-host": [(dict(same_threads, OPENBLAS_NUM_THREADS="1"),
                      [python, os.path.join(BENCH, "bench_convolve.py"), "--library", library,
                       "--repeat", "2", "--scale", str(psf_scale), "--markdown", "{out}"])],
        "products-gpu": [({}, [os.path.join(tests, "bench_cuda_product"), "--ctis",
                               "--markdown", "{out}"]),
                         ({}, [os.path.join(tests, "bench_cuda_product"), "--markdown", "{out}"])],
        "mart-gpu": [mart_host,
                     ({}, [os.path.join(tests, "bench_mart_device"), "--markdown", "{out}"])],
        "psf-gpu": [({}, [os.path.join(tests, "bench_cuda_convolve"), "--markdown", "{out}"])],
        "csr-host": [(same_threads, [python, os.path.join(BENCH, "bench_csr_matrix_host.py"),
                                     library, "--repeat", "3", "--markdown", "{out}"])],
        "csr-gpu": [({}, [os.path.join(tests, "bench_cuda_csr_matrix"), "--repeat", "10",
                          "--markdown", "{out}"])],
        "softmax-gpu": [({}, [python, os.path.join(BENCH, "bench_softmax.py"), library,
                              "--markdown", "{out}"])],
        "vcs-host": [(same_threads, [os.path.join(tests, "bench_vcs"), "--shape", "0",
                                     "--repeat", "5", "--python", python, "--markdown", "{out}"])],
        "vcs-gpu": [({}, [os.path.join(tests, "bench_cuda_vcs"), "--shape", "0", "--repeat", "20",
                          "--markdown", "{out}"]),
                    ({}, [os.path.join(tests, "bench_cuda_vcs"), "--shape", "1", "--repeat", "10",
                          "--markdown", "{out}"])],
        "scoring-gpu": [({}, [os.path.join(tests, "bench_scoring"), "--markdown", "{out}"])],
        "permute-host": [(same_threads, [os.path.join(tests, "bench_permute"), "--host-only",
                                         "--repeat", "3", "--markdown", "{out}"])],
        "permute-gpu": [({}, [os.path.join(tests, "bench_permute"), "--device-only", "--repeat",
                              "5", "--blocks", "permute-blocks.txt", "--markdown", "{out}"]),
                        ({}, [python, os.path.join(BENCH, "bench_permute_torch.py"),
                              "permute-blocks.txt", "--repeat", "5", "--markdown", "{out}"])],
        "frames-gpu": [({}, [os.path.join(tests, "bench_mart_frames"), "--repeat", "2",
                             "--markdown", "{out}"])],
        "stream-gpu": [({}, [os.path.join(tests, "bench_cuda_stream"), "--entries", "1e9",
                             "--block", "3.2e7", "--markdown", "{out}"])],
        "esis-gpu": [({}, [os.path.join(tests, "bench_instrument_esis"), "--cells", "570",
                           "--lines", "1", "--bins", "24", "--markdown", "{out}"])],
        "weights-gpu": [({}, [python, os.path.join(BENCH, "bench_cuda_weights.py"), library,
                              "--repeat", "2", "--markdown", "{out}"]),
                        ({}, [os.path.join(tests, "bench_cuda_weights_clip"), "--repeat", "5",
                              "--python", python, "--markdown", "{out}"])],
        "mpi-host": [({}, ["mpirun", "-np", "4", os.path.join(tests, "bench_mpi_split"),
                           "--scene", "64", "--frames", "8", "--repeat", "3",
                           "--markdown", "{out}"])],
        "mpi-gpu": [({}, ["mpirun", "-np", "2", os.path.join(tests, "bench_mpi_split"),
                          "--device", "--scene", "256", "--frames", "8", "--repeat", "5",
                          "--markdown", "{out}"])],
        "python-host": [({}, [python, os.path.join(ROOT, "python", "benchmarks",
                                                   "bench_python.py"), "--skip-ctis",
                              "--repeat", "2", "--markdown", "{out}"])],
    }[section]


def gpu_line():
    """'- GPU: ...' from nvidia-smi, or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    first = out.stdout.strip().splitlines()[:1]
    if out.returncode != 0 or not first:
        return None
    name, driver, memory = (part.strip() for part in first[0].split(",")[:3])
    return f"- GPU: {name}, driver {driver}, {memory} (nvidia-smi)"


def revision_of_tree(args):
    """The commit the measured tree is: --revision when given (a copy of a
    checkout whose git does not know its commit, as on a lent GPU machine),
    else git's HEAD, marked when the code differs from it."""
    if args.revision:
        return args.revision
    revision = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "host",
                            "kernels", "solvers", "include", "tests/bench"],
                           capture_output=True, text=True).stdout.strip()
    return revision + (" with local changes" if dirty else "")


def run_section(section, kind, args):
    """The Markdown of one section, from its benchmarks' reports."""
    stamp = f"- revision: {revision_of_tree(args)}, measured " \
            f"{datetime.date.today().isoformat()}"
    blocks = []
    for number, (environment, argv) in enumerate(runs(section, args.build, args.python,
                                                      args.psf_scale)):
        # the report in the build folder (the benchmarks run there), by a
        # short name, so that the command shown on the page reads plainly
        name = f"performance-{section}-{number}.md"
        out = os.path.join(args.build, name)
        if os.path.exists(out):
            os.remove(out)
        argv = [name if a == "{out}" else a for a in argv]
        shown = " ".join(f"{k}={v}" for k, v in environment.items())
        print(f"performance_page: {section}: {shown} {shlex.join(argv)}", flush=True)
        status = subprocess.run(argv, env=dict(os.environ, **environment), cwd=args.build)
        report = open(out).read().rstrip("\n") if os.path.exists(out) else ""
        if status.returncode != 0 or not report:
            why = "skipped (exit 77: a peer package or the device is missing)" \
                if status.returncode == 77 else f"failed (exit {status.returncode})"
            blocks.append(f"Not measured: `{os.path.basename(argv[0])}` {why} in the run "
                          f"of {stamp[2:]}.")
            continue
        extra = []
        if environment:
            extra.append("- environment: " + " ".join(f"`{k}={v}`" for k, v in
                                                       environment.items()))
        blocks.append(stamped(report, kind, stamp, args.note, extra))
    return "\n\n".join(blocks)


def tidied(report):
    """A report made to sit under the page's '###' headings: its own '#' and
    '##' headings become '####', and a table with no rows (a part the run
    did not measure) is dropped with the heading just above it."""
    lines = []
    for line in report.splitlines():
        if line.startswith("# ") or line.startswith("## "):
            line = "#### " + line.lstrip("#").lstrip()
        lines.append(line)
    kept = []
    k = 0
    while k < len(lines):
        is_table = lines[k].startswith("|") and k + 1 < len(lines) \
            and lines[k + 1].startswith("|---")
        if is_table:
            end = k + 2
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            if end == k + 2:
                while kept and not kept[-1].strip():
                    kept.pop()
                if kept and kept[-1].startswith("#"):
                    kept.pop()
                k = end
                continue
        kept.append(lines[k])
        k += 1
    return "\n".join(kept)


def stamped(report, kind, stamp, note, extra=()):
    """A benchmark's report, tidied, with the revision, the GPU and a note
    added after its header block (its lines starting with '- ')."""
    lines = tidied(report).splitlines()
    header = [k for k, line in enumerate(lines) if line.startswith("- ")]
    at = header[-1] + 1 if header else 0
    added = [stamp]
    if kind == "gpu" and not any(line.startswith("- GPU:") for line in lines):
        line = gpu_line()
        if line:
            added.append(line)
    if note:
        added.append(f"- note: {note}")
    return "\n".join(lines[:at] + added + list(extra) + lines[at:])


def from_reports(pairs, kinds, args):
    """Sections from reports a benchmark already wrote (SECTION=FILE, several
    files of one section joined in order), for runs made elsewhere, such as
    a lent GPU machine whose reports came back as files."""
    sections = {}
    for pair in pairs:
        section, _, path = pair.partition("=")
        if section not in kinds or not path:
            raise SystemExit(f"performance_page: --report {pair}: SECTION=FILE with SECTION "
                             f"one of {', '.join(kinds)}")
        measured = args.measured or datetime.date.fromtimestamp(
            os.path.getmtime(path)).isoformat()
        stamp = f"- revision: {revision_of_tree(args)}, measured {measured}"
        block = stamped(open(path).read().rstrip("\n"), kinds[section], stamp, args.note)
        sections[section] = sections[section] + "\n\n" + block if section in sections \
            else block
    return sections


def placeholder(section, kind):
    flag = "--gpu" if kind == "gpu" else "--host"
    machine = "a GPU machine" if kind == "gpu" else "the host"
    return (f"Not yet measured on this revision; run `scripts/performance_page.py --build BUILD "
            f"--python PYTHON {flag} --only {section}` on {machine}.")


def read_sections(path):
    """The sections of an existing page, by name."""
    if not os.path.exists(path):
        return {}
    text = open(path).read()
    found = {}
    for match in re.finditer(r"<!-- section ([\w-]+) -->\n(.*?)\n<!-- end \1 -->", text, re.S):
        found[match.group(1)] = match.group(2).strip("\n")
    return found


def page(sections):
    out = ["# Performance", "",
           "How fast spart is against the packages it replaces or sits beside, one table per "
           "question. Every table below is written by a benchmark program of `tests/bench/` "
           "(its `--markdown` report), with the machine, the versions and the exact command "
           "above it; `scripts/performance_page.py` runs them and assembles this page. "
           "Ratios are \"speed-up\" = the peer's time over spart's (above 1: spart is faster). "
           "Figures from a small shared machine say what to expect in proportion, not in "
           "absolute time; run the command on your own machine for yours.", "",
           "Regenerate the host sections, then the GPU ones on a machine with an NVIDIA GPU "
           "(each run keeps the other's sections):", "",
           "```sh",
           "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSPART_BUILD_BENCHMARKS=ON "
           "-DSPART_ENABLE_CUDA=ON && cmake --build build -j",
           "python3 -m venv build/venv && build/venv/bin/pip install -r "
           "tests/parity/requirements.txt",
           "scripts/performance_page.py --build build --python build/venv/bin/python --host",
           "scripts/performance_page.py --build build --python build/venv/bin/python --gpu",
           "```", "",
           "Each section names the revision and the date it was measured on; a run of the "
           "script rewrites only the sections it runs.", "",
           "The benchmarks are never timed assertions in the test suite: `ctest -L bench` runs "
           "them and fails only when a run fails. Why the figures are what they are (the "
           "floors, what was tried) is in [dev/performance-notes.md](dev/performance-notes.md)."]
    for heading, intro, parts in QUESTIONS:
        out += ["", f"## {heading}", "", intro]
        for section, kind, title in parts:
            out += ["", f"### {title}", "", f"<!-- section {section} -->",
                    sections.get(section) or placeholder(section, kind),
                    f"<!-- end {section} -->"]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--revision", default=None,
                        help="the commit the measured tree is, where git cannot tell")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--host", action="store_true", help="only the host sections")
    which.add_argument("--gpu", action="store_true", help="only the GPU sections")
    parser.add_argument("--only", action="append", default=None,
                        choices=HOST_SECTIONS + GPU_SECTIONS, help="only these sections")
    parser.add_argument("--page", default=os.path.join(ROOT, "docs", "performance.md"))
    parser.add_argument("--note", default=None)
    parser.add_argument("--psf-scale", type=int, default=1)
    parser.add_argument("--report", action="append", default=[], metavar="SECTION=FILE",
                        help="take a section from a report its benchmark already wrote "
                             "(repeat for several; nothing is run)")
    parser.add_argument("--measured", default=None,
                        help="with --report: the date the reports were measured on")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    chosen = (HOST_SECTIONS if args.host else GPU_SECTIONS if args.gpu
              else HOST_SECTIONS + GPU_SECTIONS)
    if args.only:
        chosen = [s for s in chosen if s in args.only]
    sections = read_sections(args.page)
    kinds = {s: kind for _, _, parts in QUESTIONS for s, kind, _ in parts}
    if args.report:
        sections.update(from_reports(args.report, kinds, args))
        with open(args.page, "w") as stream:
            stream.write(page(sections))
        print(f"performance_page: wrote {args.page}")
        return 0
    for section in chosen:
        sections[section] = run_section(section, kinds[section], args)
        # written after each section, so that a long run leaves what it has
        with open(args.page, "w") as stream:
            stream.write(page(sections))
    if not chosen:
        with open(args.page, "w") as stream:
            stream.write(page(sections))
    print(f"performance_page: wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
