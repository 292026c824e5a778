"""
What the Python benchmarks (and the reference scripts of the C ones) share
for their --markdown report: the machine, the versions of the packages
timed, the command line, and a Markdown table. scripts/performance_page.py
assembles docs/performance.md from these reports.
"""

import os
import platform
import shlex
import sys


def cpu_model():
    """The processor's model name (the first of /proc/cpuinfo), else
    platform.processor()."""
    try:
        with open("/proc/cpuinfo") as stream:
            for line in stream:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def versions(names):
    """'python 3.x.y, numpy 2.a.b, ...' for the installed distributions
    among `names` (those missing are left out)."""
    from importlib.metadata import PackageNotFoundError, version

    found = [f"python {platform.python_version()}"]
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return ", ".join(found)


def versions_line(names):
    """The line a reference script prints for its C benchmark to copy into
    its report's header."""
    return "VERSIONS " + versions(names)


def command_line():
    """This process's command line: the script's base name, then its
    arguments, quoted for a shell."""
    return shlex.join(["python3", os.path.basename(sys.argv[0])] + sys.argv[1:])


def header(threads, timing, packages, extra=()):
    """The header block of a report: a list of '- key: value' lines."""
    cores = os.cpu_count() or 1
    lines = [f"- machine: {cpu_model()}, {cores} logical processors; spart on {threads}",
             f"- versions: {versions(packages)}",
             f"- command: `{command_line()}`",
             f"- timing: {timing}"]
    return lines + list(extra)


def table(columns, rows):
    """A Markdown table: `columns` the headings, `rows` lists of cells
    (formatted already)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def write(path, lines):
    with open(path, "w") as stream:
        stream.write("\n".join(lines) + "\n")
