"""faithful_dr.dask on a LocalCluster of two worker processes: the folded result is the one
Evaluator.measure_many returns, bit for bit (its to_json text up to the run report, which
records how the work was split), also when a worker dies mid-run and the scheduler retries its
block; a spec that cannot be sharded is refused by name before any data moves."""

import json
import os
import sys
import threading

import cloudpickle
import numpy as np
import pytest
from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

import faithful_dr
from faithful_dr import dask as fdask
from conftest import on_gpu

SPECS = ["tnc:k=10", "mrre:k=7", "lcmc:k=10", "nh:k=5", "ca_tnc:k=10", "coranking:k_max=30"]


def scores_json(result):
    """The to_json text before the run report: the projections and their scores."""
    text = result.to_json()
    return text[: text.index(',"run":')]


def same_result(got, want):
    assert scores_json(got) == scores_json(want)
    g, w = got.run, want.run
    for key in ("n", "dim_high", "dims_low", "backend", "numerics"):
        assert g[key] == w[key], key
    # The same bits, not the same path: a span may take the fused co-ranking pass, the rank
    # table or the projection's k-d tree where the whole run took another (each reports its own
    # tallies), so the work is held to what every path does: each original row computed once at
    # least, and no tally negative.
    n = w["n"]
    assert g["work"]["distance_rows"] >= n, g["work"]
    for key in ("distance_rows", "ranks_from_knn", "ranks_counted", "rank_scans"):
        assert g["work"][key] >= 0 and w["work"][key] >= 0, key


def tie_heavy(n=1000, seed=3):
    """Coordinates from 3 (original) and 2 (projection) integer levels: many exact ties."""
    rng = np.random.default_rng(seed)
    high = rng.integers(0, 3, (n, 5)).astype(np.float64)
    low = rng.integers(0, 2, (n, 2)).astype(np.float32)
    return high, low, rng.integers(0, 4, n)


def local_cluster():
    return LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    )


@pytest.fixture(scope="module")
def client():
    with local_cluster() as cluster, Client(cluster) as c:
        yield c


@pytest.mark.parametrize("local", [False, True])
def test_two_workers_give_the_bits_of_measure_many_on_the_example(client, local):
    high, pca, labels = faithful_dr.example()
    _, rp, _ = faithful_dr.example("random_projection")
    lows = {"pca": pca, "random_projection": rp}
    want = faithful_dr.Evaluator(high, labels=labels, local=local).measure_many(lows, SPECS)
    got = fdask.measure(client, high, lows, SPECS, labels=labels, rows_per_task=300, local=local)
    same_result(got, want)
    assert list(got.projections) == ["pca", "random_projection"]
    assert (got.scores[0].local is not None) == local
    # Default task size, and the default coranking (k_max = n - 2, past the T&C range).
    got = fdask.measure(client, high, {"pca": pca}, ["coranking", "tnc"], labels=labels, local=local)
    want = faithful_dr.Evaluator(high, labels=labels, local=local).measure(pca, ["coranking", "tnc"])
    assert scores_json(got) == scores_json(want).replace('"name":"low"', '"name":"pca"', 1)


def test_two_workers_give_the_bits_of_measure_on_tie_heavy_data(client):
    high, low, labels = tie_heavy()
    want = faithful_dr.Evaluator(high, labels=labels, local=True).measure(low, SPECS)
    for _ in range(2):  # a second call on the same data and client: the same bits
        got = fdask.measure(client, high, {"low": low}, SPECS, labels=labels, rows_per_task=128, local=True)
        same_result(got, want)
    assert got.run["work"]["blocks"] == len(faithful_dr.shard_plan(len(high), 128)) > 4


def test_the_metric_reaches_the_workers_and_keys_their_cache(client):
    """metric= reaches every worker's evaluator: the fold is Evaluator(high, metric=...)'s bits,
    also right after a Euclidean run on the same data and workers (whose cached evaluator is
    keyed by the metric, so it is not reused), and a precomputed distance matrix shards too."""
    from scipy.spatial.distance import pdist, squareform

    high, low, labels = faithful_dr.example()
    specs = ["tnc:k=10", "mrre:k=7", "lcmc:k=10"]
    euclidean = fdask.measure(client, high, {"low": low}, specs, labels=labels, rows_per_task=300)
    for metric, p in [("cosine", None), ("minkowski", 3), ("correlation", None)]:
        want = faithful_dr.Evaluator(high, labels=labels, metric=metric, p=p).measure(low, specs)
        got = fdask.measure(client, high, {"low": low}, specs, labels=labels, metric=metric, p=p, rows_per_task=300)
        assert scores_json(got) == scores_json(want)
        assert scores_json(got) != scores_json(euclidean), metric
        assert got.run["spaces"]["high"]["metric"] == want.run["spaces"]["high"]["metric"]
    matrix = squareform(pdist(high, "cosine"))
    want = faithful_dr.Evaluator(matrix, labels=labels, metric="precomputed").measure(low, specs)
    got = fdask.measure(client, matrix, {"low": low}, specs, labels=labels, metric="precomputed", rows_per_task=300)
    assert scores_json(got) == scores_json(want)
    assert got.run["spaces"]["high"]["metric"] == "precomputed"


def test_the_backend_reaches_the_workers(client):
    """backend="gpu": each worker's evaluator serves its blocks on its GPU (lavapipe where no
    GPU exists; under CI=true a missing adapter fails), and the fold is the CPU's bits."""
    high, low, labels = tie_heavy(n=600, seed=9)
    want = faithful_dr.Evaluator(high, labels=labels, backend="cpu", local=True).measure(low, SPECS)
    got = on_gpu(
        lambda: fdask.measure(
            client, high, {"low": low}, SPECS, labels=labels, rows_per_task=150, backend="gpu", local=True
        )
    )
    assert scores_json(got) == scores_json(want)
    assert got.run["backend"] == "gpu" and got.run["numerics"] == "exact"
    # One block by hand: the partial names the backend that served it.
    ev = faithful_dr.Evaluator(high, labels=labels, backend="gpu")
    part = json.loads(on_gpu(lambda: ev.map_rows(low, (0, 296), SPECS)))
    assert part["backend"] == "gpu" and part["adapter"], part.get("fallback_reason")
    cpu = json.loads(faithful_dr.Evaluator(high, labels=labels, backend="cpu").map_rows(low, (0, 296), SPECS))
    assert cpu["backend"] == "cpu" and part["scores"] == cpu["scores"]


def test_a_spec_that_cannot_be_sharded_is_refused_by_name(client):
    high, low, _ = tie_heavy(200)
    with pytest.raises(ValueError, match="srho: cannot be computed in row shards"):
        fdask.measure(client, high, {"low": low}, ["tnc:k=5", "srho"])
    with pytest.raises(ValueError, match="nope"):
        fdask.measure(client, high, {"low": low}, ["nope"])
    with pytest.raises(ValueError, match="backend 'tpu'"):
        fdask.measure(client, high, {"low": low}, ["tnc:k=5"], backend="tpu")
    with pytest.raises(ValueError, match="both name the projection '1'"):
        fdask.measure(client, high, {1: low, "1": low}, ["tnc:k=5"])


class KillOnce(WorkerPlugin):
    """Kills its worker process (os._exit) while it runs the block `rows`, once: the marker
    file, created atomically, records that the kill happened."""

    name = "faithful-kill-once"

    def __init__(self, marker, rows):
        self.marker, self.rows = marker, rows

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or not str(key).endswith(f"-{self.rows[0]}-{self.rows[1]}"):
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        # Mid-run: the block's native computation has started when the process dies.
        threading.Timer(0.01, os._exit, args=(1,)).start()


def test_a_worker_killed_mid_run_is_retried_to_the_same_bits(tmp_path):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    high, low, labels = tie_heavy(1500, seed=9)
    blocks = faithful_dr.shard_plan(len(high), 128)
    victim = blocks[len(blocks) // 2]
    marker = tmp_path / "killed"
    want = faithful_dr.Evaluator(high, labels=labels, local=True).measure(low, SPECS)
    with local_cluster() as cluster, Client(cluster) as c:
        c.register_plugin(KillOnce(str(marker), victim))
        pids_before = set(json.dumps(p) for p in c.run(os.getpid).values())
        got = fdask.measure(c, high, {"low": low}, SPECS, labels=labels, rows_per_task=128, local=True)
        pids_after = set(json.dumps(p) for p in c.run(os.getpid).values())
    assert marker.exists(), "the victim block never ran"
    assert pids_after != pids_before, "no worker was restarted"
    same_result(got, want)
