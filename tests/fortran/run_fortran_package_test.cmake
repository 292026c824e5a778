# run_fortran_package_test.cmake: prove that the installed Fortran module
# can be used as the README says.
#
# Installs the build tree into a fresh prefix, then builds and runs the
# Fortran example program three times:
#   1. a CMake project of Fortran alone (package/) that calls
#      find_package(spart) and links spart::fortran;
#   2. gfortran with the flags of `pkg-config --cflags --libs spart-fortran`
#      (the installed spart.mod and libspart_fortran);
#   3. gfortran compiling the installed source include/spart.f90 with the
#      example, linked against libspart alone (what a user of another
#      Fortran compiler does).
# Any failing step stops the script with its command and output.
#
# Run as `cmake -D<variable>=<value> ... -P run_fortran_package_test.cmake`:
#   SPART_BUILD_DIR           the built spart tree to install
#   SPART_PACKAGE_SOURCE      tests/fortran/package
#   SPART_EXAMPLE             examples/fortran/regrid_example.f90
#   SPART_PACKAGE_WORK        a scratch folder, emptied first
#   SPART_INSTALL_LIBDIR      CMAKE_INSTALL_LIBDIR of the build
#   SPART_INSTALL_INCLUDEDIR  CMAKE_INSTALL_INCLUDEDIR of the build
#   SPART_Fortran_COMPILER    the Fortran compiler of the build
#   SPART_GENERATOR, SPART_MAKE_PROGRAM  the build's generator (optional)
#   SPART_CONFIG              the configuration to install (multi-config generators)
#   PKG_CONFIG_EXECUTABLE     pkg-config

cmake_minimum_required(VERSION 3.25)

set(PACKAGE_TEST "fortran package test")
include(${CMAKE_CURRENT_LIST_DIR}/../package/package_steps.cmake)
package_require(SPART_BUILD_DIR SPART_PACKAGE_SOURCE SPART_EXAMPLE SPART_PACKAGE_WORK
                SPART_INSTALL_LIBDIR SPART_INSTALL_INCLUDEDIR SPART_Fortran_COMPILER
                PKG_CONFIG_EXECUTABLE)

# The example prints its checks; the last one says a batch gave the same bits.
function(expect_example what output)
  if(NOT output MATCHES "batch of 3: the first vector gives the same bits as alone")
    message(FATAL_ERROR "fortran package test: ${what} printed something unexpected:\n${output}")
  endif()
  message(STATUS "${what}: ran")
endfunction()

set(prefix "${SPART_PACKAGE_WORK}/prefix")
set(libdir "${prefix}/${SPART_INSTALL_LIBDIR}")
set(run_environment "LD_LIBRARY_PATH=${libdir}:$ENV{LD_LIBRARY_PATH}")

# ---- 1. install -------------------------------------------------------------
package_install("${prefix}")
foreach(installed "${SPART_INSTALL_INCLUDEDIR}/spart.f90"
        "${SPART_INSTALL_LIBDIR}/pkgconfig/spart-fortran.pc")
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "fortran package test: ${installed} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE modules "${prefix}/${SPART_INSTALL_INCLUDEDIR}/spart/fortran/*/spart.mod")
if(NOT modules)
  message(FATAL_ERROR "fortran package test: no spart.mod under "
                      "${prefix}/${SPART_INSTALL_INCLUDEDIR}/spart/fortran")
endif()

# ---- 2. find_package(spart) and spart::fortran ----------------------------------
set(consumer_build "${SPART_PACKAGE_WORK}/find_package")
package_configure_consumer(
  "${consumer_build}" "${prefix}" "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_Fortran_COMPILER=${SPART_Fortran_COMPILER}" "-DSPART_EXAMPLE=${SPART_EXAMPLE}"
  -DCMAKE_BUILD_TYPE=Release)
run_step("building the find_package consumer" "${CMAKE_COMMAND}" --build "${consumer_build}"
         --config Release)
find_program(consumer spart_fortran_consumer PATHS "${consumer_build}" "${consumer_build}/Release"
             NO_DEFAULT_PATH NO_CACHE REQUIRED)
run_step("running the find_package consumer" "${consumer}")
expect_example("find_package(spart) + spart::fortran" "${step_output}")

# ---- 3. gfortran $(pkg-config --cflags --libs spart-fortran) ---------------------
set(pkg_environment "PKG_CONFIG_PATH=${libdir}/pkgconfig")
run_step("pkg-config --cflags --libs spart-fortran" "${CMAKE_COMMAND}" -E env "${pkg_environment}"
         "${PKG_CONFIG_EXECUTABLE}" --cflags --libs spart-fortran)
string(STRIP "${step_output}" pkg_flags)
separate_arguments(pkg_flags UNIX_COMMAND "${pkg_flags}")
set(pkg_work "${SPART_PACKAGE_WORK}/pkg-config")
file(MAKE_DIRECTORY "${pkg_work}")
execute_process(COMMAND "${SPART_Fortran_COMPILER}" "${SPART_EXAMPLE}" ${pkg_flags}
                        -o "${pkg_work}/regrid_example"
                WORKING_DIRECTORY "${pkg_work}" RESULT_VARIABLE result OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fortran package test: compiling the example with the flags of "
                      "spart-fortran.pc failed:\n${output}")
endif()
run_step("running the pkg-config consumer" "${CMAKE_COMMAND}" -E env "${run_environment}"
         "${pkg_work}/regrid_example")
expect_example("gfortran + spart-fortran.pc" "${step_output}")

# ---- 4. the installed source, against libspart alone ------------------------------
run_step("pkg-config --cflags --libs spart" "${CMAKE_COMMAND}" -E env "${pkg_environment}"
         "${PKG_CONFIG_EXECUTABLE}" --libs spart)
string(STRIP "${step_output}" c_flags)
separate_arguments(c_flags UNIX_COMMAND "${c_flags}")
set(source_work "${SPART_PACKAGE_WORK}/source")
file(MAKE_DIRECTORY "${source_work}")
execute_process(COMMAND "${SPART_Fortran_COMPILER}" "${prefix}/${SPART_INSTALL_INCLUDEDIR}/spart.f90"
                        "${SPART_EXAMPLE}" ${c_flags} -o "${source_work}/regrid_example"
                WORKING_DIRECTORY "${source_work}" RESULT_VARIABLE result OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "fortran package test: compiling the installed spart.f90 with the "
                      "example against -lspart failed:\n${output}")
endif()
run_step("running the example built from the installed source" "${CMAKE_COMMAND}" -E env
         "${run_environment}" "${source_work}/regrid_example")
expect_example("installed spart.f90 + libspart" "${step_output}")
