#!/usr/bin/env bash
# The hardware GPU check (issue 10 / 18): on a machine with an NVIDIA GPU and this repository,
# run the GPU parity and adversarial tests on the hardware adapter, then `faithful bench
# --backend all` at n = 10 000, 50 000 and 100 000 (D = 50, k = 20), and write the receipt
# (JSON + markdown) into OUT_DIR. Budget: under 8 minutes on a 16-core host.
#
#   scripts/device_check.sh OUT_DIR              build (cargo, or rustup if none) and run
#   scripts/device_check.sh --prepare BIN_DIR    build here and copy the binaries into BIN_DIR,
#                                                for a GPU machine with no toolchain or network
#   FAITHFUL_BIN_DIR=BIN_DIR scripts/device_check.sh OUT_DIR   run the prepared binaries
#
#   DEVICE_CHECK_SMOKE=1 ...                     small sizes, software adapters allowed: tests the
#                                                script itself on a machine with no GPU
#
# Every step's output goes to OUT_DIR/log.txt; a failing parity test fails the script (exit 1),
# but the bench still runs so the receipt says what the adapter did.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$HOME/.cargo/bin:$PATH"

# The GPU test binaries: every tests/gpu_*.rs (parity, adversarial corpus, CLI on the GPU).
gpu_tests() { for f in tests/gpu_*.rs; do basename "$f" .rs; done; }

build() {
    if ! command -v cargo >/dev/null 2>&1; then
        echo "device_check: no cargo; installing the Rust toolchain with rustup" >&2
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal || {
            echo "device_check: no cargo and rustup failed: prepare binaries elsewhere (--prepare) and set FAITHFUL_BIN_DIR" >&2
            exit 2
        }
    fi
    cargo build --locked --release --bin faithful || exit 2
    local args=()
    for t in $(gpu_tests); do args+=(--test "$t"); done
    # Test executables, one per GPU test file, from cargo's JSON messages.
    cargo test --locked --release "${args[@]}" --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])
' >target/device_tests.txt || exit 2
}

if [ "${1:-}" = "--prepare" ]; then
    dir=${2:?usage: scripts/device_check.sh --prepare BIN_DIR}
    build
    mkdir -p "$dir"
    cp target/release/faithful "$dir/"
    while read -r name exe; do cp "$exe" "$dir/test-$name"; done <target/device_tests.txt
    echo "device_check: binaries in $dir: $(ls "$dir" | tr '\n' ' ')"
    exit 0
fi

out=${1:?usage: scripts/device_check.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log="$out/log.txt"
: >"$log"
start=$(date +%s)
say() { echo "[device_check +$(($(date +%s) - start))s] $*" | tee -a "$log" >&2; }

if [ -n "${FAITHFUL_BIN_DIR:-}" ]; then
    bin=$(cd "$FAITHFUL_BIN_DIR" && pwd)
    cli="$bin/faithful"
    tests=()
    for t in "$bin"/test-*; do tests+=("$(basename "$t" | sed 's/^test-//') $t"); done
else
    say "building (release)"
    build >>"$log" 2>&1
    cli="$root/target/release/faithful"
    mapfile -t tests <target/device_tests.txt
fi

# wgpu needs the Vulkan loader; the NVIDIA driver brings its own ICD.
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1'; then
    say "installing the Vulkan loader (libvulkan1)"
    { [ "$(id -u)" = 0 ] && apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libvulkan1; } >>"$log" 2>&1 ||
        say "could not install libvulkan1: wgpu may see no Vulkan adapter"
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/faithful-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

say "machine"
{
    uname -a
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    else
        echo "no nvidia-smi"
    fi
} >"$out/machine.txt" 2>&1
"$cli" backends --json >"$out/backends.json" 2>>"$log"
"$cli" backends >>"$log" 2>&1
smoke=${DEVICE_CHECK_SMOKE:-}
if [ -z "$smoke" ] && ! grep -q '"hardware": *true' "$out/backends.json"; then
    say "FAIL: wgpu sees no hardware adapter (see backends.json); Vulkan loader and the NVIDIA ICD are needed"
    exit 1
fi

# Parity on the hardware adapter: CI=true turns a missing adapter into a failure, not a skip.
status=0
for entry in "${tests[@]}"; do
    name=${entry%% *}
    exe=${entry#* }
    say "test $name"
    if CI=true RUST_TEST_THREADS=4 "$exe" >>"$log" 2>&1; then
        echo "$name: passed" >>"$out/tests.txt"
    else
        echo "$name: FAILED" >>"$out/tests.txt"
        status=1
    fi
done

# The bench: 10k and 50k with 2 warm runs; 100k with 1 (the CPU reference dominates there).
# `pairs` is served by the CPU on every backend, so it is left out at 100k.
bench() {
    local tag=$1
    shift
    say "bench $tag: $*"
    "$cli" bench --backend all --dims 50 --k 20 "$@" --json "$out/bench_$tag.json" >"$out/bench_$tag.txt" 2>>"$log" || status=1
}
if [ -n "$smoke" ]; then
    bench small --sizes 300,600 --repeat 1
    bench large --sizes 900 --repeat 1 --kernels distances,knn,ranks,evaluation
else
    bench small --sizes 10000,50000 --repeat 2
    bench large --sizes 100000 --repeat 1 --kernels distances,knn,ranks,evaluation
fi

{
    echo "# faithful device check, $(date -u +%Y-%m-%d)"
    echo
    echo "Command: \`scripts/device_check.sh\` (commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown))."
    echo "Took $(($(date +%s) - start)) s."
    echo
    echo '## Machine'
    echo
    echo '```'
    cat "$out/machine.txt"
    echo '```'
    echo
    echo '## GPU tests on the hardware adapter (CI=true)'
    echo
    echo '```'
    cat "$out/tests.txt"
    echo '```'
    for tag in small large; do
        echo
        echo "## Bench ($tag): [bench_$tag.json](bench_$tag.json)"
        echo
        cat "$out/bench_$tag.txt"
    done
} >"$out/receipt.md"
say "done: $out/receipt.md (status $status)"
exit $status
