# The Python package (python/; label `python`): python_package builds it
# with pip (scikit-build-core, no build isolation) from this build's
# libspart.so into python_package/ (seconds: only the binding is compiled),
# then runs its pytest suite there, comparing digests with the C API through
# tests/parity/spart_ctypes.py. It needs SPART_PYTHON with cffi,
# scikit-build-core and pytest (tests/parity/requirements.txt) and Python's
# headers (python3-dev): without them it is skipped (exit 77), or fails
# when SPART_REQUIRE_PARITY=1, as the parity tests do.
add_test(NAME python_package
         COMMAND ${SPART_PYTHON} ${PROJECT_SOURCE_DIR}/python/tests/ctest_package.py
                 --library $<TARGET_FILE:spart> --work ${CMAKE_CURRENT_BINARY_DIR}/python_package)
set_tests_properties(python_package PROPERTIES LABELS python SKIP_RETURN_CODE 77 TIMEOUT 600)

# python_cdef (label unit, seconds, no build): cffi reads the declarations
# python/binding/build_cffi.py generates from include/ (a header construct
# its parser cannot take fails here, before any package build). It runs
# with SPART_PYTHON where that exists, else python3; skipped (77) where
# that Python lacks cffi.
add_test(NAME python_cdef
         COMMAND sh -c "python=\"$0\"; [ -x \"$python\" ] || python=python3; exec \"$python\" \"$1\" --check"
                 ${SPART_PYTHON} ${PROJECT_SOURCE_DIR}/python/binding/build_cffi.py)
set_tests_properties(python_cdef PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 60)
