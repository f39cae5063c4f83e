#!/usr/bin/env python3
"""Steadiness & cohesiveness: ZADU 0.5.4 vs the faithful CLI in the same run.

On the golden datasets (tests/fixtures/golden/{blobs,ties}_{500,2000}) with random_state=0 and
ZADU's other defaults, times, per dataset and for scores only and scores + local values:

- ZADU: one `ZADU([{"id": "snc", "params": {"random_state": 0}}], hd, return_local=...)
  .measure(ld)` call in a subprocess (imports and loading excluded), with NumPy as installed
  and, for the agreement column, once more with NumPy's baseline sort
  (NPY_DISABLE_CPU_FEATURES, the sort faithful reproduces; see docs/measures.md);
- faithful, two columns from the same `faithful measure --spec snc:random_state=0 --json
  [--local]` runs: "call", the run's own timing of the evaluation (`run.timings.total_s`:
  validation, both kNN graphs and the measure; process start and reading the .npy files
  excluded), timed like ZADU's column; and "CLI", the whole process's wall time.

Best of --repeat runs per side; the ratios divide ZADU's time by faithful's call time and by its
CLI time. The agreement column is max |Δ| between faithful's scores and the baseline-sort ZADU
run's (0 = the same bits).

    python3 benches/snc_compare.py --python /path/to/venv/bin/python \\
        --faithful target/release/faithful --markdown docs/bench/snc_DATE.md --json ...json
"""
import argparse
import json
import os
import sys
import tempfile

from bench_common import REPO, run_measured, write_outputs

GOLDEN = os.path.join(REPO, "tests", "fixtures", "golden")
BASELINE = "X86_V3 X86_V4 AVX512_ICL"


def worker(args):
    import time

    import numpy as np
    from zadu import ZADU

    hd = np.load(os.path.join(GOLDEN, args.dataset, "hd.npy"))
    ld = np.load(os.path.join(GOLDEN, args.dataset, "ld.npy"))
    spec = [{"id": "snc", "params": {"random_state": 0}}]
    t = time.perf_counter()
    res = ZADU(spec, hd, return_local=args.local).measure(ld)
    seconds = time.perf_counter() - t
    score = res[0][0] if args.local else res[0]
    with open(args.result, "w") as f:
        json.dump({"seconds": seconds, "values": {k: float(v) for k, v in score.items()}}, f)


def zadu(py, dataset, local, baseline, tmp):
    result = os.path.join(tmp, "zadu.json")
    cmd = [py, __file__, "--worker", "--dataset", dataset, "--result", result] + (["--local"] if local else [])
    env = dict(os.environ)
    if baseline:
        env["NPY_DISABLE_CPU_FEATURES"] = BASELINE
    code, _, peak, _, err = run_measured(cmd, env=env)
    if code != 0:
        raise SystemExit(f"ZADU failed on {dataset}: {err[-2000:]}")
    with open(result) as f:
        out = json.load(f)
    return out["seconds"], peak, out["values"]


def faithful(exe, dataset, local):
    d = os.path.join(GOLDEN, dataset)
    cmd = [exe, "measure", "--high", f"{d}/hd.npy", "--low", f"{d}/ld.npy", "--spec", "snc:random_state=0", "--json"]
    code, wall, peak, out, err = run_measured(cmd + (["--local"] if local else []))
    if code != 0:
        raise SystemExit(f"faithful failed on {dataset}: {err}")
    report = json.loads(out)
    return wall, peak, report["projections"][0]["scores"][0]["values"], report["run"]["timings"]["total_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=os.environ.get("FAITHFUL_FIXTURE_PYTHON", sys.executable))
    ap.add_argument("--faithful", default=os.path.join(REPO, "target", "release", "faithful"))
    ap.add_argument("--datasets", default="blobs_500,ties_500,blobs_2000,ties_2000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dataset", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--local", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.datasets.split(","):
            for local in (False, True):
                z = [zadu(args.python, dataset, local, False, tmp) for _ in range(args.repeat)]
                f = [faithful(args.faithful, dataset, local) for _ in range(args.repeat)]
                _, _, exact = zadu(args.python, dataset, local, True, tmp)
                zs, fs, fc = min(r[0] for r in z), min(r[0] for r in f), min(r[3] for r in f)
                delta = max(abs(f[0][2][k] - exact[k]) for k in exact)
                rows.append({"dataset": dataset, "local": local, "zadu_s": zs, "faithful_call_s": fc,
                             "faithful_cli_s": fs, "ratio_call": zs / fc, "ratio_cli": zs / fs,
                             "zadu_peak_mib": max(r[1] for r in z),
                             "faithful_peak_mib": max(r[1] for r in f), "max_delta_vs_baseline_zadu": delta,
                             "faithful": f[0][2], "zadu_baseline_sort": exact, "zadu_installed": z[0][2]})
                print(dataset, "local" if local else "scores", f"ZADU {zs:.3f} s, faithful call {fc:.3f} s, CLI {fs:.3f} s",
                      file=sys.stderr)
    lines = [
        f"snc (random_state=0, ZADU's defaults: 150 iterations, walk_num_ratio 0.3, k = ⌊√n⌋, HDBSCAN); "
        f"best of {args.repeat}; {os.cpu_count()} CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "at the end. ZADU s = one ZADU(...).measure() call in a subprocess (imports and loading excluded); "
        "faithful call s = the same for faithful: the evaluation's own timing (run.timings.total_s: both "
        "kNN graphs and the measure; process start and .npy reading excluded); faithful CLI s = the whole "
        "`faithful measure` process; Δ = max |faithful − ZADU with NumPy's baseline sort| over both scores.",
        "",
        "| dataset | local values | ZADU s | faithful call s | ratio (call) | faithful CLI s | ratio (CLI) "
        "| ZADU peak MiB | faithful peak MiB | Δ |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['dataset']} | {'yes' if r['local'] else 'no'} | {r['zadu_s']:.3f} | "
                     f"{r['faithful_call_s']:.3f} | {r['ratio_call']:.1f}× | {r['faithful_cli_s']:.3f} | "
                     f"{r['ratio_cli']:.1f}× | {r['zadu_peak_mib']:.0f} | {r['faithful_peak_mib']:.0f} | "
                     f"{r['max_delta_vs_baseline_zadu']:.2g} |")
    write_outputs("\n".join(lines) + "\n", args.markdown, args.json_out, {"rows": rows})


if __name__ == "__main__":
    main()
