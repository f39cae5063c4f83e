#!/usr/bin/env bash
# The Python package (python/, `faithful-dr`): builds and installs it with pip into a venv
# (target/py-venv), then runs its pytest suite (python/tests) against the golden fixtures,
# scikit-learn and the faithful CLI. scripts/test.sh calls it after the Rust tests.
#
# Needs: python3 (>= 3.10) with venv (python3-venv on Debian; installed here when missing),
# cargo, and PyPI for maturin, numpy, pytest, scikit-learn, pandas, anndata, matplotlib (the
# plots), zadu 0.5.4 (the ZADU facade and backend are compared with ZADU itself),
# dask[distributed] (faithful_dr.dask on a LocalCluster), scipy (the metric tests' cdist) and
# scanpy (sc.pp.neighbors graphs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

apt_install() {
    if [ "$(id -u)" = 0 ]; then
        apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
    else
        sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
    fi
}
command -v python3 >/dev/null 2>&1 || apt_install python3 python3-venv

venv=target/py-venv
if [ ! -x "$venv/bin/python" ]; then
    # Debian's python3 creates a venv only with python3-venv (ensurepip) installed.
    if ! python3 -m venv "$venv"; then
        rm -rf "$venv"
        apt_install python3-venv
        python3 -m venv "$venv"
    fi
fi
py="$venv/bin/python"
"$py" -m pip install -q --upgrade pip
# scanpy (about 1 min of wheels: numba, umap-learn, ...) for the kNN-graph round trip of test_tl.py.
"$py" -m pip install -q numpy pytest scikit-learn pandas zadu==0.5.4 anndata "dask[distributed]" scipy scanpy matplotlib

# The wheel's Cargo profile: $FAITHFUL_WHEEL_PROFILE, else release (a user's `pip install
# ./python`). scripts/test.sh passes `dev`: its cargo test stage compiled the dependencies with
# the same settings (Cargo.toml); a release build would compile them all once more.
# The CLI for the JSON parity tests: $FAITHFUL_CLI, else the release binary built here.
profile=${FAITHFUL_WHEEL_PROFILE:-release}
cli=${FAITHFUL_CLI:-}
if [ -z "$cli" ]; then
    cargo build --locked --release --bin faithful
    cli="$PWD/target/release/faithful"
fi
case "$cli" in /*) ;; *) cli="$PWD/$cli" ;; esac
rm -rf target/py-wheels
# (maturin's own default is release: the profile is passed only when it is another one.)
if [ "$profile" = release ]; then
    "$py" -m pip wheel -q --no-deps -w target/py-wheels ./python
else
    MATURIN_PEP517_ARGS="--profile $profile" "$py" -m pip wheel -q --no-deps -w target/py-wheels ./python
fi
wheel=$(ls target/py-wheels/faithful_dr-*.whl)
"$py" -m pip install -q --force-reinstall --no-deps "$wheel"

# The wheel in a fresh venv with only its declared dependencies imports and evaluates.
fresh=target/py-fresh-venv
rm -rf "$fresh" && python3 -m venv "$fresh"
"$fresh/bin/python" -m pip install -q "$wheel"
"$fresh/bin/python" python/tests/wheel_smoke.py tests/fixtures/golden/blobs_500

# pytest imports the installed package (not python/faithful_dr, which lacks the extension).
cd python/tests
FAITHFUL_CLI="$cli" "../../$py" -m pytest -q -p no:cacheprovider .
