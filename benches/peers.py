#!/usr/bin/env python3
"""faithful against its peers on identical data, in one run.

For each n (default 2000, 5000, 10000) this script builds blobs(n) (D=20, 5 Gaussian
clusters, 2-D PCA projection: the generator of tests/fixtures/generate.py, as in
benches/zadu_compare.py), saves hd/ld .npy files, and runs, each in its own process (so
every peak RSS is that tool's own, from os.wait4):

  knn         faithful knn --backend cpu (and --backend gpu where an adapter exists and
              n <= --gpu-max-n)  vs  FAISS IndexFlatL2 (exact, float32), k = 20.
              FAISS is not tie-exact and computes in float32: the script reports the
              fraction of rows whose 20 neighbours (self excluded, in order) equal faithful's.
  tnc         faithful measure --spec tnc:k=20  vs  sklearn.manifold.trustworthiness
              (n_neighbors=20); |delta| of the trustworthiness value.
  tnc+mrre+lcmc  faithful measure (the three, k=20)  vs  ZADU 0.5.4; max |delta| of the scores.

Times: a peer's time is its computation alone, in-process (imports, data loading excluded;
FAISS: index build + search; ZADU: one ZADU(...).measure() call); faithful's is the wall
time of its whole CLI process (start-up, file reading and JSON output included). Ratios are
peer / faithful (> 1: faithful is faster). Best of --repeat runs.

Run it with an interpreter that has numpy, zadu==0.5.4, scikit-learn and faiss-cpu:
    /work/venv-zadu/bin/python benches/peers.py --markdown docs/bench/peers.md
    python benches/peers.py --sizes 2000 --repeat 1 --faithful target/release/faithful
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_common import REPO, load_generator, run_measured, write_outputs

K = 20


# --------------------------------------------------------------------------
# Workers (each runs in its own process)
# --------------------------------------------------------------------------
def worker(args):
    import numpy as np

    d = args.dir
    if args.worker == "gen":
        hd, ld, _ = load_generator().make_dataset("blobs", args.n)
        np.save(os.path.join(d, "hd.npy"), hd)
        np.save(os.path.join(d, "ld.npy"), ld)
        return
    hd = np.load(os.path.join(d, "hd.npy"))
    ld = np.load(os.path.join(d, "ld.npy"))
    out = {}
    if args.worker == "faiss":
        import faiss

        x = np.ascontiguousarray(hd, dtype=np.float32)
        t0 = time.perf_counter()
        index = faiss.IndexFlatL2(x.shape[1])
        index.add(x)
        _, idx = index.search(x, K + 1)
        out["seconds"] = time.perf_counter() - t0
        # Drop self (wherever FAISS put it); if self is missing (ties), drop the last.
        rows = []
        for i, r in enumerate(idx):
            r = [int(j) for j in r]
            r.remove(i) if i in r else r.pop()
            rows.append(r)
        np.save(os.path.join(d, "faiss_idx.npy"), np.array(rows, dtype=np.int64))
        out["faiss_version"] = faiss.__version__
        out["threads"] = faiss.omp_get_max_threads()
    elif args.worker == "sklearn":
        import sklearn
        from sklearn.manifold import trustworthiness

        t0 = time.perf_counter()
        out["trustworthiness"] = float(trustworthiness(hd, ld, n_neighbors=K))
        out["seconds"] = time.perf_counter() - t0
        out["sklearn_version"] = sklearn.__version__
    elif args.worker == "zadu":
        from importlib.metadata import version

        from zadu import ZADU

        specs = [{"id": i, "params": {"k": K}} for i in ("tnc", "mrre", "lcmc")]
        t0 = time.perf_counter()
        scores = ZADU(specs, hd).measure(ld)
        out["seconds"] = time.perf_counter() - t0
        out["scores"] = [{k: float(v) for k, v in s.items()} for s in scores]
        out["zadu_version"] = version("zadu")
    with open(os.path.join(d, args.worker + ".json"), "w") as f:
        json.dump(out, f)


# --------------------------------------------------------------------------
# Orchestrator
# --------------------------------------------------------------------------
def run(cmd, env=None):
    """(exit code, wall seconds, peak RSS MiB, stdout, stderr) of cmd in its own process."""
    return run_measured(cmd, env=env)


def best(runs):
    """The run with the smallest time; runs are (seconds, rss, payload)."""
    return min(runs, key=lambda r: r[0])


def must(code, err, what):
    if code != 0:
        raise SystemExit(f"{what} failed (exit {code}): {err.strip()[-2000:]}")


def py_worker(name, d, n, repeat):
    runs = []
    for _ in range(repeat):
        code, _, rss, _, err = run([sys.executable, __file__, "--worker", name, "--dir", d, "--n", str(n)])
        must(code, err, name)
        with open(os.path.join(d, name + ".json")) as f:
            res = json.load(f)
        runs.append((res["seconds"], rss, res))
    return best(runs)


def faithful_cli(exe, args, repeat, env):
    runs = []
    for _ in range(repeat):
        code, wall, rss, out, err = run([exe] + args, env=env)
        must(code, err, "faithful " + " ".join(args))
        runs.append((wall, rss, out))
    return best(runs)


def gpu_available(exe, env):
    code, _, _, out, _ = run([exe, "backends", "--json"], env=env)
    if code != 0:
        return None
    gpu = [b for b in json.loads(out)["backends"] if b["backend"] == "gpu"][0]
    return gpu["adapters"][0]["name"] if gpu["status"] == "available" and gpu["adapters"] else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,5000,10000")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs per tool")
    ap.add_argument("--faithful", default=None, help="the faithful binary (default: build target/release/faithful)")
    ap.add_argument("--gpu-max-n", type=int, default=2000, help="largest n for faithful --backend gpu (software adapters are slow)")
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--markdown", help="also write the tables here")
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    import numpy as np

    exe = args.faithful
    if exe is None:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        exe = os.path.join(REPO, "target", "release", "faithful")
        # Another build may replace the binary mid-run: run a private copy.
        private = os.path.join(tempfile.mkdtemp(prefix="faithful-peers-"), "faithful")
        shutil.copy2(exe, private)
        exe = private
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
    adapter = None if args.no_gpu else gpu_available(exe, env)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    specs = [f"--spec={i}:k={K}" for i in ("tnc", "mrre", "lcmc")]
    results = []
    for n in sizes:
        d = tempfile.mkdtemp(prefix=f"faithful-peers-{n}-")
        try:
            code, _, _, _, err = run([sys.executable, __file__, "--worker", "gen", "--dir", d, "--n", str(n)])
            must(code, err, "data generation")
            hd, ld = os.path.join(d, "hd.npy"), os.path.join(d, "ld.npy")
            r = {"n": n}
            # kNN
            idx_path = os.path.join(d, "faithful_idx.npy")
            r["faithful_knn_cpu"] = faithful_cli(exe, ["knn", "--data", hd, "--k", str(K), "--backend", "cpu", "--out", idx_path], args.repeat, env)[:2]
            faiss = py_worker("faiss", d, n, args.repeat)
            r["faiss_knn"] = faiss[:2]
            r["faiss_version"] = faiss[2]["faiss_version"]
            mine, theirs = np.load(idx_path), np.load(os.path.join(d, "faiss_idx.npy"))
            r["faiss_identical_rows"] = float(np.mean(np.all(mine == theirs, axis=1)))
            r["faiss_identical_sets"] = float(np.mean([set(a) == set(b) for a, b in zip(mine.tolist(), theirs.tolist())]))
            if adapter and n <= args.gpu_max_n:
                gpu_idx = os.path.join(d, "gpu_idx.npy")
                r["faithful_knn_gpu"] = faithful_cli(exe, ["knn", "--data", hd, "--k", str(K), "--backend", "gpu", "--out", gpu_idx], args.repeat, env)[:2]
                r["gpu_knn_identical"] = bool(np.array_equal(np.load(gpu_idx), mine))
            # trustworthiness
            t, rss, out = faithful_cli(exe, ["measure", "--high", hd, "--low", ld, f"--spec=tnc:k={K}", "--backend", "cpu", "--json"], args.repeat, env)
            r["faithful_tnc"] = (t, rss)
            tw = json.loads(out)["projections"][0]["scores"][0]["values"]["trustworthiness"]
            sk = py_worker("sklearn", d, n, args.repeat)
            r["sklearn_tnc"] = sk[:2]
            r["sklearn_version"] = sk[2]["sklearn_version"]
            r["sklearn_delta"] = abs(sk[2]["trustworthiness"] - tw)
            # tnc + mrre + lcmc
            t, rss, out = faithful_cli(exe, ["measure", "--high", hd, "--low", ld, *specs, "--backend", "cpu", "--json"], args.repeat, env)
            r["faithful_eval_cpu"] = (t, rss)
            mine_scores = {(s["id"], k): v for s in json.loads(out)["projections"][0]["scores"] for k, v in s["values"].items()}
            if adapter and n <= args.gpu_max_n:
                t, rss, out = faithful_cli(exe, ["measure", "--high", hd, "--low", ld, *specs, "--backend", "gpu", "--json"], args.repeat, env)
                r["faithful_eval_gpu"] = (t, rss)
                gpu_scores = {(s["id"], k): v for s in json.loads(out)["projections"][0]["scores"] for k, v in s["values"].items()}
                r["gpu_eval_identical"] = gpu_scores == mine_scores
            zadu = py_worker("zadu", d, n, args.repeat)
            r["zadu_eval"] = zadu[:2]
            r["zadu_version"] = zadu[2]["zadu_version"]
            theirs = {}
            for mid, s in zip(("tnc", "mrre", "lcmc"), zadu[2]["scores"]):
                for k, v in s.items():
                    theirs[(mid, k)] = v
            r["zadu_max_delta"] = max(abs(theirs[key] - v) for key, v in mine_scores.items())
            results.append(r)
            print(f"n={n} done", file=sys.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    write_outputs(tables(results, adapter, args), args.markdown, args.json, {"adapter": adapter, "results": results})


def tables(results, adapter, args):
    def s(x):
        return "–" if x is None else f"{x[0]:.3f}"

    def mib(x):
        return "–" if x is None else f"{x[1]:.0f}"

    def ratio(peer, mine):
        return "–" if peer is None or mine is None else f"{peer[0] / mine[0]:.2f}×"

    first = results[0] if results else {}
    lines = [
        f"k = {K}; blobs(n), D=20 -> 2-D PCA; best of {args.repeat}; {os.cpu_count()} CPUs; "
        f"FAISS {first.get('faiss_version')}, scikit-learn {first.get('sklearn_version')}, ZADU {first.get('zadu_version')}; "
        f"faithful GPU: {adapter or 'no adapter'}" + (f" (n <= {args.gpu_max_n})" if adapter else ""),
        "",
        "Peer times are in-process computation only; faithful's are whole CLI processes. Ratio = peer / faithful CPU.",
        "",
        "| n | task | faithful CPU s | faithful GPU s | peer | peer s | ratio | faithful MiB | peer MiB | agreement |",
        "|---:|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        n = r["n"]
        gpu_knn = r.get("faithful_knn_gpu")
        agree = f"{100 * r['faiss_identical_rows']:.2f} % rows identical ({100 * r['faiss_identical_sets']:.2f} % same sets)"
        if "gpu_knn_identical" in r:
            agree += "; GPU = CPU" if r["gpu_knn_identical"] else "; GPU differs"
        lines.append(f"| {n} | kNN | {s(r['faithful_knn_cpu'])} | {s(gpu_knn)} | FAISS IndexFlatL2 | {s(r['faiss_knn'])} | {ratio(r['faiss_knn'], r['faithful_knn_cpu'])} | {mib(r['faithful_knn_cpu'])} | {mib(r['faiss_knn'])} | {agree} |")
        lines.append(f"| {n} | trustworthiness | {s(r['faithful_tnc'])} | – | sklearn | {s(r['sklearn_tnc'])} | {ratio(r['sklearn_tnc'], r['faithful_tnc'])} | {mib(r['faithful_tnc'])} | {mib(r['sklearn_tnc'])} | \\|Δ\\| = {r['sklearn_delta']:.1e} |")
        agree = f"max \\|Δ\\| = {r['zadu_max_delta']:.1e}"
        if "gpu_eval_identical" in r:
            agree += "; GPU = CPU" if r["gpu_eval_identical"] else "; GPU differs"
        lines.append(f"| {n} | tnc+mrre+lcmc | {s(r['faithful_eval_cpu'])} | {s(r.get('faithful_eval_gpu'))} | ZADU 0.5.4 | {s(r['zadu_eval'])} | {ratio(r['zadu_eval'], r['faithful_eval_cpu'])} | {mib(r['faithful_eval_cpu'])} | {mib(r['zadu_eval'])} | {agree} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
