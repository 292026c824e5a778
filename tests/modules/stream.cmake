# The streaming assembly's tests (spart_regridder_create_streamed,
# include/spart/regridder.h): on the host (label unit), on a device (label
# cuda: skipped without a GPU, a failure then with SPART_REQUIRE_GPU=1),
# and its benchmark on one GPU (label bench).
spart_add_unit_test(test_regridder_stream)
spart_add_unit_test(test_weights_files)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_regridder_stream)
  target_link_libraries(test_cuda_regridder_stream PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_regridder_stream PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                       TIMEOUT 900)
endif()
# bench_cuda_stream: the streamed device assembly against the in-memory
# device assembly and the host-to-device copy rate, one large operator.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS)
  add_executable(bench_cuda_stream bench/bench_cuda_stream.c)
  target_link_libraries(bench_cuda_stream PRIVATE spart_static CUDA::cudart OpenMP::OpenMP_C m)
  target_include_directories(bench_cuda_stream PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_cuda_stream PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_cuda_stream COMMAND bench_cuda_stream --quick)
  set_tests_properties(bench_cuda_stream PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                       TIMEOUT 1800)
endif()
