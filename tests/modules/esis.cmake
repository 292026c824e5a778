# tests/modules/esis.cmake (issue 26, label bench): the ESIS-scale run (CUDA,
# with -DSPART_BUILD_BENCHMARKS=ON and CUDA): bench_esis_run, from the
# instrument description to the solutions written, stage by stage
# (docs/dev/esis-notes.md). Included by tests/CMakeLists.txt. It writes
# the solutions through the spart command's own FITS writer
# (src/cli/fits_cube.c, output_files.c), compiled in.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS)
  find_package(Threads REQUIRED)
  add_executable(bench_esis_run bench/bench_esis_run.c ${PROJECT_SOURCE_DIR}/src/cli/fits_cube.c
                                ${PROJECT_SOURCE_DIR}/src/cli/output_files.c)
  target_link_libraries(bench_esis_run PRIVATE spart_static CUDA::cudart PkgConfig::CFITSIO
                        OpenMP::OpenMP_C Threads::Threads m)
  target_include_directories(bench_esis_run PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_esis_run PRIVATE ${SPART_C_FLAGS})
  # nanosleep, mkstemp, lstat (as the command is built)
  target_compile_definitions(bench_esis_run PRIVATE _POSIX_C_SOURCE=200809L)
  # A small slice by default (seconds); the ESIS-scale figures come from
  # `bench_esis_run --markdown FILE` (the whole field of one line).
  add_test(NAME bench_esis_run
           COMMAND bench_esis_run --cells 142 --frames 4 --iterations 8
                   --out ${CMAKE_CURRENT_BINARY_DIR}/esis_run_out
                   --markdown ${CMAKE_CURRENT_BINARY_DIR}/bench_esis_run.md)
  set_tests_properties(bench_esis_run PROPERTIES LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# bench_esis_stream (label bench, host only): the host's streamed assembly
# against the in-memory assembly in the same run, on ESIS-shaped weights
# (docs/dev/streaming-notes.md). Exits 1 if the arrays differ.
if(SPART_BUILD_BENCHMARKS)
  add_executable(bench_esis_stream bench/bench_esis_stream.c)
  target_link_libraries(bench_esis_stream PRIVATE spart OpenMP::OpenMP_C m)
  target_compile_options(bench_esis_stream PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_esis_stream
           COMMAND bench_esis_stream --entries 2e6 --block 262144 --repeat 2
                   --markdown ${CMAKE_CURRENT_BINARY_DIR}/bench_esis_stream.md)
  set_tests_properties(bench_esis_stream PROPERTIES LABELS bench TIMEOUT 900)
endif()
# test_fits_cube (label unit): the command's FITS cubes (src/cli/fits_cube.c,
# which needs only CFITSIO, so the test is built with or without the
# command) byte for byte as CFITSIO alone writes them, float64 and
# float32, many chunks on many threads, and a failed write reported with
# no file left.
add_executable(test_fits_cube cli/test_fits_cube.c ${PROJECT_SOURCE_DIR}/src/io/fits_scan.c)
target_include_directories(test_fits_cube PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                  ${PROJECT_SOURCE_DIR}/src/cli)
target_link_libraries(test_fits_cube PRIVATE spart PkgConfig::CFITSIO PkgConfig::CMOCKA m)
target_compile_options(test_fits_cube PRIVATE ${SPART_C_FLAGS})
target_compile_definitions(test_fits_cube PRIVATE _POSIX_C_SOURCE=200809L)
add_test(NAME test_fits_cube COMMAND test_fits_cube)
set_tests_properties(test_fits_cube PROPERTIES LABELS unit
                     ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout")
# bench_fits_write (label bench, host only; CFITSIO, not the whole
# command): one solution written the old way (CFITSIO alone), the floor (the
# same bytes, plain writes) and the command's writer on 1-16 threads and in
# float32, each part timed (docs/dev/esis-notes.md).
if(SPART_BUILD_BENCHMARKS)
  add_executable(bench_fits_write bench/bench_fits_write.c
                                  ${PROJECT_SOURCE_DIR}/src/cli/output_files.c
                                  ${PROJECT_SOURCE_DIR}/src/io/fits_scan.c)
  target_include_directories(bench_fits_write PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                      ${PROJECT_SOURCE_DIR}/src/cli)
  target_link_libraries(bench_fits_write PRIVATE spart PkgConfig::CFITSIO OpenMP::OpenMP_C m)
  target_compile_options(bench_fits_write PRIVATE ${SPART_C_FLAGS})
  target_compile_definitions(bench_fits_write PRIVATE _POSIX_C_SOURCE=200809L)
  add_test(NAME bench_fits_write COMMAND bench_fits_write --bins 4 --cells 300 --out
                                         ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(bench_fits_write PROPERTIES LABELS bench TIMEOUT 300)
endif()
# The command's outputs (where it is built, label unit): float32 cubes
# (outputs.value_type) and a sequence of frames whose writer fails,
# tests/cli/outputs_tests.sh, a case a test, about a second each.
if(TARGET spart_cli)
  foreach(case float32_outputs frames_failed_write)
    add_test(NAME cli_outputs_${case}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/outputs_tests.sh $<TARGET_FILE:spart_cli>
                     ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/outputs_work ${case})
    # under the sanitizers: fontconfig's lifelong caches (cairo's text in
    # the pictures) are not spart's leaks, as for tests/cli's tests
    set_tests_properties(
      cli_outputs_${case} PROPERTIES LABELS unit TIMEOUT 120
      ENVIRONMENT "OMP_NUM_THREADS=2;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/cli/lsan.supp")
  endforeach()
endif()
