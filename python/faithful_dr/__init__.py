"""faithful-dr: exact ZADU 0.5.4 measures of projection faithfulness, in Rust.

`Evaluator` holds one original space and evaluates projections with ZADU's measure specs;
`knn` is the kNN graph (exact by default; a `KnnGraph` that says which numerics served it); `trustworthiness` and `continuity` are scikit-learn drop-ins;
`example()` returns the bundled UCI digits (high, low, labels) as NumPy arrays;
`shard_plan`, `Evaluator.map_rows` and `fold` split a run into row blocks (faithful_dr.dask
runs them on a Dask cluster).
"""

from ._native import __version__
from ._native import example
from .evaluator import Evaluator, KnnGraph, Result, Score, knn
from .shard import fold, shard_plan
from .sklearn import continuity, trustworthiness

__all__ = ["Evaluator", "KnnGraph", "Result", "Score", "example", "knn", "trustworthiness", "continuity", "shard_plan", "fold", "__version__"]
