#!/usr/bin/env bash
# faithful-dr against SickleJS in the same Node (benches/sickle_compare.mjs): builds SickleJS
# from a checkout of github.com/saehm/SickleJS (npm install + its rollup build, in that checkout;
# nothing of it is copied here) and the faithful-dr package (scripts/npm_pack.sh, in a temp
# folder), then runs the comparison and prints the receipt JSON.
#
#   benches/sickle_compare.sh SICKLE_CHECKOUT [--sizes 2000,4000,8000] [--dim 50] [--workers 2] [--repeat 3]
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1/package.json" ]; then
    echo "usage: benches/sickle_compare.sh SICKLE_CHECKOUT [options]  (a clone of github.com/saehm/SickleJS)" >&2
    exit 2
fi
sickle=$(cd "$1" && pwd)
shift
cd "$(dirname "$0")/.."
if [ ! -f "$sickle/dist/sickle.js" ]; then
    echo "benches/sickle_compare.sh: building SickleJS in $sickle" >&2
    (cd "$sickle" && npm install --no-audit --no-fund --loglevel=error && npx rollup --config >&2)
fi
pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT
tarball=$(scripts/npm_pack.sh "$pkg")
tar xzf "$tarball" -C "$pkg"
node benches/sickle_compare.mjs --sickle "$sickle" --faithful "$pkg/package" "$@"
