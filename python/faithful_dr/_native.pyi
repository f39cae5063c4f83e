# Type stubs of the Rust extension faithful_dr._native (python/src).
from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str

class Evaluator:
    def __init__(
        self,
        high: npt.NDArray[np.float64] | npt.NDArray[np.float32] | None,
        high_name: str,
        labels: npt.NDArray[np.int64] | None,
        backend_name: str,
        numerics_name: str,
        local: bool,
        threads: int | None,
        memory_budget: int | None,
        metric: str | None = None,
        graph: tuple[int, npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]] | None = None,
    ) -> None: ...
    @property
    def n(self) -> int: ...
    def measure_many(
        self,
        lows: list[tuple[str, npt.NDArray[np.float64] | npt.NDArray[np.float32]]],
        spec_list: list[str | dict[str, Any]],
        labels: npt.NDArray[np.int64] | None = None,
        numerics_name: str | None = None,
    ) -> Evaluation: ...
    def knn(
        self, k: int, numerics_name: str | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], str]: ...
    def map_rows(
        self,
        low_name: str,
        low: npt.NDArray[np.float64] | npt.NDArray[np.float32],
        rows: tuple[int, int],
        spec_list: list[str | dict[str, Any]],
        labels: npt.NDArray[np.int64] | None = None,
    ) -> str: ...

class Evaluation:
    def to_json(self) -> str: ...
    def run_json(self) -> str: ...
    def projections(self) -> list[tuple[str, list[dict[str, Any]]]]: ...

def example(
    projection: str = "pca",
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]: ...

# Row shards (python/src/shard.rs; used by shard.py and dask.py).
def shard_plan(n: int, max_rows: int) -> list[tuple[int, int]]: ...
def measures_json() -> str: ...
def check_shardable(spec_list: list[str | dict[str, Any]]) -> None: ...
def fold(partials: list[str], local: bool) -> Evaluation: ...

# Resources for ZADU's backend protocol (python/src/zadu_resources.rs; used by zadu_backend.py).
def rank_comparisons(
    orig: npt.ArrayLike, emb: npt.ArrayLike, k: int, membership_ks: list[int]
) -> dict[str, Any]: ...
def pair_statistics(
    orig: npt.ArrayLike,
    emb: npt.ArrayLike,
    sums: bool,
    ranks: bool,
    isotonic: bool,
    memory_budget: int | None,
) -> dict[str, Any]: ...
def densities(points_: npt.ArrayLike, sigmas: list[float]) -> list[npt.NDArray[np.float64]] | None: ...
def condensed_distances(points_: npt.ArrayLike) -> npt.NDArray[np.float64]: ...
def pair_order(distances: npt.NDArray[np.float64]) -> tuple[Any, npt.NDArray[np.float64]]: ...
def topographic_product(orig: npt.ArrayLike, emb: npt.ArrayLike, k: int, ks: list[int]) -> list[float]: ...
def neighbor_statistics(
    orig_knn: npt.NDArray[np.int64], emb_knn: npt.NDArray[np.int64], lcmc_ks: list[int], nd_ks: list[int]
) -> tuple[list[npt.NDArray[np.float64]], list[float]]: ...
