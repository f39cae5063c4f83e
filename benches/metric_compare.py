#!/usr/bin/env python3
"""Cosine trustworthiness & continuity: faithful against scikit-learn, in one run.

A text-embedding shape (default n = 20 000, D = 384): 40 Gaussian topics on the unit sphere's
neighbourhood (unit topic directions plus noise, then each row normalised, as sentence
embeddings are), and its 2-D PCA. Each tool runs in its own process, so every peak RSS is its
own (os.wait4):

  faithful   faithful measure --metric cosine --spec tnc:k=K (the CLI process: start-up, file
             reading and JSON included), --backend cpu, and gpu where an adapter serves
  sklearn    sklearn.manifold.trustworthiness(hd, ld, n_neighbors=K, metric="cosine") (its
             computation alone; imports and loading excluded): an n x n float64 distance
             matrix and its full argsort, O(n^2) memory

Ratios are sklearn / faithful (> 1: faithful is faster), best of --repeat runs each; |delta| is
the difference of the trustworthiness values (scikit-learn's own cosine rounds differently from
scipy's, so a near-tie may order differently; faithful's is scipy's, bit for bit).

    python benches/metric_compare.py --faithful target/release/faithful --markdown docs/bench/metric_cosine.md
    python benches/metric_compare.py --sizes 5000 --repeat 1
"""
import argparse
import json
import os
import sys
import tempfile
import time

from bench_common import run_measured

K = 10
# scipy-openblas 0.3.31's AVX-512 (SkylakeX) GEMM kernel crashed with SIGSEGV in scikit-learn's
# 20 000 x 20 000 cosine GEMM on the receipt machine (a KVM Xeon with AVX-512); its Haswell
# kernel runs it. Set before NumPy loads in the worker processes; an explicit value is kept.
os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")


def worker(args):
    import numpy as np

    d = args.dir
    if args.worker == "gen":
        rng = np.random.default_rng(384)
        topics = rng.normal(size=(40, args.dim))
        topics /= np.linalg.norm(topics, axis=1, keepdims=True)
        lab = rng.integers(0, 40, args.n)
        hd = topics[lab] + rng.normal(scale=0.7 / np.sqrt(args.dim), size=(args.n, args.dim))
        hd /= np.linalg.norm(hd, axis=1, keepdims=True)
        centred = hd - hd.mean(axis=0)
        _, _, vt = np.linalg.svd(centred[: min(args.n, 4000)], full_matrices=False)
        ld = centred @ vt[:2].T
        np.save(os.path.join(d, "hd.npy"), np.ascontiguousarray(hd))
        np.save(os.path.join(d, "ld.npy"), np.ascontiguousarray(ld))
        return
    hd = np.load(os.path.join(d, "hd.npy"))
    ld = np.load(os.path.join(d, "ld.npy"))
    import sklearn
    from sklearn.manifold import trustworthiness

    t0 = time.perf_counter()
    t = float(trustworthiness(hd, ld, n_neighbors=K, metric="cosine"))
    out = {"trustworthiness": t, "seconds": time.perf_counter() - t0, "sklearn_version": sklearn.__version__}
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="20000")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--faithful", default=os.path.join("target", "release", "faithful"))
    p.add_argument("--backends", default="cpu,gpu")
    p.add_argument("--json")
    p.add_argument("--markdown")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--dir", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            me = [sys.executable, os.path.abspath(__file__), "--dir", d, "--n", str(n), "--dim", str(args.dim)]
            code, *_ = run_measured(me + ["--worker", "gen"])
            assert code == 0, "data generation failed"
            best = {}
            for _ in range(args.repeat):
                code, wall, rss, out, err = run_measured(me + ["--worker", "sklearn"])
                if code != 0:
                    # A negative code is the signal that ended it (-9: killed, e.g. out of memory).
                    best["sklearn"] = {"error": err.strip().splitlines()[-1:] or [f"exit code {code}"],
                                       "peak_rss_mib": rss}
                    break
                res = json.loads(out)
                b = best.setdefault("sklearn", {**res, "peak_rss_mib": rss})
                if res["seconds"] < b["seconds"]:
                    best["sklearn"] = {**res, "peak_rss_mib": rss}
            for backend in args.backends.split(","):
                cmd = [args.faithful, "measure", "--high", os.path.join(d, "hd.npy"), "--low", os.path.join(d, "ld.npy"),
                       "--metric", "cosine", "--spec", f"tnc:k={K}", "--json", "--backend", backend]
                for _ in range(args.repeat):
                    code, wall, rss, out, err = run_measured(cmd)
                    if code != 0:
                        best[f"faithful_{backend}"] = {"error": err.strip()}
                        break
                    v = json.loads(out)
                    res = {"seconds": wall, "peak_rss_mib": rss, "trustworthiness":
                           v["projections"][0]["scores"][0]["values"]["trustworthiness"],
                           "backend": v["run"]["backend"], "fallback_reason": v["run"]["fallback_reason"],
                           "adapter": (v["run"].get("adapter") or {}).get("name")}
                    b = best.get(f"faithful_{backend}")
                    if b is None or "error" in b or wall < b["seconds"]:
                        best[f"faithful_{backend}"] = res
            rows.append({"n": n, "dim": args.dim, "k": K, "results": best})
    report = {"command": " ".join(sys.argv), "cpus": os.cpu_count(), "rows": rows,
              "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE")}
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        open(args.json, "w").write(text + "\n")
    if args.markdown:
        lines = ["| n | D | tool | backend served | best s | peak RSS MiB | sklearn / faithful | trustworthiness |",
                 "|---:|---:|---|---|---:|---:|---:|---|"]
        for r in rows:
            sk = r["results"].get("sklearn", {})
            for tool, res in r["results"].items():
                if "error" in res:
                    lines.append(f"| {r['n']} | {r['dim']} | {tool} | error | – | – | – | {res['error']} |")
                    continue
                ratio = sk.get("seconds", float("nan")) / res["seconds"] if tool != "sklearn" and "seconds" in sk else ""
                ratio = f"{ratio:.1f}" if ratio != "" else "–"
                lines.append(f"| {r['n']} | {r['dim']} | {tool} | {res.get('backend', 'cpu')} | {res['seconds']:.2f} | "
                             f"{res['peak_rss_mib']:.0f} | {ratio} | {res['trustworthiness']!r} |")
        open(args.markdown, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
