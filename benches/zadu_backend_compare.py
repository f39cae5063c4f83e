#!/usr/bin/env python3
"""The Python entries side by side: ZADU 0.5.4 with its NumPy backend, ZADU with faithful's
backend (entry point `faithful` in `zadu.backends`), faithful's ZADU facade
(`faithful_dr.zadu.ZADU`), the native `faithful_dr.Evaluator`, and the faithful CLI, on the same
data in the same run.

For each n (default 2000, 5000, 10000): blobs(n) (D = 20, 5 clusters, 2-D PCA projection,
labels; tests/fixtures/generate.py), the nine-measure suite (tnc, mrre, lcmc, nh with k = 20,
stress, kl_div, dtm, srho, pr). Each entry is timed as a user calls it, construction included
(`ZADU(specs, hd, ...).measure(ld, label)`, `Evaluator(hd, labels=...).measure(ld, specs)`);
the CLI is the wall time of `faithful measure` on .npy files, process start and file reading
included. The entries run in turn within each repeat (so a change in the machine's load hits
all of them alike); the table keeps each one's best. Every entry's scores are compared with
ZADU's NumPy backend.

Needs the faithful_dr wheel and zadu==0.5.4 in the running interpreter (scripts/test_python.sh
makes target/py-venv) and the release CLI (target/release/faithful).

    target/py-venv/bin/python benches/zadu_backend_compare.py --sizes 2000,5000 --repeat 3 \\
        --markdown docs/bench/zadu_backend.md --json docs/bench/zadu_backend.json
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

from bench_common import REPO, load_generator, run_measured, write_outputs

SUITE = [("tnc", 20), ("mrre", 20), ("lcmc", 20), ("nh", 20), ("stress", None), ("kl_div", None),
         ("dtm", None), ("srho", None), ("pr", None)]
ENTRIES = ["zadu_numpy", "zadu_faithful", "facade", "native", "cli"]
TITLES = {
    "zadu_numpy": "ZADU numpy s",
    "zadu_faithful": "ZADU faithful s",
    "facade": "facade s",
    "native": "native s",
    "cli": "CLI s",
}


def zadu_specs():
    return [{"id": m, "params": {"k": k}} if k else {"id": m} for m, k in SUITE]


def cli_specs():
    return [f"{m}:k={k}" if k else m for m, k in SUITE]


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def as_dicts(scores):
    return [{k: float(v) for k, v in s.items()} for s in scores]


def entry_runner(name, hd, ld, label, files, cli):
    import zadu
    from zadu import ExecutionConfig

    import faithful_dr
    from faithful_dr.zadu import ZADU as Facade

    if name in ("zadu_numpy", "zadu_faithful"):
        backend = name.split("_")[1]
        return lambda: as_dicts(
            zadu.ZADU(zadu_specs(), hd, execution=ExecutionConfig(backend=backend)).measure(ld, label)
        )
    if name == "facade":
        return lambda: as_dicts(Facade(zadu_specs(), hd).measure(ld, label))
    if name == "native":
        return lambda: [dict(s.values) for s in faithful_dr.Evaluator(hd, labels=label).measure(ld, cli_specs()).scores]

    def run_cli():
        cmd = [cli, "measure", "--high", files[0], "--low", files[1], "--labels", files[2], "--json"]
        for s in cli_specs():
            cmd += ["--spec", s]
        code, wall, _, out, err = run_measured(cmd)
        if code != 0:
            raise RuntimeError(f"faithful CLI exit {code}: {err.strip()}")
        scores = json.loads(out)["projections"][0]["scores"]
        return wall, [dict(s["values"]) for s in scores]

    return run_cli


def largest_delta(got, want):
    return max(abs(g[k] - w[k]) for g, w in zip(got, want, strict=True) for k in w)


def bench(n, args, workdir):
    gen = load_generator()
    hd, ld, label = gen.make_dataset("blobs", n)
    hd, ld = np.ascontiguousarray(hd, dtype=np.float64), np.ascontiguousarray(ld, dtype=np.float64)
    label = np.asarray(label, dtype=np.int64)
    files = [os.path.join(workdir, f"{name}_{n}.npy") for name in ("hd", "ld", "label")]
    for path, array in zip(files, (hd, ld, label)):
        np.save(path, array)
    entries = [e for e in ENTRIES if not (e == "zadu_numpy" and n in args.skip_numpy)]
    runners = {e: entry_runner(e, hd, ld, label, files, args.cli) for e in entries}
    times = {e: [] for e in entries}
    scores = {}
    for _ in range(args.repeat):
        for e in entries:
            wall, out = timed(runners[e])
            if e == "cli":
                wall, out = out
            times[e].append(wall)
            scores[e] = out
            print(f"n={n} {e}: {wall:.3f} s", file=sys.stderr, flush=True)
    reference = scores.get("zadu_numpy")
    deltas = {e: (largest_delta(scores[e], reference) if reference else None) for e in entries}
    return {"n": n, "times": times, "best": {e: min(t) for e, t in times.items()}, "max_delta_vs_numpy": deltas}


def load():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def report(rows, args, loads):
    lines = [
        "Suite: tnc, mrre, lcmc, nh (k = 20), stress, kl_div, dtm, srho, pr; blobs(n), D = 20 -> 2-D PCA,"
        f" 5 labels; best of {args.repeat}; {os.cpu_count()} CPUs; Python entries timed in one process,"
        " construction included; the CLI as a whole process.",
        "",
        "| n | " + " | ".join(TITLES[e] for e in ENTRIES)
        + " | numpy / faithful backend | native / CLI | largest \\|Δ\\| vs numpy |",
        "|---:|" + "---:|" * len(ENTRIES) + "---:|---:|---:|",
    ]
    for r in rows:
        b = r["best"]
        speedup = f"{b['zadu_numpy'] / b['zadu_faithful']:.1f}×" if "zadu_numpy" in b else "–"
        deltas = [d for e, d in r["max_delta_vs_numpy"].items() if d is not None and e != "zadu_numpy"]
        delta = f"{max(deltas):.1e}" if deltas else "–"
        cells = [f"{b[e]:.3f}" if e in b else "skipped" for e in ENTRIES]
        lines.append(f"| {r['n']} | " + " | ".join(cells) + f" | {speedup} | {b['native'] / b['cli']:.2f} | {delta} |")
    lines += ["", f"Load average before / after: {loads[0]} / {loads[1]}.", ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="2000,5000,10000")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skip-numpy", default="", help="sizes at which ZADU's NumPy backend is not run")
    p.add_argument("--cli", default=os.path.join(REPO, "target", "release", "faithful"))
    p.add_argument("--markdown")
    p.add_argument("--json")
    args = p.parse_args()
    args.skip_numpy = {int(s) for s in args.skip_numpy.split(",") if s}
    from importlib.metadata import version

    loads = [load()]
    with tempfile.TemporaryDirectory() as workdir:
        rows = [bench(int(n), args, workdir) for n in args.sizes.split(",")]
    loads.append(load())
    payload = {
        "rows": rows,
        "repeat": args.repeat,
        "versions": {"zadu": version("zadu"), "faithful-dr": version("faithful-dr"), "python": platform.python_version()},
        "cpus": os.cpu_count(),
        "load_before_after": loads,
    }
    write_outputs(report(rows, args, loads), args.markdown, args.json, payload)


if __name__ == "__main__":
    main()
