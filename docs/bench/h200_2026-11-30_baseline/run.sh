#!/usr/bin/env bash
# One-off baseline on the device: current kernels, before tiling. Output in $OUT.
set -u
root=$(pwd)
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -e /work/main ] || { mkdir -p /work; ln -s "$root" /work/main; }
mkdir -p target/release && cp .devbin/faithful target/release/faithful
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
if [ -e /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json ]; then
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p $XDG_RUNTIME_DIR; chmod 700 $XDG_RUNTIME_DIR
cli=$root/target/release/faithful
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uname -a; } > $OUT/machine.txt 2>&1
$cli backends --json > $OUT/backends.json 2>&1; $cli backends 2>&1 | head -20
echo "== bench crossover"; date +%s
timeout 150 $cli bench --backend all --adapter nvidia --sizes 2000,5000,10000,20000 --dims 50 --k 20 --kernels evaluation,knn --repeat 3 --json $OUT/bench_crossover.json 2>&1 | tee $OUT/bench_crossover.txt
echo "== bench 100k"; date +%s
timeout 200 $cli bench --backend gpu --adapter nvidia --sizes 100000 --dims 50 --k 20 --kernels knn,ranks,evaluation --repeat 3 --json $OUT/bench_100k.json 2>&1 | tee $OUT/bench_100k.txt
echo "== tests"; date +%s
for t in .devbin/test-*; do
  n=$(basename $t)
  echo "=== $n" >> $OUT/tests.log
  if CI=true RUST_TEST_THREADS=8 timeout 100 $t >> $OUT/tests.log 2>&1; then echo "$n passed"; else echo "$n FAILED rc=$?"; fi
done | tee $OUT/tests.txt
date +%s
