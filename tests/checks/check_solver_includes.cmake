# check_solver_includes.cmake: fails when a file of solvers/ includes a
# header that is not the public API (include/: "spart.h", "spart/...") or
# one of solvers/ itself. The solver layer is a client of the library
# (docs/architecture.md); its CMake target sees include/ only, and this
# check names the offending line so the rule holds whatever the build sees.
#   cmake -DSPART_SOURCE_DIR=... -P check_solver_includes.cmake
file(GLOB solver_files "${SPART_SOURCE_DIR}/solvers/*.c" "${SPART_SOURCE_DIR}/solvers/*.h")
set(problems "")
foreach(file ${solver_files})
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
    if(header STREQUAL "spart.h" OR header MATCHES "^spart/[a-z_0-9]+\\.h$")
      continue()
    endif()
    if(NOT header MATCHES "/" AND EXISTS "${SPART_SOURCE_DIR}/solvers/${header}")
      continue()
    endif()
    file(RELATIVE_PATH name "${SPART_SOURCE_DIR}" "${file}")
    string(APPEND problems "  ${name}: #include \"${header}\"\n")
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "solvers/ may include only the public API (include/) and its own headers:\n${problems}")
endif()
message(STATUS "solvers/ includes only the public API")
