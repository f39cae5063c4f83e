"""The native API: `Evaluator` (one original space, many projections and specs), its results,
and the exact kNN graph."""

import json
from dataclasses import dataclass, field

import numpy as np

from . import _inputs, _native


@dataclass(frozen=True)
class Score:
    """One measure on one projection: ZADU's id, every parameter (defaults included), the
    output values in ZADU's key order, per-point values when `local=True` asked for them, and
    curves over K for measures that have them (``coranking``)."""

    id: str
    params: dict
    values: dict
    local: dict | None = None
    projection: str = "low"
    #: Curves over the neighbourhood size K (``coranking``: qnx, rnx, lcmc, ...), index K − 1.
    curves: dict = field(default_factory=dict)

    @property
    def spec(self):
        """The spec string, e.g. ``tnc:k=20``."""
        params = ",".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.id}:{params}" if params else self.id

    def __getitem__(self, key):
        return self.values[key]


@dataclass(frozen=True)
class Result:
    """The scores of one `measure` / `measure_many` call and the run report."""

    _native: object = field(repr=False)
    projections: dict = field(default_factory=dict)

    @classmethod
    def _of(cls, native):
        projections = {
            name: [Score(projection=name, **s) for s in scores] for name, scores in native.projections()
        }
        return cls(native, projections)

    @property
    def scores(self):
        """Every score, projection by projection, spec by spec."""
        return [s for scores in self.projections.values() for s in scores]

    @property
    def run(self):
        """The run report (backend, numerics, plan, work, timings) as a dict."""
        return json.loads(self._native.run_json())

    def to_json(self):
        """The CLI's `faithful measure --json` output (its schema, byte for byte), without the
        final newline."""
        return self._native.to_json()

    def to_frame(self):
        """A tidy pandas DataFrame: one row per projection, measure and output key."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_frame needs pandas (pip install pandas)") from e
        rows = [
            {"projection": s.projection, "id": s.id, "spec": s.spec, "key": key, "value": value}
            for s in self.scores
            for key, value in s.values.items()
        ]
        return pd.DataFrame(rows, columns=["projection", "id", "spec", "key", "value"])


class Evaluator:
    """Evaluates projections of one original space `high` (n x D, float64 or float32).

    The original space's kNN is computed once and reused by later calls (as ZADU's
    `measure_many`). Computation runs with the GIL released; Ctrl-C cancels it.

    metric: the original space's metric, scipy's ``cdist(high, high, metric)`` bit for bit:
    "euclidean" (default), "sqeuclidean", "cosine", "correlation", "cityblock", "chebyshev",
    "minkowski" (with ``p``, default 2); or "precomputed", when `high` is the n x n distance
    matrix (finite, non-negative, zero diagonal, exactly symmetric). Projections are Euclidean.
    backend: "auto" (the GPU for large jobs on a hardware adapter), "cpu" or "gpu".
    numerics: "exact" (the CPU reference's neighbours and ranks, bit for bit) or "fast".
    local: also return per-point values. threads: worker threads of `measure` and `knn` calls
    (None: all cores).
    memory_budget: bytes the all-pairs resources and parameter-sized lists may take.

    `Evaluator.from_knn_graph` takes the original space as a kNN graph instead.
    """

    def __init__(
        self, high, *, labels=None, metric="euclidean", p=None, backend="auto", numerics="exact", local=False,
        threads=None, memory_budget=None, _name="high", _graph=None,
    ):
        metric = _metric(metric, p)
        if _graph is None:
            high = _inputs.points(high, _name)
        labels = None if labels is None else _inputs.labels(labels)
        self._native = _native.Evaluator(
            high, _name, labels, backend, numerics, bool(local), _count("threads", threads),
            _count("memory_budget", memory_budget), metric, _graph,
        )

    @classmethod
    def from_knn_graph(cls, graph, *, labels=None, name="graph", **options):
        """An evaluator whose original space is a kNN graph: a SciPy sparse matrix whose row i
        holds i's neighbours and their distances (scanpy's ``adata.obsp["distances"]``,
        ``kneighbors_graph(X, k, mode="distance")``), or a pair ``(indices, distances)`` of
        n x k arrays (UMAP's ``knn_indices``/``knn_dists`` without the self column).

        Rows are ordered by (distance, index) and cut to the shortest row's length; the run
        report's ``spaces.high.graph`` says what was done. Only the measures that need nothing but
        each point's k original neighbours run from it (continuity, mrre_missing, lcmc, nh, nd,
        snc); the others are refused with the input they need."""
        return cls(None, labels=labels, metric="precomputed", _name=name, _graph=_inputs.csr_graph(graph, name), **options)

    @property
    def n(self):
        """Number of points."""
        return self._native.n

    def measure(self, low, specs, labels=None):
        """Evaluates `specs` (strings like ``"tnc:k=20"`` or ZADU dicts like
        ``{"id": "tnc", "params": {"k": 20}}``) on the projection `low` (n x d)."""
        return self.measure_many({"low": low}, specs, labels=labels)

    def measure_many(self, lows, specs, labels=None):
        """Evaluates `specs` on each projection of `lows` ({name: n x d array}), sharing every
        resource that can be shared."""
        if not isinstance(lows, dict):
            raise ValueError("lows: expected a dict {name: projection}")
        pairs = [(str(name), _inputs.points(low, str(name))) for name, low in lows.items()]
        labels = None if labels is None else _inputs.labels(labels)
        return Result._of(self._native.measure_many(pairs, specs, labels))

    def map_rows(self, low, rows, specs, labels=None, name="low"):
        """One row block's shard of `specs` on the projection `low`: a partial (JSON text,
        picklable, about 20 bytes per row and local key) for `faithful_dr.fold`. `rows` is a
        `(start, end)` block of `faithful_dr.shard_plan(n, ...)`; `name` is the projection's
        name in the folded result (`measure` names it "low"). Served by this evaluator's backend
        (the GPU's certified kernels query only the block's rows; `auto` weighs the block's
        rows x n pairs), always exact: the bits do not depend on the backend, the block size or
        the thread count. The partial's "backend" field says which served."""
        low = _inputs.points(low, str(name))
        labels = None if labels is None else _inputs.labels(labels)
        start, end = (_count("rows", r) for r in rows)
        return self._native.map_rows(str(name), low, (start, end), specs, labels)

    def knn(self, k, space="high"):
        """The exact `k` nearest neighbours of every point of the original space, ties by
        index, self excluded: (indices int64 n x k, distances float64 n x k)."""
        if space != "high":
            raise ValueError(f"knn: space '{space}' is not supported (the evaluator's kNN is of 'high')")
        idx, dist, _run = self._native.knn(_count("k", k))
        return idx, dist


def knn(X, k, *, metric="euclidean", p=None, backend="auto", numerics="exact", threads=None, memory_budget=None):
    """The exact kNN graph of `X` (n x D): (indices int64 n x k, distances float64 n x k),
    under `metric` (scipy's names, default Euclidean; "precomputed" for an n x n distance
    matrix), ties by index, self excluded."""
    return Evaluator(
        X, metric=metric, p=p, backend=backend, numerics=numerics, threads=threads, memory_budget=memory_budget
    ).knn(k)


def _metric(metric, p):
    """The metric's name for the native layer ("minkowski:p=3" carries p)."""
    if callable(metric) or not isinstance(metric, str):
        raise ValueError(
            f"metric={metric!r} is not supported: faithful reproduces scipy's named metrics exactly "
            "(euclidean, sqeuclidean, cosine, correlation, cityblock, chebyshev, minkowski) or takes "
            "metric='precomputed'"
        )
    if p is not None:
        if metric.lower() != "minkowski":
            raise ValueError(f"p={p!r} applies to metric='minkowski' only, not {metric!r}")
        return f"minkowski:p={float(p)!r}"
    return metric


def _count(name, value):
    """A non-negative integer option, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"invalid option: {name} must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"invalid option: {name} must not be negative, got {value}")
    return int(value)
