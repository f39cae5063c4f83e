#!/usr/bin/env bash
# The whole test suite, installing what it needs. README.md's test command; .ci/run calls it.
#
# Needs: a Rust toolchain (cargo). Everything else comes from crates.io through Cargo.lock
# (the Python tests, scripts/test_python.sh, install python3-venv and PyPI packages).
# The browser test at the end (scripts/test_browser.sh) installs Chromium, node packages from
# tests/browser/package-lock.json, the wasm target and wasm-bindgen-cli.
# The golden fixtures under tests/fixtures/golden are committed; regenerating them
# (tests/fixtures/generate.py, Python + ZADU 0.5.4) is not part of the test run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's start, with the seconds since this script began (CI's 45-minute budget).
stage() { echo "== test.sh: $1 (at ${SECONDS} s)" >&2; }

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "scripts/test.sh: cargo not found; installing the Rust toolchain with rustup" >&2
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
fi

# GPU tests run on Mesa's lavapipe (software Vulkan) and llvmpipe (GL) where no GPU exists.
# Under CI=true a missing adapter fails those tests instead of skipping them.
# tests/web_server.rs runs web/server.py with python3 (under CI=true a missing python3 fails it).
pkgs=""
ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 || pkgs="mesa-vulkan-drivers libvulkan1 libegl1 libegl-mesa0 libgl1-mesa-dri"
command -v python3 >/dev/null 2>&1 || pkgs="$pkgs python3"
if [ -n "$pkgs" ]; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q $pkgs
    else
        echo "scripts/test.sh: cannot install $pkgs (not root, no sudo); GPU and server tests will skip outside CI" >&2
    fi
fi
# CI builds once from a clean clone: incremental caches would only cost disk (a CI machine's
# disk ran out on 2026-11-30) and time.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/faithful-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# Style and lints first: they fail in seconds, not after the build.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi
stage "fmt, clippy, rustdoc, feature checks"
cargo fmt --check
cargo clippy --locked --workspace --all-targets --all-features -- -D warnings
# The library's docs: a broken intra-doc link is an error (reuses clippy's dependency metadata).
RUSTDOCFLAGS="-D warnings" cargo doc --locked --no-deps -p faithful
# The library without its default features (Cargo.toml: CPU-only, then with the GPU backend).
cargo check --locked --lib --no-default-features
cargo check --locked --lib --no-default-features --features gpu

# One target dir for everything; tests build with opt-level 2 ([profile.test] in Cargo.toml).
# One test thread per binary: several wgpu devices created and dropped at once have crashed
# Mesa's lavapipe (SIGSEGV, seen twice on 2026-11-30 in gpu_parity, never with one thread).
stage "cargo test (Vulkan lavapipe for the GPU tests)"
RUST_TEST_THREADS=1 cargo test --locked --all-targets
# That build (the test profile: opt-level 2, debug assertions on) also made the CLI; the later
# stages use it and that profile instead of building the crate again (CI's time budget).
export FAITHFUL_CLI="$PWD/target/debug/faithful"
[ -x "$FAITHFUL_CLI" ] || { echo "scripts/test.sh: cargo test made no $FAITHFUL_CLI" >&2; exit 1; }
stage "doc tests and examples"
cargo test --locked --doc
# The examples (examples/, README.md "The library") on the bundled digits; cpu_vs_gpu asserts
# identical scores on the CPU and every adapter (lavapipe and llvmpipe here).
# In the test profile: they link the library that cargo test built (the dev profile would
# compile the crate again at opt-level 0).
for example in evaluate_files knn_graph many_projections progress_cancel cpu_vs_gpu; do
    cargo run --locked --quiet --profile test --example "$example" >/dev/null
done
# The GPU parity suite once more on wgpu's GL backend (the first run used Vulkan).
stage "GPU tests on GL (llvmpipe)"
RUST_TEST_THREADS=1 WGPU_BACKEND=gl cargo test --locked --test gpu_parity --test gpu_cli --test gpu_adversarial --test gpu_fast_witness --test gpu_kernels_twins --test gpu_distances_tiled --test gpu_shard --test gpu_metrics
# The browser API (wasm-bindgen tests) in headless Chromium on SwiftShader WebGPU.
stage "wasm (wasm-bindgen tests in Chromium)"
./scripts/test_wasm.sh
# The browser page (web/) end to end in headless Chromium: WebGPU and wasm CPU vs the native CLI.
stage "browser page and npm"
./scripts/test_browser.sh
# The Python package (python/): its wheel installed into target/py-venv, pytest against the
# golden fixtures, scikit-learn, ZADU and the CLI. The wheel is built in the dev profile, whose
# dependencies (and library, Cargo.toml) the cargo test stage compiled (a release build would
# compile them all again).
stage "Python"
FAITHFUL_WHEEL_PROFILE=dev ./scripts/test_python.sh
stage "done"
