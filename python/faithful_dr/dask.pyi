# Type stubs of faithful_dr.dask (exact row shards on a Dask cluster).
from typing import Any

import numpy.typing as npt

from .evaluator import Result

def measure(
    client: Any,  # a dask.distributed.Client (dask is optional)
    high: npt.ArrayLike,
    lows: dict[str, npt.ArrayLike],
    specs: list[str | dict[str, Any]],
    *,
    labels: npt.ArrayLike | None = None,
    metric: str = "euclidean",
    p: float | None = None,
    rows_per_task: int | None = None,
    backend: str = "auto",
    local: bool = False,
) -> Result: ...
