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

# The spart command with several lines (where it is built): the config's
# lines, frames and drift, the grids, and the ESIS configs' validity
# (tests/cli/test_cli_lines.c, label unit); the scaled-down ESIS example
# run end to end, 3 frames (example_esis_small, label example, about 4 s of CPU).
if(TARGET spart_cli)
  add_executable(test_cli_lines cli/test_cli_lines.c ${PROJECT_SOURCE_DIR}/src/cli/problem.c
                                ${PROJECT_SOURCE_DIR}/src/cli/progress.c)
  target_link_libraries(test_cli_lines PRIVATE spart_cli_config PkgConfig::CMOCKA)
  target_compile_options(test_cli_lines PRIVATE ${SPART_C_FLAGS})
  target_compile_definitions(test_cli_lines PRIVATE
                             SPART_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples")
  add_test(NAME test_cli_lines COMMAND test_cli_lines)
  set_tests_properties(test_cli_lines PROPERTIES LABELS unit
                       ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")
  add_test(NAME example_esis_small
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/lines_tests.sh $<TARGET_FILE:spart_cli>
                   ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/lines_work example_esis_small)
  set_tests_properties(example_esis_small PROPERTIES LABELS example TIMEOUT 300
                       ENVIRONMENT "OMP_NUM_THREADS=2")
endif()

# bench_instrument_esis (label bench, with -DSPART_BUILD_BENCHMARKS=ON):
# building a slice of the ESIS-scale instrument of examples/esis.yaml, its
# weights and host memory extrapolated to the whole, and the operators'
# copy to a CUDA device and one product each there (docs/dev/esis-notes.md).
if(SPART_BUILD_BENCHMARKS)
  add_executable(bench_instrument_esis bench/bench_instrument_esis.c)
  target_link_libraries(bench_instrument_esis PRIVATE spart OpenMP::OpenMP_C m)
  target_compile_options(bench_instrument_esis PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_instrument_esis
           COMMAND bench_instrument_esis --cells 285 --lines 1 --bins 24
                   --markdown ${CMAKE_CURRENT_BINARY_DIR}/bench_instrument_esis.md)
  set_tests_properties(bench_instrument_esis PROPERTIES LABELS bench TIMEOUT 900)
endif()
