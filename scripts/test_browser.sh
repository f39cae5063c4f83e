#!/usr/bin/env bash
# Browser end-to-end test of web/ (scripts/test.sh calls it last): builds the wasm package and
# the native CLI, serves web/ on a free loopback port and runs tests/browser (node:test +
# playwright-core) in headless Debian Chromium: the bundled example on WebGPU (SwiftShader) and
# on the wasm CPU, both bit-identical to `faithful measure --local --json --backend cpu`, bad-file
# messages, and a screenshot in out/web-screenshot.png; then the npm package faithful-dr
# (scripts/npm_pack.sh) installed into a throw-away app (tests/browser/npm.test.mjs); then every
# distortion view (?view=...) on both backends and a `faithful report` opened from file://
# against the CLI (tests/browser/views.test.mjs, screenshots in out/views/).
#
# Installs what it needs: chromium (apt), node/npm (apt, if missing), the npm packages pinned by
# tests/browser/package-lock.json (never a browser download), the wasm target and wasm-bindgen-cli.
# Under CI=true a missing browser or WebGPU adapter fails; otherwise a missing browser skips loudly.
#
# Target dirs: $CARGO_TARGET_DIR (native CLI; default target/), $FAITHFUL_WASM_TARGET_DIR (wasm;
# default the same).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="$HOME/.cargo/bin:$PATH"
ci=false
case "${CI:-}" in true | TRUE | 1) ci=true ;; esac
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

apt_install() {
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
    else
        return 1
    fi
}

need=()
[ -x "$CHROMIUM" ] || need+=(chromium chromium-driver)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
    echo "scripts/test_browser.sh: installing ${need[*]}" >&2
    apt_install "${need[@]}" || echo "scripts/test_browser.sh: could not install ${need[*]} (not root, no sudo)" >&2
fi
if [ ! -x "$CHROMIUM" ] || ! command -v node >/dev/null 2>&1; then
    msg="no Chromium at $CHROMIUM or no node: the browser test cannot run"
    if $ci; then
        echo "scripts/test_browser.sh: FAIL: $msg (CI=true)" >&2
        exit 1
    fi
    echo "" >&2
    echo "######## scripts/test_browser.sh: SKIPPED: $msg ########" >&2
    echo "" >&2
    exit 0
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
    echo "scripts/test_browser.sh: node $(node --version) is too old: playwright-core needs node >= 20" >&2
    exit 1
fi
(cd tests/browser && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)

# The page's wasm is built with the tested npm package's features (test-trap, below), so that
# scripts/npm_pack.sh finds it built (one wasm build of the crate, not two).
FAITHFUL_WASM_FEATURES=test-trap web/build.sh
# The native CLI the results are compared with: $FAITHFUL_CLI when given (scripts/test.sh passes
# the one its cargo test build made), else a release build.
if [ -n "${FAITHFUL_CLI:-}" ]; then
    cli=$FAITHFUL_CLI
else
    target_dir=${CARGO_TARGET_DIR:-target}
    cargo build --locked --release --bin faithful
    cli="$target_dir/release/faithful"
fi
case "$cli" in /*) ;; *) cli="$root/$cli" ;; esac
[ -x "$cli" ] || { echo "scripts/test_browser.sh: no CLI at $cli" >&2; exit 1; }

export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/faithful-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
mkdir -p out

port_file=$(mktemp)
rm -f "$port_file"
python3 web/server.py --port 0 --port-file "$port_file" --quiet &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 100); do
    [ -s "$port_file" ] && break
    kill -0 "$server" 2>/dev/null || { echo "scripts/test_browser.sh: the server did not start" >&2; exit 1; }
    sleep 0.1
done
port=$(cat "$port_file")

# The npm package: packed (the wasm is built above), installed into a throw-away app, checked
# in the browser and in Node (tests/browser/npm.test.mjs).
npm_dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -f "$port_file"; rm -rf "$npm_dir"' EXIT
# The tested package exports testTrap() (feature test-trap): the worker client's restart is
# tested on a real wasm trap.
tarball=$(FAITHFUL_WASM_FEATURES=test-trap scripts/npm_pack.sh "$npm_dir")

FAITHFUL_URL="http://127.0.0.1:$port" FAITHFUL_CLI="$cli" FAITHFUL_OUT="$root/out" CHROMIUM="$CHROMIUM" \
    FAITHFUL_NPM_TARBALL="$tarball" \
    node --test --test-reporter=spec --test-concurrency=1 tests/browser/web.test.mjs tests/browser/npm.test.mjs tests/browser/views.test.mjs
