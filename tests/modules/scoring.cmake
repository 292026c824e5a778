# Candidate scoring (spart/scoring.h), included by tests/CMakeLists.txt.
# test_scoring (label `unit`): the host against a float64 reference, the
# degenerate cases, every error, golden digests, batch against single.
spart_add_unit_test(test_scoring)
# test_cuda_scoring (label `cuda`): host = device bit for bit on both
# layouts, graph replay; 77 without a device unless SPART_REQUIRE_GPU=1.
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_scoring)
  target_link_libraries(test_cuda_scoring PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_scoring PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# bench_scoring (label `bench`): the fused call against the unfused launches
# at the same block size and thread count, cuBLAS strided-batched GEMV +
# norms + softmax, the copy-rate floor and an empty kernel's launch, on the
# shapes of issue 24; launched and graph-replayed times.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND TARGET CUDA::cublas)
  add_executable(bench_scoring bench/bench_scoring.c bench/bench_scoring_kernels.cu)
  target_link_libraries(bench_scoring PRIVATE spart_static CUDA::cudart CUDA::cublas
                        OpenMP::OpenMP_C m)
  target_include_directories(bench_scoring PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_scoring PRIVATE $<$<COMPILE_LANGUAGE:C>:${SPART_C_FLAGS}>
                         $<$<COMPILE_LANGUAGE:CUDA>:${SPART_CUDA_FLAGS}>)
  set_target_properties(bench_scoring PROPERTIES CUDA_STANDARD 17)
  add_test(NAME bench_scoring COMMAND bench_scoring)
  set_tests_properties(bench_scoring PROPERTIES LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
