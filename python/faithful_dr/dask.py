"""Exact row shards on a Dask cluster (docs/distributed.md).

`measure(client, high, lows, specs)` sends the original space, the projections and the labels
to every worker once (`client.scatter(..., broadcast=True)`), submits one task per row block
and projection (`Evaluator.map_rows`), gathers the partials and folds them: the `Result` is the
one `Evaluator(high, local=local).measure_many(lows, specs)` returns, score for score and bit
for bit. Each task is pure and its key is derived from the inputs, the specs and its block, so
a task that the scheduler retries (a worker died) or runs twice (speculation) gives the same
bytes. Needs `pip install "faithful-dr[dask]"`.
"""

import threading

from . import _inputs
from .evaluator import Evaluator
from .shard import check_shardable, fold, shard_plan

# Per worker process: the last evaluator built, by input token (a worker runs many blocks of
# one run; the original space is converted once, not once per block).
_cached = {}
_cache_lock = threading.Lock()


def measure(
    client, high, lows, specs, *, labels=None, metric="euclidean", p=None, rows_per_task=None, backend="auto",
    local=False,
):
    """Scores `specs` on each projection of `lows` ({name: n x d array}) on the Dask cluster of
    `client`. rows_per_task: rows per task (rounded to blocks of NumPy's summation tree; None:
    about four tasks per worker thread, at least 128 rows). backend: each worker's evaluator's
    option, as `Evaluator`'s ("auto": the worker's hardware GPU for a block of rows x n pairs
    large enough, else its CPU; "gpu": a wgpu adapter on every worker, or the task fails);
    a shard is always exact and its partial names the backend that served it. local: also
    return per-point values. metric, p: the original space's metric, as `Evaluator`'s (scipy's
    names; "precomputed" with `high` an n x n distance matrix); every worker's evaluator uses
    it, and the folded run report names it. A spec that cannot be sharded raises ValueError
    naming it before any data is sent."""
    from dask.base import tokenize

    if not isinstance(lows, dict) or not lows:
        raise ValueError("lows: expected a non-empty dict {name: projection}")
    check_shardable(specs)
    high = _inputs.points(high, "high")
    lows = dict(_inputs.projections(lows))
    labels = None if labels is None else _inputs.labels(labels)
    # The evaluator's own checks (backend name, labels' length) on the client, before any
    # data moves; its work is lazy, so this costs a copy of `high`.
    Evaluator(high, labels=labels, metric=metric, p=p, backend=backend)
    n = high.shape[0]
    if rows_per_task is None:
        threads = sum(client.nthreads().values()) or 1
        rows_per_task = max(128, -(-n // (4 * threads)))
    blocks = shard_plan(n, rows_per_task)

    # The worker's cached evaluator is keyed by everything it was built from, the metric too.
    token = tokenize(high, labels, metric, p, backend)
    # Fresh keys for the data (hash=False): a content-hashed key of an earlier call may still be
    # in release on the workers, which would cancel this call's tasks ("lost dependencies").
    high_f = client.scatter(high, broadcast=True, hash=False)
    labels_f = None if labels is None else client.scatter(labels, broadcast=True, hash=False)
    futures = []
    for name, low in lows.items():
        low_f = client.scatter(low, broadcast=True, hash=False)
        run = tokenize(token, name, low, specs)
        for start, end in blocks:
            futures.append(
                client.submit(
                    _map_block, token, high_f, labels_f, (metric, p), backend, name, low_f, (start, end), specs,
                    key=f"faithful-shard-{run}-{start}-{end}", pure=True,
                )
            )
    partials = client.gather(futures)
    return fold(partials, local=local)


def _map_block(token, high, labels, space, backend, name, low, rows, specs):
    """One task: the partial of `rows` on projection `name` (runs on a worker); `space` is the
    original space's (metric, p)."""
    with _cache_lock:
        ev = _cached.get(token)
        if ev is None:
            # One thread per task: a worker runs as many tasks at once as it has threads.
            metric, p = space
            ev = Evaluator(high, labels=labels, metric=metric, p=p, backend=backend, threads=1)
            _cached.clear()
            _cached[token] = ev
    return ev.map_rows(low, rows, specs, name=name)
