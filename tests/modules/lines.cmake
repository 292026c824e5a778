# tests/modules/lines.cmake: the ideal instrument of several spectral lines
# (issue 26): unit tests (label `unit`) and the two-line parity with ctis
# (label `parity`); included by tests/CMakeLists.txt.
spart_add_unit_test(test_instrument_lines)

# test_lines_parity.py: a two-line instrument against two ctis 0.3.1
# instruments whose images are summed (how the reference is formed is in
# the script's docstring); its small reference is cached in
# parity_lines_reference/ (seconds to rebuild with warm numba caches). Skipped (77) without ctis 0.3.1, unless SPART_REQUIRE_PARITY=1.
add_test(NAME parity_lines
         COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_lines_parity.py
                 --library $<TARGET_FILE:spart>
                 --cache ${CMAKE_CURRENT_BINARY_DIR}/parity_lines_reference)
set_tests_properties(parity_lines PROPERTIES LABELS parity SKIP_RETURN_CODE 77 TIMEOUT 600
                     ENVIRONMENT "OMP_NUM_THREADS=2;NUMBA_NUM_THREADS=2")
