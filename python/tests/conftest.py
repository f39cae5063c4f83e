"""Shared fixtures: the repository's golden data and the faithful CLI binary."""

import os
import pathlib
import shutil

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "golden"


@pytest.fixture(scope="session")
def cli():
    """The `faithful` binary: $FAITHFUL_CLI (scripts/test_python.sh sets it), else on PATH."""
    path = os.environ.get("FAITHFUL_CLI") or shutil.which("faithful")
    if path is None:
        pytest.fail("no faithful CLI: set FAITHFUL_CLI (scripts/test_python.sh builds it)")
    return path


def blobs(n=300, d=6, seed=0):
    """Tie-free data: Gaussian blobs in d dimensions, a noisy 2-D projection, 3 labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    high = rng.normal(size=(n, d)) + 4.0 * labels[:, None]
    low = high[:, :2] + 0.5 * rng.normal(size=(n, 2))
    return high, low, labels


def on_gpu(run):
    """run() on a GPU backend; without an adapter it skips, but under CI=true it fails (as
    tests/common/gpu.rs)."""
    try:
        return run()
    except RuntimeError as e:
        if os.environ.get("CI") == "true" or "GPU backend unavailable" not in str(e):
            raise
        pytest.skip(f"no GPU adapter: {e}")
