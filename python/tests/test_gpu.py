"""backend="gpu" through Python: the same scores, local values and kNN as the CPU reference,
bit for bit (Mesa's lavapipe where no GPU exists). Under CI=true a missing adapter fails,
elsewhere it skips (as tests/common/gpu.rs)."""

import numpy as np
import pytest

import faithful_dr
from conftest import blobs, on_gpu
from test_zadu_facade import ties

SPECS = ["tnc:k=10", "mrre:k=10", "lcmc:k=10", "nh:k=7", "ca_tnc:k=10"]


@pytest.mark.parametrize("data", ["blobs", "ties"])
def test_gpu_scores_equal_the_cpu_bit_for_bit(data):
    high, low, labels = blobs(n=400, d=6, seed=31) if data == "blobs" else ties(n=400, seed=32)
    gpu = on_gpu(lambda: faithful_dr.Evaluator(high, labels=labels, backend="gpu", local=True).measure(low, SPECS))
    cpu = faithful_dr.Evaluator(high, labels=labels, backend="cpu", local=True).measure(low, SPECS)
    assert gpu.run["backend"] == "gpu" and gpu.run["numerics"] == "exact"
    for g, c in zip(gpu.scores, cpu.scores, strict=True):
        assert [v.hex() for v in g.values.values()] == [v.hex() for v in c.values.values()], g.spec
        for key in c.local:
            np.testing.assert_array_equal(g.local[key], c.local[key])


def test_gpu_knn_equals_the_cpu():
    high, _, _ = ties(n=300, seed=33)
    gi, gd = on_gpu(lambda: faithful_dr.knn(high, 9, backend="gpu"))
    ci, cd = faithful_dr.knn(high, 9, backend="cpu")
    np.testing.assert_array_equal(gi, ci)
    np.testing.assert_array_equal(gd, cd)


@pytest.mark.parametrize("metric", ["cityblock", "chebyshev", "cosine"])
def test_gpu_metrics_equal_the_cpu_bit_for_bit(metric):
    """The certified GPU kernels of the other metrics (issue 25) through Python: served by the
    GPU (no fallback), the same scores, local values and kNN lists as the CPU reference."""
    high, low, _ = ties(n=300, seed=34)
    high = high + np.arange(300)[:, None] * np.array([0.0, 0.0, 1e-9, 0.0])  # near-ties too
    specs = ["tnc:k=10", "mrre:k=10", "lcmc:k=10"]
    gpu = on_gpu(lambda: faithful_dr.Evaluator(high, metric=metric, backend="gpu", local=True).measure(low, specs))
    cpu = faithful_dr.Evaluator(high, metric=metric, backend="cpu", local=True).measure(low, specs)
    assert gpu.run["backend"] == "gpu" and not gpu.run.get("fallback_reason"), gpu.run.get("fallback_reason")
    for g, c in zip(gpu.scores, cpu.scores, strict=True):
        assert [v.hex() for v in g.values.values()] == [v.hex() for v in c.values.values()], (metric, g.spec)
        for key in c.local:
            np.testing.assert_array_equal(g.local[key], c.local[key])
    gi, gd = on_gpu(lambda: faithful_dr.knn(high, 9, metric=metric, backend="gpu"))
    ci, cd = faithful_dr.knn(high, 9, metric=metric, backend="cpu")
    np.testing.assert_array_equal(gi, ci)
    np.testing.assert_array_equal(gd, cd)
