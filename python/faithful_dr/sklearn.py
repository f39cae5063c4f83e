"""scikit-learn drop-ins: `trustworthiness` with `sklearn.manifold.trustworthiness`'s signature
and validation, and its companion `continuity`, computed exactly by faithful's `tnc`.

`metric` is scikit-learn's: a scipy metric name (euclidean, sqeuclidean, cosine, correlation,
cityblock/manhattan/l1, chebyshev, minkowski), computed as scipy's ``cdist`` computes it, or
'precomputed' with `X` the n x n distance matrix (its diagonal is ignored, as scikit-learn
ignores it; it must be finite, non-negative and exactly symmetric).

On tie-free data the values equal scikit-learn's. With tied distances they can differ:
scikit-learn orders tied neighbours with an unstable sort, faithful by index (ZADU's order).
(scikit-learn's own cosine, used by its ``pairwise_distances``, rounds differently from
scipy's; the two orders agree unless two distances are within a few ulps.)
"""

import numpy as np

from . import _inputs
from .evaluator import Evaluator


def trustworthiness(X, X_embedded, *, n_neighbors=5, metric="euclidean"):
    """How far the local structure is retained (scikit-learn's definition, in [0, 1]): the
    embedding's `n_neighbors` nearest neighbours that are not neighbours in `X` are penalised
    by their rank in `X`."""
    return _tnc(X, X_embedded, n_neighbors, metric)["trustworthiness"]


def continuity(X, X_embedded, *, n_neighbors=5, metric="euclidean"):
    """The companion of `trustworthiness` (ZADU's tnc): neighbours in `X` missing from the
    embedding's neighbours, penalised by their rank in the embedding."""
    return _tnc(X, X_embedded, n_neighbors, metric)["continuity"]


def _tnc(X, X_embedded, n_neighbors, metric):
    X = _inputs.points(X, "X")
    if metric == "precomputed":
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"X: metric='precomputed' takes a square distance matrix, got shape {X.shape}")
        X = np.array(X, dtype=np.float64)
        np.fill_diagonal(X, 0.0)
    X_embedded = _inputs.points(X_embedded, "X_embedded")
    n_samples = X.shape[0]
    # scikit-learn's check and message.
    if n_neighbors >= n_samples / 2:
        raise ValueError(f"n_neighbors ({n_neighbors}) should be less than n_samples / 2 ({n_samples / 2})")
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise ValueError(f"n_neighbors must be a positive integer, got {n_neighbors!r}")
    res = Evaluator(X, metric=metric, _name="X").measure_many({"X_embedded": X_embedded}, [f"tnc:k={int(n_neighbors)}"])
    return res.scores[0].values
