"""Drop-ins with the signatures of other libraries' evaluation functions, computed exactly by
faithful (docs/measures.md, "Measures beyond ZADU", says where the values differ and why):

- PaCMAP's ``random_triplet_eval(X, X_new, y)`` (its repository's evaluation code), seeded:
  ``random_state`` is the seed of ``np.random.default_rng`` that PaCMAP leaves unseeded;
- TriMap's ``TRIMAP.global_score(X, Y)`` as a function ``global_score(X, Y)``;
- tf-projection-qm's ``jaccard``, ``true_neighbors``, ``false_neighbors``,
  ``missing_neighbors`` (fractions of k, averaged) and ``average_local_error`` (on squared
  distances, as tf-projection-qm computes it), each with ``*_with_local`` returning
  ``(value, per-point values)`` as tf-projection-qm's do.
"""

from . import _inputs
from .evaluator import Evaluator


def _score(X, X_2d, spec, names=("X", "X_2d")):
    X = _inputs.points(X, names[0])
    X_2d = _inputs.points(X_2d, names[1])
    ev = Evaluator(X, local=True, _name=names[0])
    return ev.measure_many({names[1]: X_2d}, [spec]).scores[0]


def _k(k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def random_triplet_eval(X, X_new, y=None, *, random_state=0):
    """PaCMAP's random-triplet accuracy: five random triplets per point, the share whose order
    d(i, j) < d(i, l) is kept (`y` is accepted and ignored, as in PaCMAP)."""
    s = _score(X, X_new, f"triplet_accuracy:random_state={int(random_state)}", ("X", "X_new"))
    return s.values["triplet_accuracy"]


def global_score(X, Y):
    """TriMap's global score: exp(-(E_Y - E_PCA) / E_PCA) of linear reconstruction errors."""
    return _score(X, Y, "global_score", ("X", "Y")).values["global_score"]


def _neighbours(X, X_2d, k, local_key):
    k = _k(k)
    s = _score(X, X_2d, f"knn_overlap:k={k}")
    per_point = s.local[local_key] / k if local_key.endswith("neighbours") else s.local[local_key]
    return float(per_point.mean()), per_point


def jaccard(X, X_2d, k):
    """tf-projection-qm's Jaccard index of the k-nearest-neighbour sets, averaged over points."""
    return _neighbours(X, X_2d, k, "local_jaccard")[0]


def jaccard_with_local(X, X_2d, k):
    return _neighbours(X, X_2d, k, "local_jaccard")


def true_neighbors(X, X_2d, k):
    """The mean share of each point's k original neighbours kept in the projection."""
    return _neighbours(X, X_2d, k, "true_neighbours")[0]


def true_neighbors_with_local(X, X_2d, k):
    return _neighbours(X, X_2d, k, "true_neighbours")


def false_neighbors(X, X_2d, k):
    """The mean share of each point's k projection neighbours that are not original ones."""
    return _neighbours(X, X_2d, k, "false_neighbours")[0]


def false_neighbors_with_local(X, X_2d, k):
    return _neighbours(X, X_2d, k, "false_neighbours")


def missing_neighbors(X, X_2d, k):
    """The mean share of each point's k original neighbours missing from the projection's."""
    return _neighbours(X, X_2d, k, "missing_neighbours")[0]


def missing_neighbors_with_local(X, X_2d, k):
    return _neighbours(X, X_2d, k, "missing_neighbours")


def average_local_error(X, X_2d):
    """tf-projection-qm's average local error: per point the mean |D^X/max D^X - D^Y/max D^Y|
    of the squared distances D, averaged (faithful's `ale:squared=true`)."""
    return average_local_error_with_local(X, X_2d)[0]


def average_local_error_with_local(X, X_2d):
    s = _score(X, X_2d, "ale:squared=true")
    return s.values["average_local_error"], s.local["local_average_local_error"]
