"""faithful_dr.knn and Evaluator.knn against a brute-force NumPy reference: the same
indices (ties by index, self excluded) and the same distances, bit for bit."""

import numpy as np
import pytest

import faithful_dr


def brute_knn(X, k):
    """Squared distances summed in coordinate order (faithful's and scipy cdist's order), a
    stable sort on (distance, index), self dropped; distances are sqrt of the sums."""
    X = np.asarray(X, dtype=np.float64)
    n, dim = X.shape
    idx = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    for i in range(n):
        s = np.zeros(n)
        for c in range(dim):
            s = s + (X[:, c] - X[i, c]) ** 2
        order = [j for j in np.lexsort((np.arange(n), s)) if j != i][:k]
        idx[i] = order
        dist[i] = np.sqrt(s[order])
    return idx, dist


@pytest.mark.parametrize("seed", [0, 1])
def test_knn_equals_brute_force_on_ties(seed):
    rng = np.random.default_rng(seed)
    # A small integer lattice with duplicates: most distances are tied.
    X = rng.integers(0, 4, size=(150, 3)).astype(np.float64)
    for k in (1, 7, 30):
        idx, dist = faithful_dr.knn(X, k)
        want_idx, want_dist = brute_knn(X, k)
        assert idx.dtype == np.int64 and dist.dtype == np.float64
        assert idx.shape == dist.shape == (150, k)
        np.testing.assert_array_equal(idx, want_idx)
        np.testing.assert_array_equal(dist, want_dist)


def test_knn_float32_and_fortran_order():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 5)).astype(np.float32)
    want = brute_knn(X.astype(np.float64), 6)
    for a in (X, np.asfortranarray(X), np.repeat(X.astype(np.float64), 2, axis=1)[:, ::2]):
        idx, dist = faithful_dr.knn(a, 6)
        np.testing.assert_array_equal(idx, want[0])
        np.testing.assert_array_equal(dist, want[1])


def test_evaluator_knn_is_the_high_space_knn():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 4))
    ev = faithful_dr.Evaluator(X)
    idx, dist = ev.knn(5)
    np.testing.assert_array_equal(idx, brute_knn(X, 5)[0])
    with pytest.raises(ValueError, match="space 'low'"):
        ev.knn(5, space="low")


def test_knn_k_out_of_range():
    X = np.random.default_rng(3).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"knn: k=10 is out of range: need 1 <= k < n \(n=10\)"):
        faithful_dr.knn(X, 10)


def test_evaluator_knn_runs_on_the_threads_asked_for():
    # The native call returns the run report too: `threads` is the pool the kNN ran on.
    import json

    X = np.random.default_rng(3).normal(size=(80, 4))
    graphs = []
    for threads in (1, 3):
        ev = faithful_dr.Evaluator(X, backend="cpu", threads=threads)
        idx, dist, run = ev._native.knn(5)
        assert json.loads(run)["threads"] == threads
        graphs.append((idx, dist))
    np.testing.assert_array_equal(graphs[0][0], graphs[1][0])
    np.testing.assert_array_equal(graphs[0][1], graphs[1][1])
    np.testing.assert_array_equal(faithful_dr.knn(X, 5, threads=2)[0], graphs[0][0])


def test_tiny_scales_tie_where_scipy_ties():
    """Below spreads of ~1e-154 the squares underflow (docs/exactness.md, "Tiny scales"): the
    pairs tie in scipy's cdist, and faithful's lists are cdist's, ties by index; the same
    data at scale 1 (or scaled by a power of two that keeps the squares normal) rank
    otherwise."""
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 4))
    k = 8
    lists = {}
    for tag, scale in (("one", 1.0), ("tiny", 1e-170), ("pow2", 2.0**-400)):
        Y = X * scale
        d = cdist(Y, Y)
        np.fill_diagonal(d, np.inf)
        want = np.argsort(d, axis=1, kind="stable")[:, :k]
        idx, dist = faithful_dr.knn(Y, k, backend="cpu")
        np.testing.assert_array_equal(idx, want, err_msg=tag)
        np.testing.assert_array_equal(dist, np.take_along_axis(d, want, axis=1), err_msg=tag)
        lists[tag] = idx
        if tag == "tiny":
            assert (d == 0).sum() > 0, "the squares underflow to ties at 1e-170"
    assert np.array_equal(lists["pow2"], lists["one"])
    assert not np.array_equal(lists["tiny"], lists["one"])
