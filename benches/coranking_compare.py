"""The co-ranking family: faithful's `coranking` against pyDRMetrics in the same run.

    python benches/coranking_compare.py --sizes 2000,5000 --faithful target/release/faithful \
        --json docs/bench/coranking_DATE.json --markdown docs/bench/coranking_DATE.md

Needs NumPy, tqdm and pyDRMetrics (`pip install pyDRMetrics==0.0.8 numpy tqdm`). Per n, a
tie-free Gaussian data set (D = 20) and a noisy 2-D projection are written as .npy; each tool
runs in its own process, timed with its peak RSS:
- pyDRMetrics: NumPy's distance matrices, then its `ranking_matrix`, `coranking_matrix` and
  `coranking_matrix_metrics` (what `DRMetrics` does for the co-ranking curves, without the
  plots and residual variances that need matplotlib and scikit-learn);
- faithful: `measure --spec coranking --json` (every K, T, C, MRRE, LCMC, Q_NX, R_NX).
The curves are compared (pyDRMetrics' QNN and LCMC from faithful's Q_NX through its
normalisations, see docs/measures.md) and the largest difference is reported.
"""

import argparse
import json
import os
import platform
import sys
import tempfile

from bench_common import run_measured, write_outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_data(d, n):
    import numpy as np

    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 20))
    y = x[:, :2] + 0.3 * rng.normal(size=(n, 2))
    np.save(os.path.join(d, "hd.npy"), x)
    np.save(os.path.join(d, "ld.npy"), y)


def worker(d):
    """pyDRMetrics on d/hd.npy, d/ld.npy; writes d/pydrmetrics.json."""
    import time

    import numpy as np
    from pyDRMetrics.coranking_matrix import coranking_matrix, coranking_matrix_metrics, ranking_matrix

    x, y = np.load(os.path.join(d, "hd.npy")), np.load(os.path.join(d, "ld.npy"))
    t0 = time.perf_counter()

    def distances(a):
        # Row by row from coordinate differences (as scipy's cdist), not the Gram-matrix shortcut
        # whose rounding could reorder near-equal distances.
        return np.array([np.sqrt(((a - a[i]) ** 2).sum(axis=1)) for i in range(len(a))])

    q = coranking_matrix(ranking_matrix(distances(x)), ranking_matrix(distances(y)))
    t, c, qnn, auc, lcmc, kmax, qlocal, qglobal = coranking_matrix_metrics(q)
    seconds = time.perf_counter() - t0
    out = {"seconds": seconds, "QNN": qnn.tolist(), "LCMC": lcmc.tolist(), "AUC": float(auc), "kmax": int(kmax)}
    with open(os.path.join(d, "pydrmetrics.json"), "w") as f:
        json.dump(out, f)


def compare(n, py, fa):
    """Largest difference between pyDRMetrics' QNN/LCMC/AUC and those implied by faithful's Q_NX."""
    score = fa["projections"][0]["scores"][0]
    qnx = score["curves"]["qnx"]
    m = n - 1
    qnn = [qnx[k - 1] * n / m for k in range(1, n - 1)] + [n / m]
    lcmc = [q - (k + 1) / (m - 1) for k, q in enumerate(qnn)]
    diff = max(abs(a - b) for a, b in zip(qnn + lcmc, py["QNN"] + py["LCMC"]))
    diff = max(diff, abs(sum(qnn) / m - py["AUC"]))
    return diff


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,5000")
    ap.add_argument("--faithful", default=os.path.join(REPO, "target", "release", "faithful"))
    ap.add_argument("--threads", default="0", help="faithful --threads (0: all cores)")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            make_data(d, n)
            code, py_wall, py_rss, _, err = run_measured([sys.executable, __file__, "--worker", d])
            if code != 0:
                raise SystemExit(f"pyDRMetrics failed at n={n}: {err[-2000:]}")
            with open(os.path.join(d, "pydrmetrics.json")) as f:
                py = json.load(f)
            cmd = [args.faithful, "measure", "--high", os.path.join(d, "hd.npy"), "--low", os.path.join(d, "ld.npy")]
            cmd += ["--spec", "coranking", "--json", "--threads", args.threads]
            code, fa_wall, fa_rss, out, err = run_measured(cmd)
            if code != 0:
                raise SystemExit(f"faithful failed at n={n}: {err[-2000:]}")
            fa = json.loads(out)
        row = {
            "n": n,
            "pydrmetrics_s": py_wall,
            "pydrmetrics_compute_s": py["seconds"],
            "pydrmetrics_rss_mib": py_rss,
            "faithful_s": fa_wall,
            "faithful_rss_mib": fa_rss,
            "speedup": py_wall / fa_wall,
            "max_curve_difference": compare(n, py, fa),
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    lines = [
        "| n | pyDRMetrics s (compute s) | RSS MiB | faithful s | RSS MiB | speed-up | max curve difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['pydrmetrics_s']:.2f} ({r['pydrmetrics_compute_s']:.2f}) | {r['pydrmetrics_rss_mib']:.0f} | "
            f"{r['faithful_s']:.2f} | {r['faithful_rss_mib']:.0f} | {r['speedup']:.1f}x | {r['max_curve_difference']:.1e} |"
        )
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()}
    payload = {"schema": "faithful-coranking-compare-1", "machine": machine, "faithful": args.faithful, "rows": rows}
    write_outputs("\n".join(lines) + "\n", args.markdown, args.json, payload)


if __name__ == "__main__":
    main()
