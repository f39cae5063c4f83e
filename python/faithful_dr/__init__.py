"""faithful-dr: exact ZADU 0.5.4 measures of projection faithfulness, in Rust.

`Evaluator` holds one original space and evaluates projections with ZADU's measure specs;
`knn` is the kNN graph (exact by default; a `KnnGraph` that says which numerics served it); `trustworthiness` and `continuity` are scikit-learn drop-ins;
`example()` returns the bundled UCI digits (high, low, labels) as NumPy arrays;
`shard_plan`, `Evaluator.map_rows` and `fold` split a run into row blocks (faithful_dr.dask
runs them on a Dask cluster). `faithful_dr.peers` has drop-ins with the signatures of PaCMAP's,
TriMap's and tf-projection-qm's evaluation functions; `measures()` lists every measure with its
parameters, keys and per-point kinds. `Evaluator.views` returns the distortion views' exact data
(kNN lists and cross ranks, the binned Shepard diagram, the co-ranking matrix), which
`faithful_dr.plot` draws with Matplotlib; `report` writes `faithful report`'s self-contained HTML.
"""

import json as _json

from ._native import __version__
from ._native import example
from .evaluator import Evaluator, KnnGraph, ProjectionViews, Result, Score, Views, knn, report
from .shard import fold, shard_plan
from . import peers
from .sklearn import continuity, trustworthiness

from ._native import measures_json as _measures_json


def measures():
    """Every measure as `faithful measures --json` lists it: a list of dicts with id, zadu_id,
    params, keys, local ([{"key", "kind"}]: what each per-point output means), labels,
    min_classes and description."""
    return _json.loads(_measures_json())


__all__ = [
    "Evaluator", "KnnGraph", "ProjectionViews", "Result", "Score", "Views", "example", "knn", "measures", "peers", "report",
    "trustworthiness", "continuity",
    "shard_plan", "fold", "__version__",
]
