# The 2-D conservative weights by clipping, on the host and the device
# (issue 30, "30-clip"), included by tests/CMakeLists.txt.
# test_clip_digests (label `unit`): golden digests of the host kernels'
# entries on the cases of unit/test_clip_cases.h, so that the arithmetic
# they share with the device (src/weights/clip_*_math.h) keeps its bits.
spart_add_unit_test(test_clip_digests)
# test_cuda_weights_clip (label `cuda`): the device builds (lattice and
# curvilinear outputs) equal the host kernels entry for entry; 77 without
# a device unless SPART_REQUIRE_GPU=1.
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_weights_clip)
  target_link_libraries(test_cuda_weights_clip PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_weights_clip PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                       TIMEOUT 900)
endif()
# bench_cuda_weights_clip (label `bench`, with -DSPART_BUILD_BENCHMARKS=ON):
# the device builds against the host kernels and regridding.weights(...,
# device="cuda") (bench/bench_cuda_weights_clip_reference.py) in the same
# run, and the copy-rate floor.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND TARGET CUDA::cusparse)
  add_executable(bench_cuda_weights_clip bench/bench_cuda_weights_clip.c bench/bench_cuda_peers.c)
  target_link_libraries(bench_cuda_weights_clip PRIVATE spart_static CUDA::cudart CUDA::cusparse
                        OpenMP::OpenMP_C m)
  target_include_directories(bench_cuda_weights_clip PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_cuda_weights_clip PRIVATE ${SPART_C_FLAGS})
  target_compile_definitions(bench_cuda_weights_clip PRIVATE
    SPART_BENCH_CLIP_REFERENCE="${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cuda_weights_clip_reference.py")
  add_test(NAME bench_cuda_weights_clip
           COMMAND bench_cuda_weights_clip --python ${SPART_PYTHON} --repeat 5)
  set_tests_properties(bench_cuda_weights_clip PROPERTIES LABELS bench TIMEOUT 1800)
endif()
