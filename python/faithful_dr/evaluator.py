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

    def _repr_html_(self):
        """The scores as an HTML table (a column per projection) and, when a ``coranking`` score
        is there, its R_NX(K) curves on a log-K axis (inline SVG): Jupyter shows a `Result` so."""
        from html import escape

        names = list(self.projections)
        # Scores matched across projections by their spec (a views result's optional scores may
        # be absent from some projections: "—" there).
        by_spec = {p: {s.spec: s for s in self.projections[p]} for p in names}
        specs = {}
        for p in names:
            for score in self.projections[p]:
                specs.setdefault(score.spec, score)
        rows = []
        for spec, score in specs.items():
            params = ", ".join(f"{k}={v}" for k, v in score.params.items())
            head = f"<b>{escape(score.id)}</b>" + (f" <span style='color:#6b7285'>({escape(params)})</span>" if params else "")
            rows.append(f"<tr><td colspan='{len(names) + 1}' style='background:#f6f7fb;text-align:left'>{head}</td></tr>")
            for key in score.values:
                cells = "".join(
                    "<td style='text-align:right;font-variant-numeric:tabular-nums'>"
                    + (f"{by_spec[p][spec].values[key]:.6g}" if spec in by_spec[p] else "—")
                    + "</td>"
                    for p in names
                )
                rows.append(f"<tr><td style='text-align:left;padding-left:18px'>{escape(key)}</td>{cells}</tr>")
        header = "".join(f"<th style='text-align:right'>{escape(p)}</th>" for p in names)
        run = self.run
        caption = f"faithful {escape(run.get('faithful_version', ''))} · {run['n']} points · {escape(run['backend'])}, {escape(run['numerics'])}"
        table = (
            f"<table><caption style='caption-side:bottom;color:#6b7285'>{caption}</caption>"
            f"<thead><tr><th style='text-align:left'>measure</th>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        curves = [(p, s.curves["rnx"]) for p in names for s in self.projections[p] if "rnx" in (s.curves or {})]
        return f"<div class='faithful-result'>{table}{_rnx_svg(curves) if curves else ''}</div>"

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


#: The colours of the page's categorical scale (web/plots.js CATEGORICAL).
_CATEGORICAL = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"]


def _rnx_svg(curves, width=460, height=220):
    """R_NX(K) curves [(name, rnx)] on a log-K axis, as inline SVG."""
    from html import escape
    import math

    m = {"l": 46, "r": 12, "t": 10, "b": 34}
    kmax = max(len(c) for _, c in curves)
    lo = min(0.0, min(float(np.min(c)) for _, c in curves))
    hi = max(0.1, max(float(np.max(c)) for _, c in curves))
    def x(k):
        return m["l"] + (math.log(k) / math.log(max(kmax, 2))) * (width - m["l"] - m["r"])
    def y(v):
        return height - m["b"] - (v - lo) / (hi - lo) * (height - m["t"] - m["b"])
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height + 18 * len(curves)}' font-size='11' font-family='sans-serif'>"]
    parts.append(f"<rect x='{m['l']}' y='{m['t']}' width='{width - m['l'] - m['r']}' height='{height - m['t'] - m['b']}' fill='none' stroke='#aab0bf'/>")
    for t in (lo, (lo + hi) / 2, hi):
        parts.append(f"<text x='{m['l'] - 4}' y='{y(t) + 4:.1f}' text-anchor='end' fill='#5b6275'>{t:.2f}</text>")
    k = 1
    while k <= kmax:
        parts.append(f"<text x='{x(k):.1f}' y='{height - m['b'] + 14}' text-anchor='middle' fill='#5b6275'>{k}</text>")
        k *= 10
    parts.append(f"<text x='{(m['l'] + width - m['r']) / 2}' y='{height - 4}' text-anchor='middle'>K (log scale)</text>")
    parts.append(f"<text transform='translate(12 {(m['t'] + height - m['b']) / 2}) rotate(-90)' text-anchor='middle'>R_NX(K)</text>")
    for i, (name, c) in enumerate(curves):
        step = max(1, len(c) // 400)
        pts = " ".join(f"{x(t + 1):.1f},{y(float(v)):.1f}" for t, v in list(enumerate(c))[::step])
        colour = _CATEGORICAL[i % len(_CATEGORICAL)]
        parts.append(f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{pts}'/>")
        parts.append(f"<text x='{m['l']}' y='{height + 14 + 18 * i}' fill='{colour}'>— {escape(name)}</text>")
    parts.append("</svg>")
    return "".join(parts)


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
        each point's k original neighbours run from it (continuity, mrre_missing, lcmc, nd,
        knn_overlap, density_preservation, knn_classification, snc with HDBSCAN, coranking up to
        the graph's k, and nh, dsc, ivm, c_evm, hypothesis_margin, scagnostics, which need no original space);
        the others are refused with the input they need."""
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
        pairs = _inputs.projections(lows)
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

    def views(self, lows, specs=None, *, k=10, shepard_bins=64, coranking_per_octave=4, labels=None, numerics=None,
              optional=()):
        """The distortion views' data (what `faithful_dr.plot` draws), with the scores of `specs`
        (default ``tnc`` at `k`; per-point values always on): a `Views`. `lows` is one
        projection (named "low") or a dict {name: projection}. From the same row pass as the
        scores: each projection's kNN list at `k` and both spaces' cross ranks (the lens's
        missing and false neighbours, the reliability map's edges); from exact passes over all
        pairs: the Shepard diagram in `shepard_bins` × `shepard_bins` bins and the co-ranking
        matrix in `coranking_per_octave` log bins per octave of K, with R_NX(K). A part is left
        out when its parameter is 0. `optional`: specs scored after `specs` where they are
        defined (a Shepard caption's ``"srho"``): a projection on which one is undefined (srho
        of a constant projection) goes without it, and its `ProjectionViews.left_out` says why;
        any other error raises, as the specs' do."""
        if not isinstance(lows, dict):
            lows = {"low": lows}
        pairs = _inputs.projections(lows)
        if specs is None:
            specs = [f"tnc:k={k}"] if k else []
        labels = None if labels is None else _inputs.labels(labels)
        native, k, knn_high, projections, text = self._native.views(
            pairs, specs, _count("k", k), _count("shepard_bins", shepard_bins),
            _count("coranking_per_octave", coranking_per_octave), labels, _numerics(numerics),
            optional,
        )
        views = {p["name"]: ProjectionViews(**p) for p in projections}
        return Views(Result._of(native), k, knn_high, views, text)

    def report(self, lows, path, specs=None, *, labels=None, k=10, title=None, shepard_bins=64,
               coranking_per_octave=4, all_pairs_max_n=10_000, max_bytes=30_000_000):
        """Writes the self-contained HTML report of `lows` (one projection, or a dict {name:
        projection}) to `path`, the same bytes as ``faithful report`` writes for the same data
        and options (see `faithful_dr.report`). Returns the list of what was left out."""
        if not isinstance(lows, dict):
            lows = {"low": lows}
        pairs = _inputs.projections(lows)
        labels = None if labels is None else _inputs.labels(labels)
        html, left_out = self._native.report(
            pairs, [] if specs is None else specs, _count("k", k), _count("shepard_bins", shepard_bins),
            _count("coranking_per_octave", coranking_per_octave), _count("all_pairs_max_n", all_pairs_max_n),
            _count("max_bytes", max_bytes), title, labels,
        )
        _write_atomically(path, html.encode("utf-8"))
        return left_out

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


@dataclass(frozen=True)
class ProjectionViews:
    """One projection's views data. `knn_low`, `rank_low_of_high` (the projection rank of each
    original neighbour: above k, a missing neighbour) and `rank_high_of_low` (the original rank
    of each projection neighbour: above k, a false neighbour) are int64 n x k arrays (or None);
    `shepard` a dict (bins, max_high, max_low, pairs, counts: uint64 bins x bins, row a = the
    original distance's bin) or None; `coranking` a dict (edges: the bins' first ranks and n,
    counts: uint64 B x B, row = the original rank's bin, rnx: R_NX(K) for K = 1 .. n-2,
    auc_rnx) or None; `left_out` the optional specs undefined on this projection, as (id,
    reason) pairs."""

    name: str
    knn_low: np.ndarray | None = None
    rank_low_of_high: np.ndarray | None = None
    rank_high_of_low: np.ndarray | None = None
    shepard: dict | None = None
    coranking: dict | None = None
    left_out: tuple = ()


@dataclass(frozen=True)
class Views:
    """What `Evaluator.views` returns: the scores (`result`, a `Result` with per-point values),
    `k`, the original space's kNN at k (`knn_high`, int64 n x k, or None) and each projection's
    `ProjectionViews` by name. `to_json()` is ``faithful views --json``'s text."""

    result: Result
    k: int
    knn_high: np.ndarray | None
    projections: dict
    _json: str = field(repr=False, default="")

    def to_json(self):
        """The CLI's ``faithful views --json`` output for the same run, without the final newline."""
        return self._json


def _write_atomically(path, data):
    """Writes `data` to `path` through a temporary file beside it, renamed over it."""
    import os
    import tempfile

    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def report(high, lows, path, specs=None, *, labels=None, k=10, title=None, backend="auto", threads=None,
           memory_budget=None, shepard_bins=64, coranking_per_octave=4, all_pairs_max_n=10_000,
           max_bytes=30_000_000):
    """Writes one self-contained HTML report to `path` (the bytes ``faithful report`` writes for
    the same data and options): the scores table, R_NX curves, CheckViz, the reliability map,
    the neighbour lens, the Shepard and co-ranking heatmaps and, with two projections or more,
    two of them linked. It needs no network or server (open it from a file), and it holds to
    `max_bytes` (the whole file): whatever would pass it is left out, and the report says so; a
    limit below the scores alone (about 100 kB) raises ValueError and writes nothing.
    `lows`: one projection (named "low") or a dict {name: projection}. Returns the list of what
    was left out."""
    return Evaluator(high, labels=labels, backend=backend, threads=threads, memory_budget=memory_budget).report(
        lows, path, specs, k=k, title=title, shepard_bins=shepard_bins, coranking_per_octave=coranking_per_octave,
        all_pairs_max_n=all_pairs_max_n, max_bytes=max_bytes,
    )


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
