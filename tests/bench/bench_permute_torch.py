#!/usr/bin/env python3
"""torch.permute(...).contiguous() on bench_permute's shapes (the peer of
issue 25), timed with CUDA events in the same job as bench_permute.

Reads the blocks bench_permute wrote with --blocks FILE ("case NAME TYPE N
p..." then "block n m sizes..."). A case of one block is one
x.permute(p).contiguous(); a case of many blocks is what a code without a
batched kernel does: per block, for n = m = 1 one permute-copy, else the
notes' algorithm (stack the m sources, multiply by U, permute each of the
n results), one launch or more per block. Writes a Markdown table.

Usage: bench_permute_torch.py BLOCKS [--markdown FILE] [--repeat R]
"""
import argparse
import statistics
import sys

import torch

DTYPES = {"float32": torch.float32, "float64": torch.float64,
          "complex64": torch.complex64, "complex128": torch.complex128}


def read_cases(path):
    cases = []
    with open(path) as handle:
        for line in handle:
            words = line.split()
            if not words:
                continue
            if words[0] == "case":
                # case NAME... TYPE N p0..pN-1: the name may hold spaces
                n_axes_at = None
                for k in range(len(words) - 1, 0, -1):
                    if words[k] in DTYPES:
                        n_axes_at = k + 1
                        break
                num_axes = int(words[n_axes_at])
                perm = [int(w) for w in words[n_axes_at + 1:n_axes_at + 1 + num_axes]]
                cases.append({"name": " ".join(words[1:n_axes_at - 1]),
                              "dtype": DTYPES[words[n_axes_at - 1]], "perm": perm, "blocks": []})
            elif words[0] == "block":
                n, m = int(words[1]), int(words[2])
                cases[-1]["blocks"].append((n, m, [int(w) for w in words[3:]]))
    return cases


def time_ms(function, repeat):
    function()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def make_runner(case):
    device = torch.device("cuda")
    dtype, perm = case["dtype"], case["perm"]
    work = []
    for n, m, sizes in case["blocks"]:
        if 0 in sizes or n == 0:
            continue
        sources = torch.rand((m, *sizes), device=device, dtype=torch.float64).to(dtype)
        if n == 1 and m == 1:
            work.append((None, sources[0]))
        else:
            u = torch.rand((n, m), device=device, dtype=torch.float64).to(dtype)
            work.append((u, sources))
    length = len(case["blocks"][0][2])

    def run():
        outputs = []
        for u, x in work:
            if u is None:
                outputs.append(x.permute(perm).contiguous())
            else:
                mixed = (u @ x.reshape(x.shape[0], -1)).reshape(u.shape[0], *x.shape[1:])
                outputs.append(mixed.permute([0] + [p + 1 for p in perm]).contiguous())
        return outputs

    return run, length


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("blocks")
    parser.add_argument("--markdown")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device for torch", file=sys.stderr)
        return 77
    rows = []
    for case in read_cases(args.blocks):
        run, _ = make_runner(case)
        ms = time_ms(run, args.repeat)
        launches = len(case["blocks"])
        rows.append(f"| torch {torch.__version__} | {case['name']} | {launches} | {ms:.4f} |")
        print(rows[-1], flush=True)
        torch.cuda.empty_cache()
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(f"- torch {torch.__version__}, CUDA {torch.version.cuda}, "
                      f"{torch.cuda.get_device_name(0)}\n")
            out.write("- command: `bench_permute_torch.py " + " ".join(sys.argv[1:]) + "`\n")
            out.write("- timing: median of --repeat runs after one warm-up, CUDA events; a case "
                      "of many blocks is a loop of per-block permute-copies (and U @ sources "
                      "for recoupled blocks)\n\n")
            out.write("| peer | shape | blocks | ms |\n|---|---|---|---|\n")
            out.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
