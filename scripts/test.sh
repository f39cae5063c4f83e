#!/usr/bin/env bash
# The whole test suite, installing what it needs. README.md's test command; .ci/run calls it.
#
# Needs: a Rust toolchain (cargo). Everything else comes from crates.io through Cargo.lock.
# The golden fixtures under tests/fixtures/golden are committed; regenerating them
# (tests/fixtures/generate.py, Python + ZADU 0.5.4) is not part of the test run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "scripts/test.sh: cargo not found; installing the Rust toolchain with rustup" >&2
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
fi

# One target dir for everything; tests build with opt-level 2 ([profile.test] in Cargo.toml).
cargo test --locked --all-targets
cargo test --locked --doc
