"""No Fast result is ever labelled exact (issue 24): one Evaluator runs numerics="fast" and then
"exact" on the GPU (Mesa's lavapipe where no GPU exists), on data inside the certified domain
and on a 300-point integer lattice with 1e-9 jitter (where the Exact GPU path falls back to the
CPU); every result labelled exact equals the CPU reference bit for bit, and `knn` returns a
KnnGraph that says which numerics served it."""

import numpy as np
import pytest

import faithful_dr
from conftest import on_gpu

SPECS = ["tnc:k=10", "mrre:k=10", "lcmc:k=10"]


def lattice(n=300, seed=3):
    rng = np.random.default_rng(seed)
    i = np.arange(n)[:, None]
    high = ((i >> (2 * np.arange(4))) & 3).astype(float) + 1e-9 * (rng.random((n, 4)) - 0.5)
    low = ((i * (np.arange(2) + 1)) % 5).astype(float) + 1e-9 * (rng.random((n, 2)) - 0.5)
    return high, low


def generic(n=300, seed=4):
    rng = np.random.default_rng(seed)
    return rng.random((n, 6)), rng.random((n, 2))


def same_scores(a, b):
    return all(
        [v.hex() for v in x.values.values()] == [v.hex() for v in y.values.values()]
        for x, y in zip(a.scores, b.scores, strict=True)
    )


@pytest.mark.parametrize("data", ["inside", "lattice_jitter_1e-9"])
def test_fast_then_exact_on_one_evaluator(data):
    high, low = generic() if data == "inside" else lattice()
    cpu = faithful_dr.Evaluator(high, backend="cpu")
    want = cpu.measure(low, SPECS)
    want_idx, want_dist = cpu.knn(10)

    ev = faithful_dr.Evaluator(high, backend="gpu", numerics="fast")
    graph = on_gpu(lambda: ev.knn(10))
    assert isinstance(graph, faithful_dr.KnnGraph)
    assert graph.numerics in ("exact", "fast") and graph.numerics == graph.run["numerics"]
    idx, dist = graph  # unpacks as the pair it always was
    if graph.numerics == "exact":
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(dist, want_dist)
    fast = ev.measure(low, SPECS)
    if fast.run["numerics"] == "exact":
        assert same_scores(fast, want), "a Fast call labelled exact differs from the CPU reference"
    else:
        assert any(s["numerics"] == "fast" for s in fast.run["served"])

    # Exact on the same evaluator: the Fast list is never reused; labelled exact, and is.
    exact = ev.measure(low, SPECS, numerics="exact")
    assert exact.run["numerics"] == "exact", exact.run["served"]
    assert all(s["numerics"] == "exact" for s in exact.run["served"])
    assert same_scores(exact, want)
    exact_graph = ev.knn(10, numerics="exact")
    assert exact_graph.numerics == "exact"
    np.testing.assert_array_equal(exact_graph.indices, want_idx)
    np.testing.assert_array_equal(exact_graph.distances, want_dist)


def test_knn_says_what_served_it():
    high, _ = generic(n=50)
    graph = faithful_dr.knn(high, 5, backend="cpu", numerics="fast")
    # The CPU reference is always exact, whatever was asked.
    assert graph.numerics == "exact" and graph.backend == "cpu"
    assert "not certified exact" in faithful_dr.knn.__doc__ and "KnnGraph" in faithful_dr.knn.__doc__
    with pytest.raises(ValueError, match="numerics"):
        faithful_dr.Evaluator(high).knn(5, numerics="quick")
