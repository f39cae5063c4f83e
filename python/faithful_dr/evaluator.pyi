# Type stubs of faithful_dr.evaluator (the native API).
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _native

ArrayLike = npt.ArrayLike
Spec = str | dict[str, Any]

class Score:
    id: str
    params: dict[str, int | float | str]
    values: dict[str, float]
    local: dict[str, npt.NDArray[np.float64] | np.ma.MaskedArray[Any, Any]] | None
    projection: str
    curves: dict[str, npt.NDArray[np.float64]]
    local_kinds: dict[str, str]
    def __init__(
        self,
        id: str,
        params: dict[str, int | float | str],
        values: dict[str, float],
        local: dict[str, npt.NDArray[np.float64] | np.ma.MaskedArray[Any, Any]] | None = None,
        projection: str = "low",
        curves: dict[str, npt.NDArray[np.float64]] = ...,
        local_kinds: dict[str, str] = ...,
    ) -> None: ...
    @property
    def spec(self) -> str: ...
    def __getitem__(self, key: str) -> float: ...

class KnnGraph(tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]):
    run: dict[str, Any]
    @property
    def indices(self) -> npt.NDArray[np.int64]: ...
    @property
    def distances(self) -> npt.NDArray[np.float64]: ...
    @property
    def numerics(self) -> str: ...
    @property
    def backend(self) -> str: ...

class Result:
    projections: dict[str, list[Score]]
    @property
    def scores(self) -> list[Score]: ...
    @property
    def run(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def to_frame(self) -> Any: ...  # a pandas.DataFrame (pandas is optional)

class Evaluator:
    _native: _native.Evaluator
    def __init__(
        self,
        high: ArrayLike,
        *,
        labels: ArrayLike | None = None,
        metric: str = "euclidean",
        p: float | None = None,
        backend: str = "auto",
        numerics: str = "exact",
        local: bool = False,
        threads: int | None = None,
        memory_budget: int | None = None,
        _name: str = "high",
        _graph: Any = None,
    ) -> None: ...
    @classmethod
    def from_knn_graph(
        cls,
        graph: Any,  # a SciPy sparse matrix (CSR or any format with tocsr()) or (indices, distances)
        *,
        labels: ArrayLike | None = None,
        name: str = "graph",
        backend: str = "auto",
        numerics: str = "exact",
        local: bool = False,
        threads: int | None = None,
        memory_budget: int | None = None,
    ) -> Evaluator: ...
    @property
    def n(self) -> int: ...
    def measure(
        self, low: ArrayLike, specs: list[Spec], labels: ArrayLike | None = None, numerics: str | None = None
    ) -> Result: ...
    def measure_many(
        self,
        lows: dict[str, ArrayLike],
        specs: list[Spec],
        labels: ArrayLike | None = None,
        numerics: str | None = None,
    ) -> Result: ...
    def map_rows(
        self, low: ArrayLike, rows: tuple[int, int], specs: list[Spec], labels: ArrayLike | None = None, name: str = "low"
    ) -> str: ...
    def knn(self, k: int, space: str = "high", numerics: str | None = None) -> KnnGraph: ...

def knn(
    X: ArrayLike,
    k: int,
    *,
    metric: str = "euclidean",
    p: float | None = None,
    backend: str = "auto",
    numerics: str = "exact",
    threads: int | None = None,
    memory_budget: int | None = None,
) -> KnnGraph: ...
