# The operator module's tests beyond those of tests/CMakeLists.txt: the CSR
# matrix made from a caller's arrays (spart/csr_matrix.h), on the host and
# (with CUDA) on a device, and its benchmark against cuSPARSE.
spart_add_unit_test(test_csr_matrix)
if(SPART_HAVE_CUDA)
  spart_add_unit_test(test_cuda_csr_matrix)
  target_link_libraries(test_cuda_csr_matrix PRIVATE CUDA::cudart)
  set_tests_properties(test_cuda_csr_matrix PROPERTIES LABELS cuda SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
# bench_cuda_csr_matrix (label `bench`): the CSR matrix against cuSPARSE
# SpMV ALG1/ALG2 and SpMM on power-law graphs, random columns, a band and
# a skewed matrix.
if(SPART_HAVE_CUDA AND SPART_BUILD_BENCHMARKS AND TARGET CUDA::cusparse)
  add_executable(bench_cuda_csr_matrix bench/bench_cuda_csr_matrix.c bench/bench_cuda_peers.c)
  target_link_libraries(bench_cuda_csr_matrix PRIVATE spart_static CUDA::cudart CUDA::cusparse
                        OpenMP::OpenMP_C m)
  target_include_directories(bench_cuda_csr_matrix PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(bench_cuda_csr_matrix PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_cuda_csr_matrix COMMAND bench_cuda_csr_matrix --quick)
  set_tests_properties(bench_cuda_csr_matrix PROPERTIES LABELS bench SKIP_RETURN_CODE 77
                       TIMEOUT 1800)
endif()
# The host benchmark's comparison with scipy on small matrices of the same
# kinds (R-MAT rows hold duplicate columns), label parity: spart's product
# of a wrapped matrix against scipy's within the rounding of two orders,
# and the wrapped arrays unchanged; skipped (77) without numpy and scipy.
add_test(NAME csr_matrix_scipy
         COMMAND ${SPART_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_csr_matrix_host.py
                 $<TARGET_FILE:spart> --quick --threads 2)
set_tests_properties(csr_matrix_scipy PROPERTIES LABELS parity SKIP_RETURN_CODE 77 TIMEOUT 300)
