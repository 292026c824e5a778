# The streaming assembly's tests (spart_regridder_create_streamed,
# include/spart/regridder.h): on the host (label unit).
spart_add_unit_test(test_regridder_stream)
