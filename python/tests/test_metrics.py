"""The original space as users hold it, from Python: scipy's metrics (bit for bit scipy's cdist),
metric='precomputed' as scikit-learn's trustworthiness takes it, and kNN graphs (scikit-learn's
kneighbors_graph, faithful's own knn, scanpy's in test_tl.py)."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.manifold import trustworthiness as sk_trustworthiness
from sklearn.neighbors import kneighbors_graph

import faithful_dr
from conftest import blobs

# scikit-learn's names for them included (manhattan, l1, l2).
METRICS = ["euclidean", "sqeuclidean", "cosine", "correlation", "cityblock", "chebyshev", "minkowski",
           "manhattan", "l1", "l2"]
SCIPY = ["euclidean", "sqeuclidean", "cosine", "correlation", "cityblock", "chebyshev"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [1, 7])
def test_trustworthiness_equals_sklearn_with_each_metric_on_tie_free_data(metric, k):
    X, Y, _ = blobs(n=200, d=8, seed=k)
    want = sk_trustworthiness(X, Y, n_neighbors=k, metric=metric)
    assert abs(faithful_dr.trustworthiness(X, Y, n_neighbors=k, metric=metric) - want) <= 1e-15


@pytest.mark.parametrize("metric", SCIPY)
def test_precomputed_equals_sklearn_and_the_metric(metric):
    X, Y, _ = blobs(n=180, d=6, seed=3)
    D = cdist(X, X, metric)
    want = sk_trustworthiness(D, Y, n_neighbors=5, metric="precomputed")
    got = faithful_dr.trustworthiness(D, Y, n_neighbors=5, metric="precomputed")
    assert abs(got - want) <= 1e-15
    # scikit-learn ignores the diagonal (cdist's cosine rounds some self-distances above 0).
    assert got == faithful_dr.trustworthiness(X, Y, n_neighbors=5, metric=metric)
    assert faithful_dr.continuity(D, Y, n_neighbors=5, metric="precomputed") == faithful_dr.continuity(
        X, Y, n_neighbors=5, metric=metric)


@pytest.mark.parametrize("metric,p", [(m, None) for m in SCIPY] + [("minkowski", 3.0), ("minkowski", 1.5)])
def test_knn_is_scipys_cdist_and_stable_argsort_bit_for_bit(metric, p):
    X, _, _ = blobs(n=90, d=11, seed=5)
    # Ties: duplicates and (for cosine) parallel copies.
    X[10] = X[3]
    X[11] = 2.0 * X[4]
    D = cdist(X, X, metric) if p is None else cdist(X, X, metric, p=p)
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :20]
    idx, dist = faithful_dr.knn(X, 20, metric=metric, p=p)
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(dist.view(np.uint64), np.take_along_axis(D, order, axis=1).view(np.uint64))


def test_evaluator_reports_both_spaces():
    X, Y, _ = blobs(n=120, d=5, seed=2)
    run = faithful_dr.Evaluator(X, metric="cosine").measure(Y, ["tnc:k=5"]).run
    assert run["spaces"]["high"] == {"input": "coordinates", "metric": "cosine"}
    assert run["spaces"]["low"] == {"metric": "euclidean"}
    D = cdist(X, X)
    run = faithful_dr.Evaluator(D, metric="precomputed").measure(Y, ["tnc:k=5"]).run
    assert run["spaces"]["high"]["input"] == "distance matrix"


def test_zero_vectors_asymmetric_matrices_and_bad_p_are_value_errors():
    X, Y, _ = blobs(n=40, d=4, seed=1)
    Z = X.copy()
    Z[7] = 0.0
    with pytest.raises(ValueError, match=r"^high: row 7: is a zero vector, so its cosine distance is undefined"):
        faithful_dr.Evaluator(Z, metric="cosine").measure(Y, ["tnc:k=5"])
    with pytest.raises(ValueError, match=r"row 7: is constant"):
        faithful_dr.trustworthiness(Z, Y, metric="correlation")
    D = cdist(X, X)
    D[2, 9] += 1e-12
    with pytest.raises(ValueError, match=r"not a distance matrix: entry \[2, 9\] = .* differs from entry \[9, 2\]"):
        faithful_dr.trustworthiness(D, Y, metric="precomputed")
    with pytest.raises(ValueError, match=r"square distance matrix"):
        faithful_dr.trustworthiness(X, Y, metric="precomputed")
    with pytest.raises(ValueError, match=r"p must be at least 1"):
        faithful_dr.Evaluator(X, metric="minkowski", p=0.5).measure(Y, ["tnc:k=5"])
    with pytest.raises(ValueError, match=r"applies to metric='minkowski' only"):
        faithful_dr.Evaluator(X, metric="cosine", p=3)


def test_a_knn_graph_serves_the_neighbour_measures_and_refuses_trustworthiness():
    X, Y, _ = blobs(n=150, d=6, seed=8)
    specs = ["continuity:k=10", "mrre_missing:k=10", "lcmc:k=10"]
    want = faithful_dr.Evaluator(X).measure(Y, specs)
    G = kneighbors_graph(X, 10, mode="distance")
    got = faithful_dr.Evaluator.from_knn_graph(G).measure(Y, specs)
    assert [s.values for s in got.scores] == [s.values for s in want.scores]
    assert got.run["spaces"]["high"]["graph"]["k"] == 10
    # faithful's own kNN as an (indices, distances) pair.
    pair = faithful_dr.Evaluator.from_knn_graph(faithful_dr.knn(X, 10)).measure(Y, specs)
    assert [s.values for s in pair.scores] == [s.values for s in want.scores]
    with pytest.raises(ValueError, match=r"tnc: needs the original ranks of arbitrary pairs"):
        faithful_dr.Evaluator.from_knn_graph(G).measure(Y, ["tnc:k=5"])
    G = G.tolil()
    G[4, 4] = 1.0
    with pytest.raises(ValueError, match=r"not a kNN graph: row 4: a self loop"):
        faithful_dr.Evaluator.from_knn_graph(G.tocsr())
