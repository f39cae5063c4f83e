# Type stubs of the Rust extension faithful_dr._native (python/src).
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class Evaluator:
    def __init__(
        self,
        high: npt.NDArray[np.float64] | npt.NDArray[np.float32],
        high_name: str,
        labels: npt.NDArray[np.int64] | None,
        backend_name: str,
        numerics_name: str,
        local: bool,
        threads: int | None,
        memory_budget: int | None,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    def measure_many(
        self,
        lows: list[tuple[str, npt.NDArray[np.float64] | npt.NDArray[np.float32]]],
        spec_list: list[str | dict[str, Any]],
        labels: npt.NDArray[np.int64] | None = None,
    ) -> Evaluation: ...
    def knn(self, k: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], str]: ...

class Evaluation:
    def to_json(self) -> str: ...
    def run_json(self) -> str: ...
    def projections(self) -> list[tuple[str, list[dict[str, Any]]]]: ...

def example(
    projection: str = "pca",
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...
