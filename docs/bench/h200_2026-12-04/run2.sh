#!/usr/bin/env bash
# The second device run of 2026-12-04 (issue 30): the same n = 100 000 evaluation (D = 50,
# k = 20, tnc + mrre + lcmc Exact, parity against the CPU reference) for three builds, side by
# side on one machine: `before` (run.sh's build, cc4808d); `rank64`, the refill of a freed set
# before the host refines (src/gpu/pass.rs); `current`, that and rank_counts at 256 threads per
# row (RANK_WG), knn_candidates loading four points per trip and distances_tiled's 8 × 4
# register blocks; the last two with 2 GiB (the
# default) and 4 GiB of resident distances (--gpu-resident); and `current` with the undecided
# pairs' f64 sums on the device (--gpu-refine device, exact_sqdist.wgsl: item 4's "measure
# which wins", host against device refinement, the same parity check).
# Then the GPU test binaries of this build (a crash is rerun on one thread, with Vulkan only,
# and under cuda-gdb for its stack), the crossover for `auto`, and n = 10^6 under a limit (a
# build from 83311dd on takes the streamed plan there on its own: 1 073-row blocks × four
# tiles of 250 000 points; its run report's gpu.streamed says so).
# Not run: no machine was lent again on 2026-12-04. To run it, pack into .devpack/bin.tgz the
# stripped `scripts/device_check.sh --prepare` binaries of this build, `faithful-before` (the
# CLI built at cc4808d), `faithful-rank64` (this build with shaders::RANK_WG = 64) and
# `sym-gpu_cli` (the gpu_cli test binary with its symbols: strip --strip-debug); carry .gl and
# .devpack (under 64 MiB with the tree: gzip -9 or leave sym-* out).
set -u
here=docs/bench/h200_2026-12-04
OUT=${OUT:-/tmp/device_out}
W=/tmp/devrun
rm -rf "$W"; mkdir -p "$OUT" "$W" .devbin
tar xzf .devpack/bin.tgz -C .devbin
export FAITHFUL_BUILT_AT=${FAITHFUL_BUILT_AT:-/work/main} FAITHFUL_BIN_DIR=.devbin
source scripts/device_env.sh
cli=$(pwd)/target/release/faithful
t0=$(date +%s); say() { echo "[+$(( $(date +%s) - t0 ))s] $*" | tee -a "$W/steps.txt"; tar czf "$OUT/run.tgz" -C "$W" .; }
if [ -n "${SMALL:-}" ]; then big=3000; huge=20000; cross=500,1000; ad=(); else big=100000; huge=1000000; cross=5000,20000; ad=(--adapter "NVIDIA H200"); fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uname -a; } > "$W/machine.txt" 2>&1
bench() { # tag binary [extra args]
  local tag=$1 bin=$2; shift 2
  say "bench $tag"
  timeout 60 "$bin" bench --backend gpu "${ad[@]}" --sizes $big --dims 50 --k 20 --kernels evaluation --repeat 3 --kernel-sets tiled "$@" --json "$W/ab_$tag.json" > "$W/ab_$tag.txt" 2>&1; say "rc=$?"
}
bench before .devbin/faithful-before
bench rank64_2g .devbin/faithful-rank64
bench rank64_4g .devbin/faithful-rank64 --gpu-resident 4G
bench current_2g "$cli"
bench current_4g "$cli" --gpu-resident 4G
bench device_2g "$cli" --gpu-refine device
tl=$(( $(date +%s) + 200 ))
for t in .devbin/test-*; do
  n=$(basename "$t"); left=$(( tl - $(date +%s) )); [ $left -lt 15 ] && { say "$n not run (test time spent)"; continue; }
  lim=$(( left < 45 ? left : 45 ))
  echo "=== $n" >> "$W/tests.log"
  CI=true RUST_TEST_THREADS=8 timeout $lim "$t" >> "$W/tests.log" 2>&1; rc=$?; say "$n rc=$rc"
  if [ $rc = 139 ] || [ $rc = 134 ]; then
    echo "=== $n one thread" >> "$W/tests.log"
    CI=true timeout 40 "$t" --test-threads=1 >> "$W/tests.log" 2>&1; say "$n one thread rc=$?"
    echo "=== $n WGPU_BACKEND=vulkan" >> "$W/tests.log"
    CI=true WGPU_BACKEND=vulkan RUST_TEST_THREADS=8 timeout 40 "$t" >> "$W/tests.log" 2>&1; say "$n vulkan only rc=$?"
    s=.devbin/sym-${n#test-}
    if [ -x "$s" ] && command -v cuda-gdb >/dev/null; then
      CI=true RUST_TEST_THREADS=8 timeout 60 cuda-gdb -q -batch -ex run -ex bt -ex "thread apply all bt 12" --args "$s" > "$W/gdb_$n.txt" 2>&1; say "$n gdb rc=$?"
    fi
  fi
done
say "crossover $cross"
timeout 40 "$cli" bench --backend all "${ad[@]}" --sizes $cross --dims 50 --k 20 --kernels evaluation --repeat 3 --kernel-sets tiled --json "$W/bench_crossover.json" > "$W/bench_crossover.txt" 2>&1; say "rc=$?"
say "n=$huge"
${PY:-python3} "$here/gen.py" $huge /tmp && say "data written"
s=$(date +%s.%N); timeout ${HUGE_LIMIT:-120} "$cli" measure --high /tmp/X.npy --low /tmp/Y.npy --backend gpu "${ad[@]}" --spec tnc:k=20 --spec mrre:k=20 --spec lcmc:k=20 --json > "$W/n1e6.json" 2> "$W/n1e6.err"; rc=$?; say "rc=$rc from $s to $(date +%s.%N)"
say done
