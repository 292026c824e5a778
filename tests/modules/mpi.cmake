# spart/distributed.h (issue 27), included by tests/CMakeLists.txt.
#
# test_distributed (label `unit`, every build): the partitions of frames
# and rows, and what a communicator answers without MPI (a build without
# it: SPART_ERROR_NOT_IMPLEMENTED and how to build with it) or before
# MPI_Init (a build with it).
spart_add_unit_test(test_distributed)
if(SPART_HAVE_MPI)
  target_compile_definitions(test_distributed PRIVATE SPART_TEST_HAVE_MPI=1)
  target_link_libraries(test_distributed PRIVATE MPI::MPI_C)
endif()

# The MPI tests (label `mpi`): each program under mpirun with 1, 2 and 4
# ranks on this host (CPU ranks; 4 ranks oversubscribe a 2-core machine),
# every rank's result the one-process result bit for bit. Built only with
# MPI; without it there is nothing to run (ctest lists no mpi test). A
# few seconds each on 2 cores (OMP_NUM_THREADS=1 per rank).
if(SPART_HAVE_MPI)
  set(spart_mpi_flags ${MPIEXEC_PREFLAGS})
  # Open MPI refuses more ranks than cores, and root, unless told (its
  # environment variables, 4.x and 5.x; other MPIs ignore them); in
  # containers without ptrace its shared-memory transport's single copy
  # fails ("Read -1, expected ..."), so it copies twice there.
  set(spart_mpi_environment
      "OMP_NUM_THREADS=1;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
      "OMPI_MCA_rmaps_base_oversubscribe=1;PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe"
      "OMPI_MCA_btl_vader_single_copy_mechanism=none")
  foreach(program test_mpi_products test_mpi_mart)
    add_executable(${program} mpi/${program}.c)
    target_link_libraries(${program} PRIVATE spart_static MPI::MPI_C OpenMP::OpenMP_C GSL::gsl m)
    target_include_directories(${program} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/mpi
                               ${CMAKE_CURRENT_SOURCE_DIR}/unit)
    target_compile_options(${program} PRIVATE ${SPART_C_FLAGS})
    foreach(ranks 1 2 4)
      add_test(NAME ${program}_np${ranks}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${spart_mpi_flags}
                       $<TARGET_FILE:${program}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${program}_np${ranks} PROPERTIES LABELS mpi TIMEOUT 300
        ENVIRONMENT "${spart_mpi_environment}")
    endforeach()
  endforeach()
  # The spart command under mpirun: the same files as one process, for one
  # frame (tests/cli/small.yaml) and a sequence of frames (mpi/frames.yaml).
  if(TARGET spart_cli)
    # frames: 2 ranks split the 3 frames, 4 ranks split the operators
    foreach(case "small;cli/small.yaml;2" "small;cli/small.yaml;3" "frames;mpi/frames.yaml;2"
                 "frames;mpi/frames.yaml;4")
      list(GET case 0 name)
      list(GET case 1 config)
      list(GET case 2 ranks)
      add_test(NAME cli_mpi_${name}_np${ranks}
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/cli_mpi.sh $<TARGET_FILE:spart_cli>
                       ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks}
                       ${CMAKE_CURRENT_SOURCE_DIR}/${config}
                       ${CMAKE_CURRENT_BINARY_DIR}/cli_mpi_${name}_np${ranks} ${spart_mpi_flags})
      set_tests_properties(cli_mpi_${name}_np${ranks} PROPERTIES LABELS mpi TIMEOUT 300
        ENVIRONMENT "${spart_mpi_environment}")
    endforeach()
  endif()
endif()

# bench_mpi_split (label `bench`): the instrument's operators split over
# the ranks against one rank (docs/dev/mpi-notes.md has its figures).
if(SPART_HAVE_MPI AND SPART_BUILD_BENCHMARKS)
  add_executable(bench_mpi_split bench/bench_mpi_split.c)
  target_link_libraries(bench_mpi_split PRIVATE spart MPI::MPI_C OpenMP::OpenMP_C m)
  target_compile_options(bench_mpi_split PRIVATE ${SPART_C_FLAGS})
  add_test(NAME bench_mpi_split
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:bench_mpi_split> ${MPIEXEC_POSTFLAGS})
  set_tests_properties(bench_mpi_split PROPERTIES LABELS bench TIMEOUT 900
                       ENVIRONMENT "${spart_mpi_environment}")
endif()
