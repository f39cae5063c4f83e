#!/usr/bin/env bash
# wasm-bindgen tests of the browser API (tests/wasm_api.rs) in headless Debian Chromium with
# SwiftShader WebGPU (webdriver.json), installing what they need. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/wasm_env.sh
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=300
# The browser needs the GPU backend and the bundled data, not the command line (Cargo.toml features).
cargo test --locked --release --target wasm32-unknown-unknown --no-default-features --features gpu,example-data --test wasm_api
