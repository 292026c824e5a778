# The segmented softmax (spart/softmax.h): its unit test, its cuda test
# (host = device by digest; exit 77 without a visible device unless
# SPART_REQUIRE_GPU=1) and its benchmark (label bench).
spart_add_unit_test(test_softmax)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_softmax)
  target_link_libraries(test_cuda_softmax PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_softmax PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# Parity with PyG's softmax on the ptr path (label `parity`; skipped, exit
# 77, where torch and torch_geometric are not installed).
add_test(NAME parity_softmax_pyg
         COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/parity/test_softmax_pyg.py
                 --library $<TARGET_FILE:spart>)
set_tests_properties(parity_softmax_pyg PROPERTIES LABELS parity SKIP_RETURN_CODE 77 TIMEOUT 600)
# The benchmark (label `bench`): spart through ctypes against PyG on one
# GPU, and the host against PyG CPU (needs torch, torch_geometric, a GPU).
if(SPART_BUILD_BENCHMARKS)
  add_test(NAME bench_softmax
           COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_softmax.py
                   $<TARGET_FILE:spart>)
  set_tests_properties(bench_softmax PROPERTIES LABELS bench SKIP_RETURN_CODE 77 TIMEOUT 1800)
endif()
