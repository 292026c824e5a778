# The segmented softmax (spart/softmax.h): its unit test, its cuda test
# (host = device by digest; exit 77 without a visible device unless
# SPART_REQUIRE_GPU=1) and its benchmark (label bench).
spart_add_unit_test(test_softmax)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_softmax)
  target_link_libraries(test_cuda_softmax PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_softmax PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
