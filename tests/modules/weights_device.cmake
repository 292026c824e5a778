# Weights built on a CUDA device (issue 30; spart_weights_build_device in
# spart/weights.h): the host-side test (the device's 1-D algorithm run on
# the host against the walk, the checks shared with the host build; label
# unit), the device test (host = device entries by digest, assembly in
# place; label cuda, exit 77 without a visible device unless
# SPART_REQUIRE_GPU=1) and the benchmark against regridding's GPU build
# (label bench; python, needs numpy and regridding's wheel on the GPU
# machine).
spart_add_unit_test(test_weights_device)
# The ideal instrument built on the device (params.on_device): its checks
# without a device (unit), and its operators, streamed build and inversion
# against the host build's bits (cuda).
spart_add_unit_test(test_instrument_device)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_weights)
  target_link_libraries(test_cuda_weights PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_weights PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
  # spart_weights_build_device_grids: grids already in device memory
  spart_add_unit_test(test_cuda_weights_grids)
  target_link_libraries(test_cuda_weights_grids PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_weights_grids PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                                                            TIMEOUT 300)
  spart_add_unit_test(test_cuda_instrument)
  target_link_libraries(test_cuda_instrument PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_instrument PROPERTIES LABELS cuda SKIP_RETURN_CODE 77
                                                        TIMEOUT 900)
  if(SPART_BUILD_BENCHMARKS)
    add_test(NAME bench_cuda_weights
             COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cuda_weights.py
                     $<TARGET_FILE:spart>)
    set_tests_properties(bench_cuda_weights PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                                                       TIMEOUT 1800)
  endif()
endif()
# bench_instrument_device (label bench): the ideal instrument built on the
# host and on the device in one run (the tutorial's, 256^2, an ESIS slice in
# memory and streamed), the same CSR bits checked; exit 77 without a device.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS)
  add_executable(bench_instrument_device bench/bench_instrument_device.c)
  target_link_libraries(bench_instrument_device PRIVATE spart OpenMP::OpenMP_C m)
  target_compile_options(bench_instrument_device PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_instrument_device
           COMMAND bench_instrument_device --esis-cells 142 --budget 8
                   --markdown ${CMAKE_CURRENT_BINARY_DIR}/bench_instrument_device.md)
  set_tests_properties(bench_instrument_device PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                                                          TIMEOUT 900)
endif()
