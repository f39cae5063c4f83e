"""faithful-dr: exact ZADU 0.5.4 measures of projection faithfulness, in Rust.

`Evaluator` holds one original space and evaluates projections with ZADU's measure specs;
`knn` is the exact kNN graph; `trustworthiness` and `continuity` are scikit-learn drop-ins.
"""

from ._native import __version__
from .evaluator import Evaluator, Result, Score, knn
from .sklearn import continuity, trustworthiness

__all__ = ["Evaluator", "Result", "Score", "knn", "trustworthiness", "continuity", "__version__"]
