"""
Write the C source of spart's Python binding, spart._spart, with cffi in
API mode (python/CMakeLists.txt runs this at build time, then compiles the
file it writes against libspart).

    python build_cffi.py OUTPUT.c     write the binding's C source
    python build_cffi.py --check      parse the declarations only (the
                                      CTest test python_cdef, label unit)

The declarations cffi reads are generated from the public headers
themselves, include/spart.h and include/spart/*.h, each time (as
src/fortran/generate_fortran.py generates the Fortran module): every
header's text as the compiler sees it between its guards, with comments,
preprocessor lines, __attribute__((...)) and the SPART_API /
SPART_NODISCARD markers blanked and the extern "C" braces dropped; the
integer #defines as `#define NAME value`; the opaque struct typedefs
(`typedef struct x x;`) first, since a header may name another's handle
before the header that declares it (instrument.h names psf.h's
spart_psf). The headers are read by src/fortran/c_headers.py, the reader
the Fortran module is made with. So every public function, struct and
enum is declared once, in its header: a header changed is the binding
changed, and a construct cffi's parser cannot read stops the build with
the header's name. In API mode the generated C also calls the real
functions through the real headers, so the two cannot disagree.

Written here by hand: the package's own C (SOURCE, declared in
PACKAGE_CDEF): the two callbacks written in Python and the product and
timing helpers.
"""

import os
import pathlib
import re
import sys

try:
    import cffi
except ImportError:  # --check says so and skips; writing the source needs it
    cffi = None

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(ROOT / "src" / "fortran"))
import c_headers  # noqa: E402

PACKAGE_CDEF = r"""
/* MART's progress callback, written in Python (spart/_mart.py). */
extern "Python" int spart_python_mart_progress(void *user, const spart_mart_progress *progress);

/* A streamed assembly's block function, written in Python (spart/_stream.py). */
extern "Python" spart_status spart_python_weights_block(void *user, int64_t block, int pass,
                                                       spart_weights_block *result);

/* The product with x given as its data and a shape made once (below). */
spart_status spart_python_regridder_apply(spart_context *context,
                                          const spart_regridder *regridder, const double *x,
                                          const spart_shape *shape_x, double *y, int64_t size_y);
/* For python/benchmarks/bench_python.py: `repeat` products timed in C. */
spart_status spart_python_time_apply(spart_context *context, const spart_regridder *regridder,
                                     const double *x, const spart_shape *shape_x, double *y,
                                     int64_t size_y, int64_t repeat, double seconds[2]);
/* For python/benchmarks/bench_loop.py: the clocks spart_python_time_apply reads. */
void spart_python_clock(double seconds[2]);
"""


SOURCE = r"""
/* The product as Regridder.__call__ makes it: x's shape is made once per
 * shape of x and kept by the Regridder (read-only, so threads may share
 * it); only the data pointers change from call to call. This saves the
 * Python side from filling a spart_array for every call (about a
 * microsecond of its overhead). */
static spart_status spart_python_regridder_apply(spart_context *context,
                                                 const spart_regridder *regridder,
                                                 const double *x, const spart_shape *shape_x,
                                                 double *y, int64_t size_y)
{
    spart_array array;
    array.data = x;
    array.shape = *shape_x;
    return spart_regridder_apply(context, regridder, &array, y, size_y);
}

/* For python/benchmarks/bench_python.py: the time of `repeat` calls of
 * spart_regridder_apply made from C, no Python between them, the loop a
 * call from Python is measured against: seconds[0] wall clock
 * (CLOCK_MONOTONIC), seconds[1] the calling thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID, all of the work with one OpenMP thread). */
#include <time.h>
static double spart_python_seconds(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}
static void spart_python_clock(double seconds[2])
{
    seconds[0] = spart_python_seconds(CLOCK_MONOTONIC);
    seconds[1] = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID);
}
static spart_status spart_python_time_apply(spart_context *context,
                                            const spart_regridder *regridder, const double *x,
                                            const spart_shape *shape_x, double *y,
                                            int64_t size_y, int64_t repeat, double seconds[2])
{
    spart_array array;
    array.data = x;
    array.shape = *shape_x;
    double wall = spart_python_seconds(CLOCK_MONOTONIC);
    double cpu = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t k = 0; k < repeat; k++) {
        spart_status status = spart_regridder_apply(context, regridder, &array, y, size_y);
        if (status != SPART_OK)
            return status;
    }
    seconds[0] = spart_python_seconds(CLOCK_MONOTONIC) - wall;
    seconds[1] = spart_python_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
    return SPART_OK;
}
"""


def header_cdef(root=ROOT):
    """(the cffi declarations of the public headers under root/include,
    c_headers' Api of them)."""
    api = c_headers.read_api(root)
    lines = [f"#define {name} {value}" for name, value, _ in api.defines]
    lines += [f"typedef struct {name} {name};" for name in api.opaque]
    for path in c_headers.header_paths(root):
        code = c_headers._code(path.read_text())  # blanked as the Fortran generator reads it
        code = re.sub(r'^\s*extern\s+"C"\s*\{\s*$', "", code, flags=re.M)
        code = re.sub(r"^\}\s*$", "", code, flags=re.M)  # extern "C"'s: structs end "} name;"
        code = re.sub(r"\b(SPART_API|SPART_NODISCARD)\b", "", code)
        code = re.sub(r"\btypedef\s+struct\s+\w+\s+\w+\s*;", "", code)
        lines.append(f"/* ---- spart/{path.name} ---- */")
        lines += [line.rstrip() for line in code.split("\n") if line.strip()]
    return "\n".join(lines) + "\n", api


def make_ffi(root=ROOT):
    """(the FFI of spart._spart, the headers' declarations, their Api)."""
    cdef, api = header_cdef(root)
    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef)
    except cffi.CDefError as error:
        raise SystemExit(f"build_cffi.py: cffi cannot read the declarations of "
                         f"{root / 'include'}: {error}")
    ffi.cdef(PACKAGE_CDEF)
    includes = "".join(f'#include "spart/{path.name}"\n' for path in c_headers.header_paths(root))
    ffi.set_source("spart._spart", includes + SOURCE)
    return ffi, cdef, api


def check(root=ROOT):
    """Parse the declarations; 0 when cffi reads them and every SPART_API
    function of the headers is among them, else 1 naming what failed; 77
    (skipped) without cffi, unless SPART_REQUIRE_PARITY=1."""
    if cffi is None:
        required = os.environ.get("SPART_REQUIRE_PARITY") == "1"
        print(f"{'FAIL' if required else 'SKIP'}: {sys.executable} lacks cffi")
        return 1 if required else 77
    _, cdef, api = make_ffi(root)
    missing = [function.name for function in api.functions
               if re.search(rf"\b{function.name}\s*\(", cdef) is None]
    if missing:
        print("build_cffi.py: not declared to cffi: " + ", ".join(missing), file=sys.stderr)
        return 1
    print(f"build_cffi.py: {len(api.functions)} functions, {len(api.structs)} structs, "
          f"{len(api.enums)} enums of {len(api.headers)} headers declared")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--check":
        return check()
    if len(argv) != 2:
        print("usage: python build_cffi.py OUTPUT.c | --check", file=sys.stderr)
        return 2
    make_ffi()[0].emit_c_code(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
