#!/usr/bin/env bash
# Builds the wasm package the page loads: web/pkg/faithful.js + faithful_bg.wasm
# (`web/build.sh DIR` writes them into DIR instead: scripts/npm_pack.sh does).
# Installs what it needs: the wasm32-unknown-unknown target and wasm-bindgen-cli at the version
# Cargo.lock pins (the CLI and the crate must match exactly).
#
# Target dir: $FAITHFUL_WASM_TARGET_DIR, else $CARGO_TARGET_DIR, else target/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/[" ]/, ""); sub(/^version=/, ""); print; exit }' Cargo.lock)
if [ -z "$want" ]; then
    echo "web/build.sh: no wasm-bindgen in Cargo.lock" >&2
    exit 1
fi
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
    echo "web/build.sh: installing wasm-bindgen-cli $want (found: ${have:-none})" >&2
    cargo install wasm-bindgen-cli --version "$want"
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi

target_dir=${FAITHFUL_WASM_TARGET_DIR:-${CARGO_TARGET_DIR:-target}}
# The page needs the GPU backend and the bundled data, not the command line (Cargo.toml features).
# $FAITHFUL_WASM_FEATURES adds features (tests: test-trap).
features=gpu,example-data${FAITHFUL_WASM_FEATURES:+,$FAITHFUL_WASM_FEATURES}
CARGO_TARGET_DIR="$target_dir" cargo rustc --locked --lib --release --target wasm32-unknown-unknown --no-default-features --features "$features" --crate-type cdylib
out_dir=${1:-web/pkg}
wasm-bindgen --target web --out-dir "$out_dir" "$target_dir/wasm32-unknown-unknown/release/faithful.wasm"
# The package's entry with its worker pool (index.js, pool.js, pool-host.js) and its worker client
# (faithful-dr/worker): the Live tab scores through them.
cp npm/index.js npm/index.d.ts npm/module.js npm/pool.js npm/pool-host.js npm/worker.js npm/worker-host.js npm/worker.d.ts "$out_dir/"
# The page's own npm dependencies (umap-js for the Live tab), pinned by web/package-lock.json.
if [ "$out_dir" = web/pkg ] && [ ! -f web/node_modules/umap-js/lib/umap-js.min.js ]; then
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "web/build.sh: built $out_dir ($(du -h "$out_dir/faithful_bg.wasm" | cut -f1) wasm)" >&2
