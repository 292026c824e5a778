#!/usr/bin/env python3
"""Check that the Fortran module keeps up with the C headers.

Lists the public functions of include/spart/*.h (the declarations marked
SPART_API) and the bind(C, name="...") interfaces of src/fortran/spart.f90,
and fails, naming each one, when
  - a public C function has no interface and is not in EXCLUDED below,
  - an interface has a different number of arguments than the C function,
  - an interface names a function that no header declares (a stale one),
  - EXCLUDED names a function that no header declares, or one that has an
    interface after all (keep the list true).

Usage: check_interfaces.py [SOURCE_ROOT]   (default: two folders up)
Python 3 standard library only.
"""
import pathlib
import re
import sys

# Public C functions that are not meant for Fortran, each with the reason.
EXCLUDED = {
    # Allocator hooks are C function pointers that must return C heap
    # memory; Fortran codes use the context of spart_context_create, whose
    # memory they never see.
    "spart_context_create_with_allocator": "allocator hooks are C functions",
    # Memory through the context's hooks is for C callbacks that allocate;
    # Fortran callbacks use allocatable arrays.
    "spart_context_malloc": "C callbacks' memory; Fortran has allocatable arrays",
    "spart_context_realloc": "C callbacks' memory; Fortran has allocatable arrays",
    "spart_context_free_memory": "C callbacks' memory; Fortran has allocatable arrays",
    # The size of a spart_shape: Fortran's size() and product() of a
    # shape in Fortran order give it.
    "spart_shape_size": "Fortran has size() and product()",
    # regridding's one-call functions (weights applied element by element,
    # or built and applied once). From Fortran, a Regridder does the same
    # products (equal to rounding, in its own documented summation order),
    # and is what the Fortran interface is for (issue 7).
    "spart_regrid_from_weights_shape": "regridding's one-call helper; use a Regridder",
    "spart_regrid_from_weights": "regridding's one-call helper; use a Regridder",
    "spart_regrid_shape": "regridding's one-call helper; use a Regridder",
    "spart_regrid": "regridding's one-call helper; use a Regridder",
    # CUDA graphs record device work enqueued by a C callback on the
    # context's stream; the MART driver records its own iterations, and
    # Fortran callbacks (host code) are never capturable.
    "spart_device_graph_record": "records C callbacks' device work; the MART driver uses it",
    "spart_device_graph_launch": "replays a graph recorded from C",
    "spart_device_graph_free": "frees a graph recorded from C",
    # The instrument lends its geometric weights; the Fortran spart_weights
    # type always owns its handle, so a borrowed one would be freed twice.
    # `spart build` saves them; from Fortran, save them with C or the CLI.
    "spart_instrument_weights": "borrowed weights; Fortran's spart_weights owns its handle",
    # A C function pointer called from library threads, for progress bars
    # on a terminal (the spart command's); not bound for Fortran yet.
    "spart_context_set_progress": "a C callback from library threads; not bound yet",
}

# C functions the module calls that are not spart's.
FOREIGN = {"strlen"}


def strip_c(text):
    """The C text without comments and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def split_arguments(text):
    """The arguments of a parameter list, split at top-level commas."""
    depth, current, arguments = 0, "", []
    for character in text:
        if character in "([":
            depth += 1
        elif character in ")]":
            depth -= 1
        if character == "," and depth == 0:
            arguments.append(current.strip())
            current = ""
        else:
            current += character
    if current.strip():
        arguments.append(current.strip())
    return arguments


def c_functions(include_dir):
    """{name: (number of fixed arguments, variadic, header)} of SPART_API."""
    functions = {}
    for header in sorted(include_dir.glob("*.h")):
        text = strip_c(header.read_text())
        for match in re.finditer(r"\bSPART_API\b", text):
            rest = text[match.end():]
            name = re.match(r"[^;(]*?\b(spart_\w+)\s*\(", rest, flags=re.S)
            if name is None:
                continue
            start = name.end()
            depth, end = 1, start
            while depth > 0 and end < len(rest):
                depth += {"(": 1, ")": -1}.get(rest[end], 0)
                end += 1
            arguments = split_arguments(rest[start:end - 1])
            variadic = arguments[-1:] == ["..."]
            fixed = [a for a in arguments if a not in ("void", "...")]
            functions[name.group(1)] = (len(fixed), variadic, header.name)
    return functions


def fortran_interfaces(source):
    """{C name: (number of arguments, Fortran name)} of bind(C, name=...)."""
    text = source.read_text()
    text = re.sub(r"!.*", "", text)                  # comments
    text = re.sub(r"&\s*\n\s*&?", " ", text)         # continuation lines
    interfaces = {}
    pattern = (r"\b(?:function|subroutine)\s+(\w+)\s*\(([^)]*)\)[^\n]*?"
               r"\bbind\s*\(\s*C\s*,\s*name\s*=\s*[\"'](\w+)[\"']\s*\)")
    for match in re.finditer(pattern, text, flags=re.I):
        arguments = [a for a in match.group(2).split(",") if a.strip()]
        interfaces[match.group(3)] = (len(arguments), match.group(1))
    return interfaces


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
    functions = c_functions(root / "include" / "spart")
    interfaces = fortran_interfaces(root / "src" / "fortran" / "spart.f90")
    problems = []
    for name, (count, variadic, header) in sorted(functions.items()):
        if name in EXCLUDED:
            if name in interfaces:
                problems.append(f"{name} ({header}) has an interface but is listed in EXCLUDED")
            continue
        if name not in interfaces:
            problems.append(f"{name} ({header}) has no bind(C) interface in spart.f90 "
                            "(add one, or add it to EXCLUDED with the reason)")
            continue
        fortran_count, fortran_name = interfaces[name]
        if fortran_count != count:
            what = "fixed arguments" if variadic else "arguments"
            problems.append(f"{name} ({header}) takes {count} {what}, but its interface "
                            f"{fortran_name} takes {fortran_count}")
    for name in sorted(interfaces):
        if name not in functions and name not in FOREIGN:
            problems.append(f"spart.f90 binds {name}, which no header of include/spart declares")
    for name in sorted(EXCLUDED):
        if name not in functions:
            problems.append(f"EXCLUDED lists {name}, which no header of include/spart declares")
    covered = sum(1 for name in functions if name in interfaces)
    print(f"check_interfaces: {len(functions)} public C functions, {covered} with a Fortran "
          f"interface, {len(EXCLUDED)} excluded on purpose")
    for problem in problems:
        print(f"check_interfaces: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
