# run_package_test.cmake: prove that an installed spart can be used.
#
# Installs the build tree into a fresh prefix, then builds and runs the
# consumer in this folder (main.c) and the installed C example twice: as a
# C-only CMake project that calls find_package(spart) and links spart::spart
# (SPART_LINKAGE=shared) or spart::spart_static (static), and with a plain
# compiler call whose flags come from `pkg-config --cflags --libs spart`
# (with --static for static). The installed `spart` command, when built,
# must run from the prefix without LD_LIBRARY_PATH (its rpath). Any failing
# step stops the script with its command and output (and so fails the test).
#
# Run as `cmake -D<variable>=<value> ... -P run_package_test.cmake` with:
#   SPART_BUILD_DIR       the built spart tree to install
#   SPART_PACKAGE_SOURCE  this folder (tests/package)
#   SPART_PACKAGE_WORK    a scratch folder, emptied first
#   SPART_INSTALL_LIBDIR  CMAKE_INSTALL_LIBDIR of the build (lib, lib64, ...)
#   SPART_VERSION         the version the consumer must report
#   SPART_C_COMPILER      the C compiler of the build
#   SPART_GENERATOR, SPART_MAKE_PROGRAM  the build's generator (optional)
#   SPART_CONFIG          the configuration to install (multi-config generators)
#   SPART_EXTRA_FLAGS     compile and link flags the library needs from its
#                         users (the sanitizers), space-separated (optional)
#   PKG_CONFIG_EXECUTABLE pkg-config
#   SPART_LINKAGE         shared (default) or static

cmake_minimum_required(VERSION 3.25)

set(PACKAGE_TEST "package test")
include(${CMAKE_CURRENT_LIST_DIR}/package_steps.cmake)
package_require(SPART_BUILD_DIR SPART_PACKAGE_SOURCE SPART_PACKAGE_WORK SPART_INSTALL_LIBDIR
                SPART_VERSION SPART_C_COMPILER PKG_CONFIG_EXECUTABLE)

# The consumer must print the version of the installed library.
function(expect_version what output)
  if(NOT output MATCHES "spart ${SPART_VERSION}: weights with 2 entries in 1 element")
    message(FATAL_ERROR "package test: ${what} printed something unexpected:\n${output}")
  endif()
  message(STATUS "${what}: ${output}")
endfunction()

if(NOT DEFINED SPART_LINKAGE OR SPART_LINKAGE STREQUAL "")
  set(SPART_LINKAGE shared)
endif()
set(static OFF)
set(pkg_static)
if(SPART_LINKAGE STREQUAL "static")
  set(static ON)
  set(pkg_static --static)
endif()

set(prefix "${SPART_PACKAGE_WORK}/prefix")
set(libdir "${prefix}/${SPART_INSTALL_LIBDIR}")

# ---- 1. install -------------------------------------------------------------
package_install("${prefix}")

set(example "${prefix}/share/spart/examples/regrid_example.c")
if(NOT EXISTS "${example}")
  message(FATAL_ERROR "package test: the C example was not installed as ${example}")
endif()

# The installed command finds the installed libspart through its rpath.
if(EXISTS "${prefix}/bin/spart")
  run_step("running the installed spart --version (its rpath)"
           "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${prefix}/bin/spart" --version)
endif()

# ---- 2. find_package(spart) and spart::spart or spart::spart_static --------------
set(consumer_build "${SPART_PACKAGE_WORK}/find_package")
package_configure_consumer(
  "${consumer_build}" "${prefix}" "-DSPART_CONSUMER_STATIC=${static}"
  "-DSPART_CONSUMER_EXAMPLE=${example}" "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_C_COMPILER=${SPART_C_COMPILER}" -DCMAKE_BUILD_TYPE=Release
  "-DCMAKE_C_FLAGS=${SPART_EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${SPART_EXTRA_FLAGS}")

run_step("building the find_package consumer" "${CMAKE_COMMAND}" --build "${consumer_build}"
         --config Release)
find_program(consumer spart_consumer PATHS "${consumer_build}" "${consumer_build}/Release"
             NO_DEFAULT_PATH NO_CACHE REQUIRED)
# Linked to the shared library through its build RPATH: no LD_LIBRARY_PATH.
run_step("running the find_package consumer" "${consumer}")
expect_version("find_package(spart) consumer (${SPART_LINKAGE})" "${step_output}")
find_program(example_program spart_example PATHS "${consumer_build}" "${consumer_build}/Release"
             NO_DEFAULT_PATH NO_CACHE REQUIRED)
run_step("running the installed C example built with find_package" "${example_program}")

# ---- 3. pkg-config --cflags --libs spart ------------------------------------------
set(pkg_environment "PKG_CONFIG_PATH=${libdir}/pkgconfig")
run_step("pkg-config --cflags --libs spart" "${CMAKE_COMMAND}" -E env "${pkg_environment}"
         "${PKG_CONFIG_EXECUTABLE}" --cflags --libs ${pkg_static} spart)
string(STRIP "${step_output}" pkg_flags)
separate_arguments(pkg_flags UNIX_COMMAND "${pkg_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${SPART_EXTRA_FLAGS}")
run_step("pkg-config --modversion spart" "${CMAKE_COMMAND}" -E env "${pkg_environment}"
         "${PKG_CONFIG_EXECUTABLE}" --modversion spart)
string(STRIP "${step_output}" pkg_version)
if(NOT pkg_version STREQUAL SPART_VERSION)
  message(FATAL_ERROR "package test: spart.pc says version ${pkg_version}, "
                      "the build is ${SPART_VERSION}")
endif()

# Static: the archive itself, so that no libspart.so beside it is chosen.
if(static)
  list(TRANSFORM pkg_flags REPLACE "^-lspart$" "${libdir}/libspart.a")
endif()
set(pkg_folder "${SPART_PACKAGE_WORK}/pkg-config")
file(MAKE_DIRECTORY "${pkg_folder}")
foreach(program spart_consumer regrid_example)
  if(program STREQUAL "spart_consumer")
    set(source "${SPART_PACKAGE_SOURCE}/main.c")
  else()
    set(source "${example}")
  endif()
  run_step("compiling ${source} with the flags of spart.pc (${SPART_LINKAGE})"
           "${SPART_C_COMPILER}" -std=c11 ${extra_flags} "${source}" -o "${pkg_folder}/${program}"
           ${pkg_flags})
  run_step("running the pkg-config ${program}"
           "${CMAKE_COMMAND}" -E env "LD_LIBRARY_PATH=${libdir}:$ENV{LD_LIBRARY_PATH}"
           "${pkg_folder}/${program}")
  if(program STREQUAL "spart_consumer")
    expect_version("pkg-config consumer (${SPART_LINKAGE})" "${step_output}")
  endif()
endforeach()
