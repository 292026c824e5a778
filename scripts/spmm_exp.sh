set -u
SPART_CUDA_TESTS=test_cuda_product SPART_CUDA_BENCH=none SPART_SANITIZE_TESTS=test_cuda_product SPART_SANITIZER_TIMEOUT=1 bash scripts/cuda_device_run.sh > $OUT/base_run.log 2>&1
tail -5 $OUT/base_run.log
cd /tmp/spart-cuda-build && cmake --build . --target bench_cuda_product -j16 > /dev/null 2>&1
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for v in "14 8" "22 8" "21 8" "41 8" "12 8" "11 8" "14 4" "22 4" "41 4" "12 4"; do
  set -- $v
  echo "== shape $1 tile $2"
  SPART_EXP_SHAPE=$1 SPART_EXP_TILE=$2 SPART_REQUIRE_GPU=1 timeout 60 tests/test_cuda_product 2>&1 | grep -E "PASSED|FAILED" | head -3
  SPART_EXP_SHAPE=$1 SPART_EXP_TILE=$2 timeout 100 tests/bench_cuda_product --ctis > $OUT/ctis_$1_$2.log 2>&1
  grep -E "^CTIS|spart, eight|ALG3, eight" $OUT/ctis_$1_$2.log | sed -E 's/CTIS ([a-z]), (forward|its transpose).*/\1 \2/' | paste - - - 
done
