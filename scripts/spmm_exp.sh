set -u
SPART_CUDA_TESTS=test_cuda_product SPART_CUDA_BENCH=none SPART_SANITIZE_TESTS=test_cuda_product SPART_SANITIZER_TIMEOUT=1 bash scripts/cuda_device_run.sh > $OUT/base_run.log 2>&1
grep -E "Test +#|tests passed|FAILED|error" $OUT/base_run.log | head
cd /tmp/spart-cuda-build && cmake --build . --target bench_cuda_product -j16 > /dev/null 2>&1
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for v in "14 1" "12 1" "11 1" "22 1" "21 1" "11 0" "12 0"; do
  set -- $v
  echo "== shape $1 tiles $2"
  SPART_EXP_SHAPE=$1 SPART_EXP_TILES=$2 SPART_REQUIRE_GPU=1 timeout 60 tests/test_cuda_product 2>&1 | grep -E "PASSED|FAILED" | head -3
  SPART_EXP_SHAPE=$1 SPART_EXP_TILES=$2 timeout 100 tests/bench_cuda_product --ctis > $OUT/ctis_$1_$2.log 2>&1
  grep -E "^CTIS|spart, eight|ALG1, eight|ALG3, eight" $OUT/ctis_$1_$2.log | sed -E 's/CTIS ([a-z]), (forward|its transpose).*/\1 \2/; s/ +\(.*//; s/  +/ /g' | paste - - - - 
done
echo "== default bench, tiles on"
timeout 150 tests/bench_cuda_product > $OUT/default_tiles.log 2>&1; grep -E "^[a-zA-Z]|eight" $OUT/default_tiles.log | head -40
