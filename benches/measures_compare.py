#!/usr/bin/env python3
"""The nine measures of issue 26 at n = 5000: faithful against each peer's own implementation,
in the same run, best of --repeat.

Peers (each the fastest available implementation of the measure):

- SickleJS (its sources bundled with esbuild, run by node; benches/sickle_worker.mjs): sammon,
  cca_stress (λ = 5), residual_variance, density_preservation (k = 20), nerv (perplexity 30,
  its shared bandwidths: faithful's `bandwidth=shared` is the same algorithm);
- tensorflow-projection-qm on the CPU: Jaccard (k = 10; knn_overlap's other outputs are more
  calls of the same kind) and the average local error (of squared distances: `ale:squared=true`);
- PaCMAP's `random_triplet_eval` (its repository's evaluation code, seeded): triplet_accuracy;
- TriMap's `global_score`: global_score.

faithful: `faithful measure --spec SPEC --json` per measure; "call" is the run's own timing
(`run.timings.total_s`: validation, resources and the measure; process start and reading the
.npy files excluded, like the peers' columns, which time the call on loaded arrays), "CLI" the
whole process. Also all nine in one call (one full-row sweep shared by sammon, cca_stress, ale
and nerv, with residual_variance's pair sums). The peers' warm-up (TensorFlow's tracing,
numba's compilation, V8's JIT) falls in their first run; best of --repeat keeps the warm ones.

    python3 benches/measures_compare.py --python PEER_VENV/bin/python --faithful target/release/faithful \\
        --sickle-bundle /tmp/sickle.mjs --pacmap-repo PACMAP_CHECKOUT --repeat 3 \\
        --markdown docs/bench/measures_DATE.md --json docs/bench/measures_DATE.json
"""
import argparse
import json
import os
import sys
import tempfile

from bench_common import REPO, run_measured, write_outputs

HERE = os.path.dirname(os.path.abspath(__file__))

# (faithful spec, value key, peer, peer measure, note)
ROWS = [
    ("sammon", "sammon_stress", "sickle", "sammon", ""),
    ("cca_stress:lambda=5", "cca_stress", "sickle", "cca_stress", ""),
    ("residual_variance", "residual_variance", "sickle", "residual_variance", "SickleJS includes the n zero self-distances"),
    ("nerv:bandwidth=shared", "nerv", "sickle", "nerv", "same bisection; exp and sums in another order"),
    ("knn_overlap:k=10", "jaccard", "tfpqm", "jaccard", ""),
    ("ale:squared=true", "average_local_error", "tfpqm", "average_local_error", "Gram-matrix squared distances"),
    ("density_preservation:k=20", "density_preservation", "sickle", "density_preservation", "SickleJS's radius differs"),
    ("triplet_accuracy", "triplet_accuracy", "pacmap", "triplet_accuracy", ""),
    ("global_score", "global_score", "trimap", "global_score", "normal equations vs SVD"),
]


def worker(a):
    """Runs one Python peer R times on the dataset; prints {"times", "value"}."""
    import time

    import numpy as np

    X, Y = np.load(a.hd), np.load(a.ld)
    if a.peer == "tfpqm":
        import tensorflow as tf
        from tensorflow_projection_qm.metrics import avg_local_error, jaccard

        Xt, Yt = tf.constant(X, dtype=tf.float64), tf.constant(Y, dtype=tf.float64)
        fn = {
            "jaccard": lambda: float(jaccard.jaccard_with_local(Xt, Yt, 10)[0]),
            "average_local_error": lambda: float(avg_local_error.average_local_error_with_local(Xt, Yt)[0]),
        }[a.measure]
    elif a.peer == "pacmap":
        import ast

        src = open(os.path.join(a.pacmap_repo, "evaluation", "evaluation.py")).read()
        node = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "random_triplet_eval")
        scope = {"np": np, "default_rng": lambda: np.random.default_rng(0)}
        exec(ast.get_source_segment(src, node), scope)
        fn = lambda: float(scope["random_triplet_eval"](X, Y, None))  # noqa: E731
    else:
        import trimap

        fn = lambda: float(trimap.TRIMAP().global_score(X, Y))  # noqa: E731
    times, value = [], None
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"times": times, "value": value}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--faithful", default=os.path.join(REPO, "target", "release", "faithful"))
    ap.add_argument("--sickle-bundle", required=True)
    ap.add_argument("--pacmap-repo", required=True)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--machine", default="", help="the machine and its load, for the receipt's text")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--peer")
    ap.add_argument("--measure")
    ap.add_argument("--hd")
    ap.add_argument("--ld")
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    tmp = tempfile.mkdtemp(prefix="faithful-measures-bench-")
    hd, ld = os.path.join(tmp, "hd.npy"), os.path.join(tmp, "ld.npy")
    gen = (
        "import sys, numpy as np; sys.path.insert(0, %r); import generate_oracle as g; "
        "X, Y = g.generic(%d); np.save(%r, X); np.save(%r, Y)"
        % (os.path.join(REPO, "tests", "fixtures", "measures"), a.n, hd, ld)
    )
    code, _, _, _, err = run_measured([a.python, "-c", gen])
    assert code == 0, err

    def faithful(specs):
        best_call, best_cli, values = None, None, None
        for _ in range(a.repeat):
            args = [a.faithful, "measure", "--high", hd, "--low", ld, "--json", "--backend", "cpu"]
            for s in specs:
                args += ["--spec", s]
            code, wall, _, out, err = run_measured(args)
            assert code == 0, err
            r = json.loads(out)
            call = r["run"]["timings"]["total_s"]
            best_call = call if best_call is None else min(best_call, call)
            best_cli = wall if best_cli is None else min(best_cli, wall)
            values = r["projections"][0]["scores"]
        return best_call, best_cli, values

    def peer(name, measure):
        if name == "sickle":
            cmd = ["node", os.path.join(HERE, "sickle_worker.mjs"), a.sickle_bundle, hd, ld, measure, str(a.repeat)]
        else:
            cmd = [a.python, os.path.abspath(__file__), "--worker", "--peer", name, "--measure", measure,
                   "--hd", hd, "--ld", ld, "--repeat", str(a.repeat), "--sickle-bundle", "-", "--pacmap-repo", a.pacmap_repo]
        code, _, rss, out, err = run_measured(cmd)
        assert code == 0, err[-2000:]
        r = json.loads(out.strip().splitlines()[-1])
        return min(r["times"]), r["value"], rss

    rows = []
    for spec, key, pname, pmeasure, note in ROWS:
        call, cli, scores = faithful([spec])
        value = scores[0]["values"][key]
        ptime, pvalue, prss = peer(pname, pmeasure)
        rows.append({"spec": spec, "key": key, "faithful_call_s": call, "faithful_cli_s": cli, "faithful_value": value,
                     "peer": pname, "peer_s": ptime, "peer_value": pvalue, "peer_rss_mib": prss, "note": note,
                     "ratio_call": ptime / call, "ratio_cli": ptime / cli})
        print(f"{spec}: faithful {call:.3f} s (CLI {cli:.3f} s), {pname} {ptime:.3f} s", file=sys.stderr)
    all_call, all_cli, _ = faithful([r[0] for r in ROWS])
    names = {"sickle": "SickleJS", "tfpqm": "tf-projection-qm", "pacmap": "PaCMAP eval", "trimap": "TriMap"}
    lines = [
        f"# The measures of issue 26 at n = {a.n}: faithful vs the peers, same run",
        "",
        f"Data: `generic({a.n})` of tests/fixtures/measures/generate_oracle.py (5 blobs in 10-D, a noisy linear 2-D projection). "
        f"Best of {a.repeat} runs per side, CPU only (`--backend cpu`), {os.cpu_count()} cores"
        + (f" ({a.machine}). " if a.machine else ", shared with other work. ")
        + "\"call\": faithful's own timing of the evaluation (`run.timings.total_s`); \"CLI\": the whole process (start, reading the .npy files). "
        "The peers' times are their calls on loaded arrays.",
        "",
        "| measure (faithful spec) | faithful call (s) | faithful CLI (s) | peer | peer (s) | peer ÷ call | peer ÷ CLI | faithful value | peer value | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['spec']}` | {r['faithful_call_s']:.4f} | {r['faithful_cli_s']:.4f} | {names[r['peer']]} | {r['peer_s']:.4f} | "
            f"{r['ratio_call']:.1f}× | {r['ratio_cli']:.1f}× | {r['faithful_value']!r} | {r['peer_value']!r} | {r['note']} |"
        )
    total_peer = sum(r["peer_s"] for r in rows)
    lines += [
        "",
        f"All nine in one faithful call (one full-row sweep for sammon, cca_stress, ale and nerv, with residual_variance's pair sums): "
        f"{all_call:.3f} s (CLI {all_cli:.3f} s); the peers' calls add up to {total_peer:.3f} s ({total_peer / all_call:.1f}×).",
        "",
    ]
    payload = {"n": a.n, "repeat": a.repeat, "rows": rows, "all_call_s": all_call, "all_cli_s": all_cli, "cores": os.cpu_count()}
    write_outputs("\n".join(lines), a.markdown, a.json, payload)


if __name__ == "__main__":
    main()
