"""Row shards on local Dask workers (issue 16): faithful_dr.dask.measure on 1 and 2 worker
processes (one thread each) against one in-process Evaluator.measure with 1 and 2 threads, on
the blobs(n) data of the CPU receipt (D = 20, 2-D PCA) with tnc + mrre + lcmc (k = 20). Per
configuration: wall time (best of --repeat), each worker's peak RSS (VmHWM) and its RSS
before the run, and the bytes moved: the inputs broadcast to every worker and the partials
gathered. Every folded result is checked against the in-process one (scores' JSON, byte for
byte). Then the docs/distributed.md model's prediction of each time from the per-pair rate of
the 1-thread in-process run at the smallest n.

    target/py-venv/bin/python benches/shard_scaling.py --sizes 20000,50000 --repeat 3 \
        --markdown docs/bench/shard_scaling_2026-12-01.md --json docs/bench/shard_scaling_2026-12-01.json

Needs faithful-dr (scripts/test_python.sh builds it into target/py-venv) and dask[distributed].
"""

import argparse
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import load_generator, write_outputs  # noqa: E402

import faithful_dr  # noqa: E402
from distributed import Client, LocalCluster, get_task_stream  # noqa: E402
from faithful_dr import dask as fdask  # noqa: E402

SPECS = ["tnc:k=20", "mrre:k=20", "lcmc:k=20"]


def scores_json(result):
    text = result.to_json()
    return text[: text.index(',"run":')]


def worker_rss():
    """In a worker: (peak RSS MiB, current RSS MiB) of its own address space: VmHWM and VmRSS
    (ru_maxrss would carry the forking parent's peak across the spawn's execve)."""
    kib = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                kib[key] = int(rest.split()[0])
    return kib["VmHWM"] / 1024, kib["VmRSS"] / 1024


def best_of(repeat, fn):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), times, out


def on_dask(workers, high, low, repeat, want):
    with LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
    ) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("faithful_dr"))
        before = [v[1] for v in client.run(worker_rss).values()]
        streams = []

        def run():
            with get_task_stream(client) as ts:
                got = fdask.measure(client, high, {"low": low}, SPECS)
            streams.append(ts.data)
            return got

        best, times, got = best_of(repeat, run)
        assert scores_json(got) == want, "the folded scores differ from one measure"
        peaks = [v[0] for v in client.run(worker_rss).values()]
        blocks = got.run["work"]["blocks"]
        # The partials' bytes, as the workers measured each task's result.
        partials = sum(t["nbytes"] for t in streams[-1] if str(t["key"]).startswith("faithful-shard-"))
    return {
        "workers": workers, "best_s": best, "times_s": times, "blocks": blocks,
        "worker_rss_before_mib": before, "worker_peak_rss_mib": peaks,
        "broadcast_bytes": workers * (high.nbytes + low.nbytes),
        "partial_bytes": partials,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,50000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    gen = load_generator()
    rows, rate = [], None
    for n in (int(s) for s in args.sizes.split(",")):
        high, low, _ = gen.make_dataset("blobs", n)
        runs = {}
        for threads in (1, 2):
            ev = faithful_dr.Evaluator(high, threads=threads)
            best, times, res = best_of(args.repeat, lambda: ev.measure(low, SPECS))
            runs[f"in-process, {threads} thread{'s' * (threads > 1)}"] = {"cores": threads, "best_s": best, "times_s": times}
            want = scores_json(res)
        if rate is None:
            # Pairs per second of one core: two spaces' distance rows, n rows of n each.
            rate = n * n / runs["in-process, 1 thread"]["best_s"]
        for workers in (1, 2):
            r = on_dask(workers, high, low, args.repeat, want)
            runs[f"dask, {workers} worker{'s' * (workers > 1)}"] = {"cores": workers, **r}
        for name, r in runs.items():
            r["model_s"] = n * n / (rate * r["cores"])
            rows.append({"n": n, "D": high.shape[1], "config": name, **r})
        print(f"n={n} done: load {os.getloadavg()}", file=sys.stderr)

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        "# Row shards on local Dask workers, 2026-12-01",
        "",
        f"Command: `{' '.join(['target/py-venv/bin/python', 'benches/shard_scaling.py'] + sys.argv[1:])}`. blobs(n) (D = 20, 2-D PCA; "
        "tests/fixtures/generate.py), tnc + mrre + lcmc (k = 20), best of "
        f"{args.repeat}. Machine: {platform.machine()}, {os.cpu_count()} logical CPUs shared with other "
        f"jobs; load average after the run: {load}. Dask workers are processes with one thread each; "
        "the default rows_per_task (four blocks per worker thread). Every folded result equals the "
        "in-process scores' JSON byte for byte (asserted). Model: n² / (rate · cores), rate = "
        f"{rate / 1e6:.1f} M rows·columns/s, from the 1-thread in-process run at n = {rows[0]['n']}.",
        "",
        "| n | configuration | best s | model s | blocks | worker RSS before MiB | worker peak RSS MiB | "
        "broadcast MiB | partials KiB |",
        "|---:|---|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in rows:
        mib = lambda xs: " / ".join(f"{x:.0f}" for x in xs)  # noqa: E731
        if "workers" in r:
            extra = (
                f"{r['blocks']} | {mib(r['worker_rss_before_mib'])} | {mib(r['worker_peak_rss_mib'])} | "
                f"{r['broadcast_bytes'] / 2**20:.1f} | {r['partial_bytes'] / 1024:.0f}"
            )
        else:
            extra = "– | – | – | – | –"
        lines.append(f"| {r['n']} | {r['config']} | {r['best_s']:.2f} | {r['model_s']:.2f} | {extra} |")
    text = "\n".join(lines) + "\n"
    write_outputs(text, args.markdown, args.json, {"load": load, "rate_pairs_per_s": rate, "rows": rows})


if __name__ == "__main__":
    main()
