#!/usr/bin/env bash
# Builds the wasm package (web/build.sh) and serves the page at http://127.0.0.1:PORT/
# (default 8000) until stopped with Ctrl-C. web/server.py sends the COOP/COEP headers, so the page
# is cross-origin isolated and the Live tab's worker pool shares memory with its workers.
#
#   web/serve.sh [PORT]
#   then open http://127.0.0.1:8000/  or  http://127.0.0.1:8000/?example=default&autorun=1
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-8000}
web/build.sh
echo "faithful web: open http://127.0.0.1:$port/  (example run: http://127.0.0.1:$port/?example=default&autorun=1)" >&2
exec python3 web/server.py --port "$port"
