# package_steps.cmake: what the installed-package tests share
# (tests/package/run_package_test.cmake and
# tests/fortran/run_fortran_package_test.cmake, both run with cmake -P):
# the check of their -D variables, one step run and stopped on failure, the
# build installed into a fresh prefix, and a consumer project configured
# with the build's generator that must find that prefix's spart. The
# including script sets PACKAGE_TEST (its name in messages) first.

# Stop, naming the first variable of ARGN not passed with -D.
function(package_require)
  get_filename_component(script "${CMAKE_SCRIPT_MODE_FILE}" NAME)
  foreach(required ${ARGN})
    if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
      message(FATAL_ERROR "${PACKAGE_TEST}: pass -D${required}=... to ${script}")
    endif()
  endforeach()
endfunction()

# Run one step; stop with its command and everything it printed if it fails.
# What it printed is left in `step_output`.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${PACKAGE_TEST}: ${what} failed (exit ${result})\n"
                        "command: ${command}\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

# SPART_PACKAGE_WORK emptied, and SPART_BUILD_DIR installed into `prefix`
# (SPART_CONFIG's configuration, for multi-config generators).
function(package_install prefix)
  file(REMOVE_RECURSE "${SPART_PACKAGE_WORK}")
  file(MAKE_DIRECTORY "${SPART_PACKAGE_WORK}")
  set(config_arguments)
  if(SPART_CONFIG)
    set(config_arguments --config "${SPART_CONFIG}")
  endif()
  run_step("installing ${SPART_BUILD_DIR} into ${prefix} (is the library built?)"
           "${CMAKE_COMMAND}" --install "${SPART_BUILD_DIR}" --prefix "${prefix}"
           ${config_arguments})
endfunction()

# Configure the consumer project of SPART_PACKAGE_SOURCE in `build` with the
# cmake arguments of ARGN and the build's generator (SPART_GENERATOR,
# SPART_MAKE_PROGRAM); it must have found the spart installed in `prefix`,
# not another one on the system.
function(package_configure_consumer build prefix)
  set(arguments -S "${SPART_PACKAGE_SOURCE}" -B "${build}" ${ARGN})
  if(SPART_GENERATOR)
    list(APPEND arguments -G "${SPART_GENERATOR}")
  endif()
  if(SPART_MAKE_PROGRAM)
    list(APPEND arguments "-DCMAKE_MAKE_PROGRAM=${SPART_MAKE_PROGRAM}")
  endif()
  run_step("configuring the find_package consumer" "${CMAKE_COMMAND}" ${arguments})
  file(STRINGS "${build}/CMakeCache.txt" found_dir REGEX "^spart_DIR:")
  string(REGEX REPLACE "^spart_DIR:[A-Z]+=" "" found_dir "${found_dir}")
  file(REAL_PATH "${found_dir}" found_dir)
  file(REAL_PATH "${prefix}" real_prefix)
  string(FIND "${found_dir}" "${real_prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${PACKAGE_TEST}: find_package(spart) found ${found_dir}, "
                        "not the installation in ${prefix}")
  endif()
endfunction()
