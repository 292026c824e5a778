# tests/modules/products.cmake (issue 26, the frames' products): the device
# products over a batch of frames read interleaved and MART's fused update
# over frames (test_cuda_product_frames, label cuda), and their benchmark
# at ESIS scale against cuSPARSE and the copy rate (bench_esis_products,
# label bench; docs/dev/esis-products-notes.md). Included by
# tests/CMakeLists.txt.
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_product_frames)
  target_link_libraries(test_cuda_product_frames PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_product_frames PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                       TIMEOUT 900)
endif()
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND TARGET CUDA::cusparse)
  add_executable(bench_esis_products bench/bench_esis_products.c)
  target_link_libraries(bench_esis_products PRIVATE spart_static CUDA::cudart CUDA::cusparse
                        OpenMP::OpenMP_C m)
  target_include_directories(bench_esis_products PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_esis_products PRIVATE ${SPART_C_FLAGS})
  # A small slice by default (seconds); the ESIS-scale figures come from
  # `bench_esis_products --markdown FILE` (the whole field of one line).
  add_test(NAME bench_esis_products
           COMMAND bench_esis_products --cells 142 --repeat 3
                   --markdown ${CMAKE_CURRENT_BINARY_DIR}/bench_esis_products.md)
  set_tests_properties(bench_esis_products PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                       TIMEOUT 900)
endif()
