#!/usr/bin/env bash
# The device run of 2026-12-04 (issue 30), on one NVIDIA H200 with the prepared binaries
# (scripts/device_check.sh --prepare, stripped, packed in .devpack/bin.tgz; Vulkan/EGL loaders
# from .gl/). Most valuable first, each step under its own time limit, every output in $OUT:
# the n = 100 000 evaluation and kNN receipt (D = 50, k = 20, parity against the CPU reference),
# the GPU test binaries (CI=true: no adapter is a failure), the CPU/GPU crossover for `auto`,
# then n = 10^6 tnc + mrre + lcmc Exact through `faithful measure` (no CPU reference there).
#   SMALL=1 docs/bench/h200_2026-12-04/run.sh   the same steps at small n on any adapter
set -u
here=docs/bench/h200_2026-12-04
OUT=${OUT:-/tmp/device_out}
# At most 8 files come back from $OUT: the outputs go to $W, packed into $OUT/run.tgz after each step.
W=/tmp/devrun
rm -rf "$W"; mkdir -p "$OUT" "$W" .devbin
tar xzf .devpack/bin.tgz -C .devbin
export FAITHFUL_BUILT_AT=${FAITHFUL_BUILT_AT:-/work/main} FAITHFUL_BIN_DIR=.devbin
source scripts/device_env.sh
cli=$(pwd)/target/release/faithful
t0=$(date +%s); say() { echo "[+$(( $(date +%s) - t0 ))s] $*" | tee -a "$W/steps.txt"; tar czf "$OUT/run.tgz" -C "$W" .; }
if [ -n "${SMALL:-}" ]; then big=3000; huge=20000; cross=500,1000; ad=(); else big=100000; huge=1000000; cross=5000,20000; ad=(--adapter "NVIDIA H200"); fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uname -a; } > "$W/machine.txt" 2>&1
"$cli" backends --json > "$W/backends.json" 2>&1
say "bench n=$big"
timeout 150 "$cli" bench --backend gpu "${ad[@]}" --sizes $big --dims 50 --k 20 --kernels evaluation,knn --repeat 3 --kernel-sets tiled --json "$W/bench_100k.json" > "$W/bench_100k.txt" 2>&1; say "rc=$?"
for t in .devbin/test-*; do
  n=$(basename "$t"); echo "=== $n" >> "$W/tests.log"
  CI=true RUST_TEST_THREADS=8 timeout 25 "$t" >> "$W/tests.log" 2>&1; say "$n rc=$?"
done
say "crossover $cross"
timeout 60 "$cli" bench --backend all "${ad[@]}" --sizes $cross --dims 50 --k 20 --kernels evaluation --repeat 3 --kernel-sets tiled --json "$W/bench_crossover.json" > "$W/bench_crossover.txt" 2>&1; say "rc=$?"
say "n=$huge"
${PY:-python3} "$here/gen.py" $huge /tmp && say "data written"
s=$(date +%s.%N); timeout ${HUGE_LIMIT:-110} "$cli" measure --high /tmp/X.npy --low /tmp/Y.npy --backend gpu "${ad[@]}" --spec tnc:k=20 --spec mrre:k=20 --spec lcmc:k=20 --json > "$W/n1e6.json" 2> "$W/n1e6.err"; rc=$?; say "rc=$rc from $s to $(date +%s.%N)"
say done
