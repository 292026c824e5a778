# The segmented softmax (spart/softmax.h): its unit test, its cuda test
# (host = device by digest; exit 77 without a visible device unless
# SPART_REQUIRE_GPU=1) and its benchmark (label bench).
spart_add_unit_test(test_softmax)
