#!/usr/bin/env bash
# The final device run: receipt of the current kernels, then the hang diagnosis, then the tests.
set -u
export FAITHFUL_BUILT_AT=/work/wt-tiled FAITHFUL_BIN_DIR=.devbin
source scripts/device_env.sh
cli=$(pwd)/target/release/faithful
t0=$(date +%s); say() { echo "[+$(( $(date +%s) - t0 ))s] $*"; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uname -a; } > $OUT/machine.txt 2>&1
say bench-100k
timeout 120 $cli bench --backend gpu --adapter "NVIDIA H200" --sizes 100000 --dims 50 --k 20 --kernels evaluation,knn,ranks,distances --repeat 3 --kernel-sets tiled --json $OUT/bench_100k.json > $OUT/bench_100k.txt 2>&1; say "rc=$?"
say bench-crossover
timeout 40 $cli bench --backend all --adapter "NVIDIA H200" --sizes 5000,20000 --dims 50 --k 20 --kernels evaluation --repeat 2 --kernel-sets tiled,classic --json $OUT/bench_crossover.json > $OUT/bench_crossover.txt 2>&1; say "rc=$?"
# The hang of 2026-11-30's first run: one test, one thread, output as it happens.
say diagnose
CI=true timeout 20 .devbin/test-gpu_parity bound_holds_on_every_pair --exact --test-threads=1 --nocapture > $OUT/diagnose.log 2>&1 &
pid=$!
sleep 15
if kill -0 $pid 2>/dev/null; then
  tp=$(pgrep -f "test-gpu_parity bound_holds" | head -1)
  echo "STILL RUNNING after 15 s; backtrace of pid $tp:" >> $OUT/diagnose.log
  timeout 20 cuda-gdb -p "$tp" -batch -ex "thread apply all bt 25" >> $OUT/diagnose.log 2>&1
  nvidia-smi --query-gpu=utilization.gpu --format=csv >> $OUT/diagnose.log 2>&1
fi
wait $pid; say "diagnose rc=$?"
for t in .devbin/test-*; do
  n=$(basename $t); echo "=== $n" >> $OUT/tests.log
  CI=true RUST_TEST_THREADS=8 timeout 25 $t >> $OUT/tests.log 2>&1; echo "$n rc=$?" | tee -a $OUT/tests.txt
done
say done
