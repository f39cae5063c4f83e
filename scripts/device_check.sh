#!/usr/bin/env bash
# The hardware GPU check (issues 10 / 18 / 30): on a machine with an NVIDIA GPU and this repository,
# run the GPU parity and adversarial tests on the hardware adapter (each test binary under a
# time limit; a binary that hangs is rerun one test at a time to name the test, with a stack
# dump where gdb exists; a crashed binary is rerun on one test thread and with Vulkan only),
# then `faithful bench` with the tiled kernel set (DEVICE_CHECK_SETS=tiled,classic adds the
# classic one side by side, minutes more of device time): n = 100 000 (D = 50, k = 20; one
# CPU reference per kernel, `--backend gpu`) and a
# CPU/GPU crossover at n = 5 000 and 20 000; write the receipt (JSON + markdown, with where the
# GPU time went per kernel and phase, and the work per kernel: dispatches, witness-counted
# comparisons and comparisons per pair, bytes read back, host f64 distances, rows recomputed)
# into OUT_DIR. Issue 30's targets to compare against (the model's expectation, docs/kernels.md):
# the `large` evaluation row (n = 100 000, D = 50, k = 20, tnc + mrre + lcmc Exact) ≤ 0.25 s
# warm; one distances_tiled pass per space and row block; `auto`'s threshold
# (backend::AUTO_MIN_PAIRS) re-derived from the crossover rows. `backends.json` says per adapter
# whether a device could be started on it ("usable"). Budget: under 5 minutes on a 16-core host.
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
    # Stripped, the ten binaries are about 90 MB instead of 800 (a device call carries 64 MiB
    # with the tree: pack them, e.g. tar czf, as docs/bench/h200_2026-12-04/run.sh did).
    if command -v strip >/dev/null 2>&1; then
        for f in "$dir"/*; do strip "$f"; done
    fi
    echo "device_check: binaries in $dir ($(du -sh "$dir" | cut -f1)): $(ls "$dir" | tr '\n' ' ')"
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
# Each binary gets TEST_LIMIT seconds; on a timeout it is rerun one test at a time (each test
# named in the log, 20 s each, until 110 s have passed), and a hung process's threads are dumped
# (gdb) before it is killed. Worst case: 120 s of tests (each binary at most 40 s), then the
# bench's 140 + 45 s: under 5 minutes.
status=0
limit=${TEST_LIMIT:-40}
dump() { # pid file: what every thread of pid (and its children) waits on; stacks if gdb is there
    local p t
    for p in "$1" $(pgrep -P "$1" 2>/dev/null); do
        for t in /proc/"$p"/task/*; do
            echo "  task ${t##*/} $(cat "$t/comm" 2>/dev/null) state=$(awk '/^State/{print $2}' "$t/status" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)" >>"$2"
        done
        if command -v gdb >/dev/null 2>&1; then
            timeout 20 gdb -p "$p" -batch -ex "thread apply all bt 12" >>"$2" 2>&1 || true
        else
            echo "  (no gdb: no user stacks)" >>"$2"
        fi
    done
}
run_limited() { # seconds log cmd...: runs cmd, dumps its stacks and kills it after the limit
    local secs=$1 logf=$2
    shift 2
    env CI=true "$@" >>"$logf" 2>&1 &
    local pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt "$secs" ]; do
        sleep 1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "TIMEOUT after ${secs}s; thread stacks:" >>"$logf"
        dump "$pid" "$logf"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        return 124
    fi
    wait "$pid"
}
for entry in "${tests[@]}"; do
    name=${entry%% *}
    exe=${entry#* }
    left=$((120 - ($(date +%s) - start)))
    if [ "$left" -lt 10 ]; then
        echo "$name: not run (the test phase's 120 s are spent)" >>"$out/tests.txt"
        status=1
        continue
    fi
    say "test $name"
    echo "=== $name" >>"$log"
    run_limited "$((left < limit ? left : limit))" "$log" env RUST_TEST_THREADS=4 "$exe"
    rc=$?
    if [ $rc = 0 ]; then
        echo "$name: passed" >>"$out/tests.txt"
        continue
    fi
    status=1
    if [ $rc != 124 ]; then
        echo "$name: FAILED (exit $rc)" >>"$out/tests.txt"
        # A crash (SIGSEGV 139, abort 134; the H200 of 2026-12-04 with 4-8 test threads): which
        # condition brings it, one test thread or another graphics API left out?
        if [ $rc = 139 ] || [ $rc = 134 ]; then
            echo "=== $name (one test thread)" >>"$log"
            run_limited 30 "$log" env RUST_TEST_THREADS=1 "$exe"
            echo "  one test thread: exit $?" >>"$out/tests.txt"
            echo "=== $name (WGPU_BACKEND=vulkan)" >>"$log"
            run_limited 30 "$log" env RUST_TEST_THREADS=4 WGPU_BACKEND=vulkan "$exe"
            echo "  Vulkan only: exit $?" >>"$out/tests.txt"
        fi
        continue
    fi
    echo "$name: TIMEOUT after ${limit}s; rerun one test at a time:" >>"$out/tests.txt"
    say "test $name timed out; one test at a time"
    for t in $("$exe" --list 2>/dev/null | sed -n 's/: test$//p'); do
        [ $(($(date +%s) - start)) -gt 110 ] && { echo "  (out of time for reruns)" >>"$out/tests.txt"; break; }
        echo "=== $name $t (alone)" >>"$log"
        run_limited 20 "$log" env RUST_TEST_THREADS=1 "$exe" --exact "$t" --nocapture
        r=$?
        echo "  $t: $([ $r = 0 ] && echo passed || { [ $r = 124 ] && echo TIMEOUT || echo "FAILED (exit $r)"; })" >>"$out/tests.txt"
    done
done

# The bench: the tiled kernel set (and the classic one beside it with DEVICE_CHECK_SETS) on the
# hardware adapter.
# n = 100 000: one CPU reference per kernel (`--backend gpu`; it dominates, tens of seconds),
# 2 warm runs; the crossover (evaluation only) runs the CPU as its own rows.
bench() {
    local tag=$1 secs=$2
    shift 2
    say "bench $tag: $*"
    timeout "$secs" "$cli" bench --dims 50 --k 20 --kernel-sets "${DEVICE_CHECK_SETS:-tiled}" "$@" --json "$out/bench_$tag.json" \
        >"$out/bench_$tag.txt" 2>>"$log" || { status=1; say "bench $tag failed or ran out of time (exit $?)"; }
}
gpu_filter=()
[ -z "$smoke" ] && gpu_filter=(--adapter "${DEVICE_CHECK_ADAPTER:-nvidia}")
if [ -n "$smoke" ]; then
    bench large 300 --backend gpu --sizes 900 --repeat 1 --kernels distances,knn,ranks,evaluation
    bench crossover 300 --backend all --sizes 300,600 --repeat 1 --kernels evaluation
else
    bench large 140 --backend gpu "${gpu_filter[@]}" --sizes 100000 --repeat 2 --kernels distances,knn,ranks,evaluation
    bench crossover 45 --backend all "${gpu_filter[@]}" --sizes 5000,20000 --repeat 2 --kernels evaluation
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
    for tag in large crossover; do
        echo
        echo "## Bench ($tag): [bench_$tag.json](bench_$tag.json)"
        echo
        cat "$out/bench_$tag.txt"
    done
} >"$out/receipt.md"
say "done: $out/receipt.md (status $status)"
exit $status
