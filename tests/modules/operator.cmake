# The operator module's tests beyond those of tests/CMakeLists.txt: the CSR
# matrix made from a caller's arrays (spart/csr_matrix.h), on the host and
# (with CUDA) on a device, and its benchmark against cuSPARSE.
spart_add_unit_test(test_csr_matrix)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_csr_matrix)
  target_link_libraries(test_cuda_csr_matrix PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_csr_matrix PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
