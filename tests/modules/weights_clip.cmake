# The 2-D conservative weights by clipping, on the host and the device
# (issue 30, "30-clip"), included by tests/CMakeLists.txt.
# test_clip_digests (label `unit`): golden digests of the host kernels'
# entries on the cases of unit/test_clip_cases.h, so that the arithmetic
# they share with the device (src/weights/clip_*_math.h) keeps its bits.
spart_add_unit_test(test_clip_digests)
