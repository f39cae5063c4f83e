"""The scikit-learn drop-ins against scikit-learn itself."""

import numpy as np
import pytest
from sklearn.manifold import trustworthiness as sk_trustworthiness

import faithful_dr
from conftest import blobs


@pytest.mark.parametrize("k", [1, 5, 12])
def test_trustworthiness_equals_sklearn_on_tie_free_data(k):
    X, Y, _ = blobs(n=200, d=8, seed=k)
    want = sk_trustworthiness(X, Y, n_neighbors=k)
    assert abs(faithful_dr.trustworthiness(X, Y, n_neighbors=k) - want) <= 1e-15


def test_continuity_is_trustworthiness_with_the_spaces_swapped():
    # Continuity of (X, Y) is trustworthiness of (Y, X) (Venna and Kaski's definitions).
    X, Y, _ = blobs(n=150, d=5, seed=9)
    want = sk_trustworthiness(Y, X, n_neighbors=7)
    assert abs(faithful_dr.continuity(X, Y, n_neighbors=7) - want) <= 1e-15


def test_default_n_neighbors_and_int_input():
    X, Y, _ = blobs(n=60, d=3, seed=4)
    Xi, Yi = np.round(X * 1e6).astype(np.int64), np.round(Y * 1e6).astype(np.int64)
    assert abs(faithful_dr.trustworthiness(Xi, Yi) - sk_trustworthiness(Xi, Yi)) <= 1e-15


def test_validation_like_sklearn():
    X, Y, _ = blobs(n=20, d=3)
    # scikit-learn's message, same exception type.
    for f in (faithful_dr.trustworthiness, faithful_dr.continuity):
        with pytest.raises(ValueError, match=r"n_neighbors \(10\) should be less than n_samples / 2 \(10.0\)"):
            f(X, Y, n_neighbors=10)
        with pytest.raises(ValueError) as sk:
            sk_trustworthiness(X, Y, n_neighbors=10)
        assert "should be less than n_samples / 2" in str(sk.value)


@pytest.mark.parametrize("metric", ["hamming", "jaccard", "seuclidean", "mahalanobis"])
def test_other_metrics_are_a_clear_value_error(metric):
    X, Y, _ = blobs(n=20, d=3)
    with pytest.raises(ValueError, match=f"invalid metric '{metric}': unknown metric"):
        faithful_dr.trustworthiness(X, Y, metric=metric)


def test_a_callable_metric_is_a_clear_value_error():
    X, Y, _ = blobs(n=20, d=3)
    with pytest.raises(ValueError, match="is not supported: faithful reproduces scipy's named metrics exactly"):
        faithful_dr.trustworthiness(X, Y, metric=lambda a, b: 0.0)


def test_nan_is_a_value_error_naming_the_input():
    X, Y, _ = blobs(n=20, d=3)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X: non-finite value NaN at row 3, column 1$"):
        faithful_dr.trustworthiness(X, Y)
