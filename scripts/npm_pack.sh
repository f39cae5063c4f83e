#!/usr/bin/env bash
# Builds the npm package faithful-dr and writes its `npm pack` tarball into DIR:
#
#   scripts/npm_pack.sh DIR      →  DIR/faithful-dr-<crate version>.tgz (its path on stdout)
#
# The package: the wasm-bindgen --target web build (web/build.sh: faithful.js, faithful.d.ts with
# the types written in src/wasm/types.rs, faithful_bg.wasm), the entry (npm/index.js, index.d.ts:
# Session and evaluate with `workers`, the module they share in npm/module.js, the pool in npm/pool.js
# and npm/pool-host.js), the Node entry
# (npm/node.js), the worker client (npm/worker.js, npm/worker-host.js, npm/worker.d.ts), README and package.json
# (version = the crate's). init() finds the .wasm through import.meta.url, so neither a plain
# ES-module app nor a bundler needs a copy step.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
    echo "usage: scripts/npm_pack.sh DIR" >&2
    exit 2
fi
mkdir -p "$1"
dest=$(cd "$1" && pwd)
command -v npm >/dev/null 2>&1 || { echo "scripts/npm_pack.sh: npm is not installed" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
web/build.sh "$stage"
rm -f "$stage/.gitignore" "$stage/package.json"
# wasm-bindgen types the raw wasm exports (InitOutput) with `any`; the package's types have none.
sed -E -i '/^ *(readonly|export const) [A-Za-z0-9_]+: \(/ s/\bany\b/unknown/g' "$stage/faithful.d.ts" "$stage/faithful_bg.wasm.d.ts"
cp npm/node.js npm/README.md "$stage/" # web/build.sh copied the entry, the pool and the worker client

version=$(cargo metadata --no-deps --format-version 1 --locked | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () =>
    console.log(JSON.parse(s).packages.find((p) => p.name === "faithful").version));')
VERSION="$version" node -e '
  const pkg = {
    name: "faithful-dr",
    version: process.env.VERSION,
    description: "Exact distortion measures of dimensionality reductions (trustworthiness, continuity, MRRE, LCMC, ...) on WebGPU and the wasm CPU",
    type: "module",
    main: "./index.js",
    types: "./index.d.ts",
    exports: {
      ".": { types: "./index.d.ts", node: "./node.js", import: "./index.js", default: "./index.js" },
      "./worker": { types: "./worker.d.ts", import: "./worker.js", default: "./worker.js" },
      "./faithful_bg.wasm": "./faithful_bg.wasm",
      "./package.json": "./package.json",
    },
    files: ["index.js", "index.d.ts", "faithful.js", "faithful.d.ts", "faithful_bg.wasm", "faithful_bg.wasm.d.ts", "node.js", "module.js", "pool.js", "pool-host.js", "worker.js", "worker-host.js", "worker.d.ts", "README.md"],
    sideEffects: false,
    keywords: ["dimensionality-reduction", "t-sne", "umap", "trustworthiness", "webgpu", "wasm"],
  };
  require("fs").writeFileSync(process.argv[1] + "/package.json", JSON.stringify(pkg, null, 2) + "\n");
' "$stage"
tarball=$(cd "$stage" && npm pack --silent --pack-destination "$dest" | tail -1)
echo "scripts/npm_pack.sh: wrote $dest/$tarball" >&2
echo "$dest/$tarball"
