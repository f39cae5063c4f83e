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
    #: What each local output's values mean (local key → kind): ``mean`` (they average to the
    #: value), ``sum`` (they sum to it), ``share`` (they sum to 1), ``partial_mean`` (the points
    #: that have a value average to it; the others are masked), ``count`` (whole numbers),
    #: ``score`` (a per-point score that does not aggregate exactly), ``log_ratio`` (signed, 0 =
    #: alike in both spaces; points without one are masked). The kinds whose points may lack a
    #: value come as ``numpy.ma.MaskedArray`` (masked where there is none, never 0 or NaN).
    local_kinds: dict = field(default_factory=dict)

    @property
    def spec(self):
        """The spec string, e.g. ``tnc:k=20``."""
        params = ",".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.id}:{params}" if params else self.id

    def __getitem__(self, key):
        return self.values[key]


class KnnGraph(tuple):
    """`(indices, distances)` (int64 n x k, float64 n x k; unpacks as a pair) with what served
    them: `numerics` is "exact" for the reference's lists (bit for bit, on any backend) and
    "fast" for a GPU's unrefined f32 order, which is not certified exact; `backend` is "cpu"
    or "gpu"; `run` the run report (a dict)."""

    def __new__(cls, indices, distances, run):
        graph = super().__new__(cls, (indices, distances))
        graph.run = run
        return graph

    @property
    def indices(self):
        return self[0]

    @property
    def distances(self):
        return self[1]

    @property
    def numerics(self):
        return self.run["numerics"]

    @property
    def backend(self):
        return self.run["backend"]


@dataclass(frozen=True)
class Result:
    """The scores of one `measure` / `measure_many` call and the run report."""

    _native: object = field(repr=False)
    projections: dict = field(default_factory=dict)

    @classmethod
    def _of(cls, native):
        projections = {
            name: [Score(projection=name, **_masked(s)) for s in scores] for name, scores in native.projections()
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
    numerics: "exact" (the CPU reference's neighbours and ranks, bit for bit) or "fast" (a GPU's
    f32 order, not certified; the run report and `KnnGraph.numerics` say so); a call's
    `numerics=` overrides it for that call. What the evaluator keeps across calls keeps its
    label: a kNN list from a Fast call serves only Fast calls.
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

    def measure(self, low, specs, labels=None, numerics=None):
        """Evaluates `specs` (strings like ``"tnc:k=20"`` or ZADU dicts like
        ``{"id": "tnc", "params": {"k": 20}}``) on the projection `low` (n x d). `numerics`:
        this call's ("exact" or "fast"; default the evaluator's)."""
        return self.measure_many({"low": low}, specs, labels=labels, numerics=numerics)

    def measure_many(self, lows, specs, labels=None, numerics=None):
        """Evaluates `specs` on each projection of `lows` ({name: n x d array}), sharing every
        resource that can be shared. `numerics`: this call's (default the evaluator's)."""
        if not isinstance(lows, dict):
            raise ValueError("lows: expected a dict {name: projection}")
        pairs = [(str(name), _inputs.points(low, str(name))) for name, low in lows.items()]
        labels = None if labels is None else _inputs.labels(labels)
        return Result._of(self._native.measure_many(pairs, specs, labels, _numerics(numerics)))

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

    def knn(self, k, space="high", numerics=None):
        """The `k` nearest neighbours of every point of the original space, ties by index, self
        excluded: a `KnnGraph` (unpacks as indices int64 n x k, distances float64 n x k) whose
        `numerics` says what they are: "exact" (the reference's lists, bit for bit) or "fast"
        (a GPU's f32 order, not certified exact). `numerics`: this call's (default the
        evaluator's)."""
        if space != "high":
            raise ValueError(f"knn: space '{space}' is not supported (the evaluator's kNN is of 'high')")
        idx, dist, run = self._native.knn(_count("k", k), _numerics(numerics))
        return KnnGraph(idx, dist, json.loads(run))


def knn(X, k, *, metric="euclidean", p=None, backend="auto", numerics="exact", threads=None, memory_budget=None):
    """The kNN graph of `X` (n x D) under `metric` (scipy's names, default Euclidean;
    "precomputed" for an n x n distance matrix), ties by index, self excluded: a `KnnGraph`
    (unpacks as indices int64 n x k, distances float64 n x k). With numerics="exact" (the
    default) it is the exact graph on any backend; with numerics="fast" a GPU serves its f32
    order without refinement, not certified exact, and the result's `numerics` is "fast"
    (it is "exact" when the CPU served, which is always exact)."""
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


def _numerics(value):
    """A call's numerics option: None (the evaluator's), "exact" or "fast"."""
    if value is None or value in ("exact", "fast"):
        return value
    raise ValueError(f"invalid option: numerics {value!r} (accepted: exact, fast)")


#: The local kinds whose points may have no value (NaN from the native layer, masked here).
_MAY_LACK_VALUES = ("partial_mean", "log_ratio")


def _masked(score):
    """The native score dict with the locals of a kind that may lack values masked where they do."""
    kinds = score.get("local_kinds") or {}
    if score.get("local"):
        score["local"] = {
            key: np.ma.masked_invalid(v) if kinds.get(key) in _MAY_LACK_VALUES else v
            for key, v in score["local"].items()
        }
    return score


def _count(name, value):
    """A non-negative integer option, or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"invalid option: {name} must be an integer, got {value!r}")
    if value < 0:
        raise ValueError(f"invalid option: {name} must not be negative, got {value}")
    return int(value)
