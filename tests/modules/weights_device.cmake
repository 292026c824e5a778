# Weights built on a CUDA device (issue 30; spart_weights_build_device in
# spart/weights.h): the host-side test (the device's 1-D algorithm run on
# the host against the walk, the checks shared with the host build; label
# unit), the device test (host = device entries by digest, assembly in
# place; label cuda, exit 77 without a visible device unless
# SPART_REQUIRE_GPU=1) and the benchmark against regridding's GPU build
# (label bench; python, needs numpy and regridding's wheel on the GPU
# machine).
spart_add_unit_test(test_weights_device)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_weights)
  target_link_libraries(test_cuda_weights PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_weights PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
  if(SPART_BUILD_BENCHMARKS)
    add_test(NAME bench_cuda_weights
             COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cuda_weights.py
                     $<TARGET_FILE:spart>)
    set_tests_properties(bench_cuda_weights PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                                                       TIMEOUT 1800)
  endif()
endif()
