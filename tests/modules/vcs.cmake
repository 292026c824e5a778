# VCS count matrices (spart/vcs.h): the host tests (label `unit`), the
# device tests (label `cuda`, exit 77 without a device unless
# SPART_REQUIRE_GPU=1) and the benchmarks (label `bench`).
spart_add_unit_test(test_vcs)
if(SPART_HAVE_CUDA AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_cuda_vcs.c)
  spart_add_unit_test(test_cuda_vcs)
  target_link_libraries(test_cuda_vcs PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_vcs PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
if(SPART_BUILD_BENCHMARKS AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_vcs.c)
  add_executable(bench_vcs bench/bench_vcs.c)
  target_link_libraries(bench_vcs PRIVATE spart_static OpenMP::OpenMP_C m)
  target_include_directories(bench_vcs PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  target_compile_options(bench_vcs PRIVATE ${SPART_C_FLAGS})
  target_compile_definitions(bench_vcs PRIVATE
    SPART_BENCH_VCS_SCIPY="${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_vcs_scipy.py")
  add_test(NAME bench_vcs COMMAND bench_vcs --python ${SPART_PYTHON})
  set_tests_properties(bench_vcs PROPERTIES LABELS bench TIMEOUT 1800)
endif()
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND TARGET CUDA::cusparse AND TARGET CUDA::cublas
   AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cuda_vcs.c)
  add_executable(bench_cuda_vcs bench/bench_cuda_vcs.c bench/bench_cuda_peers.c)
  target_link_libraries(bench_cuda_vcs PRIVATE spart_static CUDA::cudart CUDA::cusparse
                        CUDA::cublas OpenMP::OpenMP_C m)
  target_include_directories(bench_cuda_vcs PRIVATE ${PROJECT_SOURCE_DIR}/src
                             ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  target_compile_options(bench_cuda_vcs PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_cuda_vcs COMMAND bench_cuda_vcs)
  set_tests_properties(bench_cuda_vcs PROPERTIES LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 1800)
endif()
