# The tiled block permute (spart/permute.h), included by tests/CMakeLists.txt.
# test_permute (label `unit`): the host against the float64 reference of the
# notes' CPU algorithm, every permutation of 2-5 axes, degenerate blocks,
# beta = 0 over NaN, thread counts, every error.
spart_add_unit_test(test_permute)
# test_cuda_permute (label `cuda`): host = device bit for bit on every type;
# 77 without a device unless SPART_REQUIRE_GPU=1.
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_permute)
  target_link_libraries(test_cuda_permute PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_permute PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# bench_permute (label `bench`): the issue's shapes on host and device
# against the copy rate (the floor) and an empty kernel's launch;
# bench_permute_torch.py times torch.permute(...).contiguous() on the same.
if(SPART_BUILD_BENCHMARKS)
  set(bench_permute_sources bench/bench_permute.c)
  if(SPART_HAVE_CUDA)
    list(APPEND bench_permute_sources bench/bench_permute_empty.cu)
  endif()
  add_executable(bench_permute ${bench_permute_sources})
  target_link_libraries(bench_permute PRIVATE spart_static OpenMP::OpenMP_C m)
  target_include_directories(bench_permute PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(SPART_HAVE_CUDA)
    target_link_libraries(bench_permute PRIVATE CUDA::cudart)
    target_compile_definitions(bench_permute PRIVATE BENCH_PERMUTE_CUDA=1)
  endif()
  target_compile_options(bench_permute PRIVATE $<$<COMPILE_LANGUAGE:C>:${SPART_C_FLAGS}>)
  add_test(NAME bench_permute COMMAND bench_permute)
  set_tests_properties(bench_permute PROPERTIES LABELS bench TIMEOUT 1800)
endif()
# parity_permute_numpy (label `parity`): plain blocks against np.transpose bit
# for bit on NumPy views of any strides (negative ones too), scaled and
# conjugated blocks within rounding; 77 without NumPy.
add_test(NAME parity_permute_numpy
         COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_permute_numpy.py
                 --library $<TARGET_FILE:spart>)
set_tests_properties(parity_permute_numpy PROPERTIES LABELS parity SKIP_RETURN_CODE 77 TIMEOUT 600
                     ENVIRONMENT "OMP_NUM_THREADS=2")
