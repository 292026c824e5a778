# Many frames per MART solve (issue 26, item 2): the host's test (label
# unit), the device's (label cuda, exit 77 without a device) and the
# frames-per-second benchmark against the one-frame loop (label bench).
# Included by tests/CMakeLists.txt.
spart_add_unit_test(test_mart_frames)
if(SPART_HAVE_CUDA AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_cuda_mart_frames.c)
  spart_add_unit_test(test_cuda_mart_frames)
  target_link_libraries(test_cuda_mart_frames PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_mart_frames PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                       TIMEOUT 900)
endif()
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND
   EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_mart_frames.c)
  add_executable(bench_mart_frames bench/bench_mart_frames.c)
  target_link_libraries(bench_mart_frames PRIVATE spart_static CUDA::cudart OpenMP::OpenMP_C m)
  target_include_directories(bench_mart_frames PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_mart_frames PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_mart_frames COMMAND bench_mart_frames)
  set_tests_properties(bench_mart_frames PROPERTIES LABELS bench TIMEOUT 1800)
endif()
# bench_esis_steps (label bench, CUDA): each step of a MART iteration and
# of a batch's one-off work at ESIS scale against its floor
# (docs/dev/mart-frames-notes.md); the test runs a small slice.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND
   EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_esis_steps.c)
  add_executable(bench_esis_steps bench/bench_esis_steps.c)
  target_link_libraries(bench_esis_steps PRIVATE spart_static CUDA::cudart OpenMP::OpenMP_C m)
  target_compile_options(bench_esis_steps PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_esis_steps COMMAND bench_esis_steps --cells 142 --batch 4 --repeat 2)
  set_tests_properties(bench_esis_steps PROPERTIES LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# `spart invert` over a sequence of frames (where the command is built):
# tests/cli/frames_tests.sh, one behaviour a case, a few seconds each.
if(TARGET spart_cli)
  foreach(case synthesized from_files bad_inputs)
    add_test(NAME cli_frames_${case}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/frames_tests.sh $<TARGET_FILE:spart_cli>
                     ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/frames_work ${case})
    # under the sanitizers: fontconfig's lifelong caches (cairo's text in the
    # pictures) are not spart's leaks, as for tests/cli's own tests
    set_tests_properties(cli_frames_${case} PROPERTIES LABELS unit TIMEOUT 120
                         ENVIRONMENT "OMP_NUM_THREADS=2;LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/cli/lsan.supp")
  endforeach()
endif()
