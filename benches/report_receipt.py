#!/usr/bin/env python3
"""Receipt for issue 28: `faithful report` at n points (default 100 000), timed end to end.

Data: ten Gaussian blobs in D = 50 (seed 28), two projections (PCA from the first 20 000 rows'
SVD; a Gaussian random projection), integer labels (the blob). Runs
`faithful report --high H --low PCA --low RANDOM --labels Y --out report.html` `--repeat` times
and writes the wall times, the run's own report (`--json`-free: the HTML's size and the
process's peak RSS) as Markdown and JSON.

    python3 benches/report_receipt.py --faithful target/release/faithful --n 100000 \\
        --out-dir /tmp/report_receipt --markdown docs/bench/report_100k_DATE.md
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np


def data(n, d, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(10, d)) * 4.0
    labels = rng.integers(0, 10, size=n)
    x = centres[labels] + rng.normal(size=(n, d))
    head = x[: min(n, 20000)]
    mu = head.mean(axis=0)
    _, _, vt = np.linalg.svd(head - mu, full_matrices=False)
    pca = (x - mu) @ vt[:2].T
    rnd = x @ rng.normal(size=(d, 2)) / np.sqrt(d)
    return x, pca, rnd, labels.astype(np.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--faithful", required=True)
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out-dir", default="/tmp/report_receipt")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    x, pca, rnd, y = data(a.n, a.d, 28)
    paths = {}
    for name, arr in [("high", x), ("pca", pca), ("random", rnd), ("labels", y)]:
        paths[name] = os.path.join(a.out_dir, f"{name}.npy")
        np.save(paths[name], arr)
    out = os.path.join(a.out_dir, "report.html")
    cmd = [a.faithful, "report", "--high", paths["high"], "--low", paths["pca"], "--low", paths["random"],
           "--labels", paths["labels"], "--out", out, "--backend", a.backend]
    runs = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"faithful report failed ({p.returncode}): {p.stderr.strip()}")
        runs.append({"wall_s": round(wall, 3), "cpu_s": round(after.ru_utime + after.ru_stime
                                                             - before.ru_utime - before.ru_stime, 3)})
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    size = os.path.getsize(out)
    load = os.getloadavg()
    result = {"n": a.n, "d": a.d, "command": " ".join(cmd), "runs": runs,
              "best_wall_s": min(r["wall_s"] for r in runs), "peak_rss_mb": round(peak_mb, 1),
              "html_bytes": size, "loadavg": load, "cpus": os.cpu_count()}
    print(json.dumps(result, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"# `faithful report` at n = {a.n}: receipt\n\n")
            f.write(f"Data: ten Gaussian blobs, D = {a.d}, seed 28; projections PCA and random; labels "
                    f"(benches/report_receipt.py). Machine: {os.cpu_count()} CPUs, load average "
                    f"{load[0]:.1f} at the end.\n\n`{' '.join(cmd)}`\n\n")
            f.write("| run | wall (s) | CPU (s) |\n|---|---|---|\n")
            for t, r in enumerate(runs):
                f.write(f"| {t + 1} | {r['wall_s']} | {r['cpu_s']} |\n")
            f.write(f"\nBest {result['best_wall_s']} s; peak RSS {result['peak_rss_mb']} MB; "
                    f"report.html {size / 1e6:.1f} MB.\n")


if __name__ == "__main__":
    main()
