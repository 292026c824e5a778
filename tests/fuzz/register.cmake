# tests/fuzz/register.cmake, included by tests/CMakeLists.txt: the test
# `fuzz` (label fuzz) where clang with libFuzzer and the spart command are
# there. It builds tests/fuzz with clang against this build's libspart.a,
# makes seed corpora (the example configs; FITS files written by `spart
# build` and `spart invert` on tests/cli/small.yaml) and runs each of the
# four fuzzers for SPART_FUZZ_SECONDS (default 8): about a minute with the
# build, on two cores. Any crash, leak, sanitizer report or refusal without
# a sentence fails it, leaving the input in the work folder.
find_program(SPART_CLANG NAMES clang clang-18 clang-17 clang-16 clang-15 clang-14)
set(SPART_FUZZ_SECONDS 8 CACHE STRING "Seconds each fuzzer runs in the test `fuzz`")
if(SPART_CLANG AND TARGET spart_cli AND NOT SPART_SANITIZE)
  # Can clang link a libFuzzer program (Debian: libclang-rt-NN-dev)?
  set(spart_fuzz_probe ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe.c)
  file(WRITE ${spart_fuzz_probe}
       "#include <stddef.h>\n#include <stdint.h>\n"
       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
  execute_process(COMMAND ${SPART_CLANG} -fsanitize=fuzzer,address ${spart_fuzz_probe}
                          -o ${CMAKE_CURRENT_BINARY_DIR}/fuzz_probe
                  RESULT_VARIABLE spart_fuzz_probe_result OUTPUT_QUIET ERROR_QUIET)
  if(spart_fuzz_probe_result EQUAL 0)
    set(spart_fuzz_libraries ${OpenMP_C_LIBRARIES})
    if(SPART_HAVE_CUDA)
      set(spart_fuzz_libraries ${OpenMP_C_LIBRARIES} ${CUDA_cudart_LIBRARY}
          ${CUDA_cufft_LIBRARY} stdc++)
    endif()
    add_test(NAME fuzz
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.sh
                     --clang ${SPART_CLANG} --source ${PROJECT_SOURCE_DIR}
                     --build ${PROJECT_BINARY_DIR} --library $<TARGET_FILE:spart_static>
                     --spart $<TARGET_FILE:spart_cli>
                     --work ${CMAKE_CURRENT_BINARY_DIR}/fuzz --seconds ${SPART_FUZZ_SECONDS}
                     --libraries "${spart_fuzz_libraries}")
    set_tests_properties(fuzz PROPERTIES LABELS fuzz TIMEOUT 600)
  else()
    message(STATUS "fuzz test: not registered (${SPART_CLANG} cannot link -fsanitize=fuzzer: "
                   "install libclang-rt-dev or the libclang-rt-NN-dev of your clang)")
  endif()
endif()
