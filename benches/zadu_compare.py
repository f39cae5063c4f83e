#!/usr/bin/env python3
"""Side-by-side benchmark: ZADU 0.5.4 vs the faithful CLI on blobs(n) data.

For each n (default 2000, 5000, 10000) this script

1. builds blobs(n) (D=20, 5 Gaussian clusters, 2-D PCA projection, labels: the
   same generator as tests/fixtures/generate.py) and saves hd/ld/label .npy files
   into a temporary directory;
2. times ZADU in a subprocess: one ``ZADU(specs, hd).measure(ld, label)`` call
   (construction + measure, data loading and imports excluded), and records the
   subprocess's peak RSS;
3. times ``faithful measure --high HD --low LD --labels LAB --spec ... --json``
   (wall time of the whole process), records its peak RSS, and compares every
   score with ZADU's (max |delta| per output key).

The orchestrator is standard-library only. Data generation and ZADU run under
the ZADU interpreter (``--python``; default: $FAITHFUL_FIXTURE_PYTHON, else
tests/fixtures/.venv/bin/python if it exists, else the current interpreter).
Peak RSS comes from os.wait4 on each child (Unix only).

Examples:
    python3 benches/zadu_compare.py --sizes 2000,5000 --repeat 3
    python3 benches/zadu_compare.py --sizes 500 --zadu-only
    python3 benches/zadu_compare.py --suite tnc,mrre,lcmc,nh,stress,kl_div,dtm,srho,pr \\
        --markdown bench.md

Suite syntax: comma-separated measure ids, each optionally followed by
``:name=value`` parameters (several as ``id:a=1:b=2``). k-based measures given
without k get k=20 on both sides. Passed to the CLI as ``--spec id:a=1,b=2``.
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time

from bench_common import REPO, load_generator, maxrss_to_mib, run_measured, write_outputs

FIXTURE_VENV_PY = os.path.join(REPO, "tests", "fixtures", ".venv", "bin", "python")
DEFAULT_SUITE = "tnc,mrre,lcmc,nh"
K_MEASURES = {"tnc", "mrre", "lcmc", "nh", "ca_tnc", "nd", "proc", "topo"}


# --------------------------------------------------------------------------
# Worker side (runs under the ZADU interpreter; needs numpy / zadu)
# --------------------------------------------------------------------------
def worker_gen(args):
    import numpy as np

    gen = load_generator()
    hd, ld, label = gen.make_dataset("blobs", args.n)
    os.makedirs(args.dir, exist_ok=True)
    np.save(os.path.join(args.dir, "hd.npy"), hd)
    np.save(os.path.join(args.dir, "ld.npy"), ld)
    np.save(os.path.join(args.dir, "label.npy"), label)


def worker_zadu(args):
    import resource

    import numpy as np
    from importlib.metadata import version

    from zadu import ZADU

    specs = json.loads(args.specs)
    hd = np.load(os.path.join(args.dir, "hd.npy"))
    ld = np.load(os.path.join(args.dir, "ld.npy"))
    label = np.load(os.path.join(args.dir, "label.npy"))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = {"zadu_version": version("zadu"), "baseline_maxrss_raw": baseline}
    started = time.perf_counter()
    try:
        scores = ZADU(specs, hd).measure(ld, label)
        out["seconds"] = time.perf_counter() - started
        out["scores"] = [
            {k: float(v) for k, v in s.items()} for s in scores
        ]
    except Exception as exc:  # noqa: BLE001
        out["seconds"] = time.perf_counter() - started
        out["error"] = f"{type(exc).__name__}: {exc}"
    with open(args.result, "w") as f:
        json.dump(out, f)


# --------------------------------------------------------------------------
# Orchestrator side (standard library only)
# --------------------------------------------------------------------------
def _parse_value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_suite(text):
    """'tnc,kl_div:sigma=0.1' -> [(id, {params}), ...]"""
    suite = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        parts = entry.split(":")
        mid, params = parts[0].strip(), {}
        for part in parts[1:]:
            if "=" not in part:
                raise SystemExit(f"bad suite entry {entry!r}: expected name=value after ':'")
            key, value = part.split("=", 1)
            params[key.strip()] = _parse_value(value.strip())
        if mid in K_MEASURES and "k" not in params:
            params["k"] = 20
        suite.append((mid, params))
    if not suite:
        raise SystemExit("empty --suite")
    return suite


def cli_spec(mid, params):
    if not params:
        return mid
    return mid + ":" + ",".join(f"{k}={v}" for k, v in params.items())


def default_python():
    env = os.environ.get("FAITHFUL_FIXTURE_PYTHON")
    if env:
        return env
    if os.path.exists(FIXTURE_VENV_PY):
        return FIXTURE_VENV_PY
    return sys.executable


def _fmt(x, spec="{:.3f}"):
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    return spec.format(x)


def _fmt_delta(x):
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    return f"{x:.2e}"


def compare_scores(suite, zadu_scores, faithful_json):
    """Return ({'tnc.trustworthiness': delta | 'missing' | 'id mismatch'}, problems)."""
    deltas, problems = {}, []
    try:
        scores = faithful_json["projections"][0]["scores"]
    except (KeyError, IndexError, TypeError):
        return deltas, ["faithful JSON has no projections[0].scores"]
    if len(scores) != len(suite):
        problems.append(f"faithful returned {len(scores)} scores for {len(suite)} specs")
    for idx, ((mid, params), zvals) in enumerate(zip(suite, zadu_scores)):
        label = mid if list(params) in ([], ["k"]) else cli_spec(mid, params)
        fentry = scores[idx] if idx < len(scores) else None
        if fentry is None:
            for key in zvals:
                deltas[f"{label}.{key}"] = "missing"
            continue
        if fentry.get("id") != mid:
            problems.append(f"score #{idx}: faithful id {fentry.get('id')!r}, expected {mid!r}")
        fvals = fentry.get("values") or {}
        if fentry.get("error"):
            problems.append(f"{label}: faithful error {fentry.get('error')}")
        for key, zv in zvals.items():
            fv = fvals.get(key)
            if not isinstance(fv, (int, float)) or isinstance(fv, bool):
                deltas[f"{label}.{key}"] = "missing"
                continue
            d = abs(float(fv) - zv)
            if math.isnan(d):
                d = 0.0 if (math.isnan(fv) and math.isnan(zv)) else float("inf")
            deltas[f"{label}.{key}"] = d
        for key in fvals:
            if key not in zvals:
                problems.append(f"{label}: faithful has extra key {key!r}")
    return deltas, problems


def max_delta(deltas):
    if not deltas:
        return None
    if any(isinstance(v, str) for v in deltas.values()):
        return "missing"
    return max(deltas.values())


def bench_one(n, args, suite, workdir):
    data_dir = os.path.join(workdir, f"blobs_{n}")
    py = args.python
    me = os.path.abspath(__file__)
    code, _, _, _, err = run_measured(
        [py, me, "--worker", "gen", "--n", str(n), "--dir", data_dir],
        os.path.join(workdir, f"gen_{n}"),
    )
    if code != 0:
        raise SystemExit(f"data generation failed for n={n}:\n{err}")
    hd, ld, lab = (os.path.join(data_dir, f) for f in ("hd.npy", "ld.npy", "label.npy"))
    row = {"n": n, "data_dir": data_dir}

    # ---- ZADU
    zspecs = json.dumps([{"id": mid, "params": params} for mid, params in suite])
    ztimes, zrss, zres = [], [], None
    for rep in range(args.repeat):
        result_path = os.path.join(workdir, f"zadu_{n}_{rep}.json")
        code, wall, rss, _, err = run_measured(
            [py, me, "--worker", "zadu", "--dir", data_dir, "--specs", zspecs, "--result", result_path],
            os.path.join(workdir, f"zadu_{n}_{rep}"),
            timeout=args.timeout,
        )
        if code != 0 or not os.path.exists(result_path):
            row["zadu_error"] = f"ZADU worker exited {code}: {err.strip()[-2000:]}"
            break
        with open(result_path) as f:
            zres = json.load(f)
        if "error" in zres:
            row["zadu_error"] = zres["error"]
            break
        ztimes.append(zres["seconds"])
        row.setdefault("zadu_all_seconds", []).append(zres["seconds"])
        zrss.append(rss)
        row.setdefault("zadu_process_seconds", []).append(wall)
    if ztimes:
        row["zadu_seconds"] = min(ztimes)
        row["zadu_peak_mib"] = max(zrss)
        row["zadu_baseline_mib"] = maxrss_to_mib(zres["baseline_maxrss_raw"])
        row["zadu_scores"] = zres["scores"]
        row["zadu_version"] = zres["zadu_version"]

    # ---- faithful
    if not args.zadu_only:
        cmd = [args.faithful, "measure", "--high", hd, "--low", ld, "--labels", lab]
        for mid, params in suite:
            cmd += ["--spec", cli_spec(mid, params)]
        cmd.append("--json")
        ftimes, frss, fjson = [], [], None
        for rep in range(args.repeat):
            code, wall, rss, out, err = run_measured(
                cmd, os.path.join(workdir, f"faithful_{n}_{rep}"), timeout=args.timeout
            )
            if code != 0:
                row["faithful_error"] = f"faithful exited {code}: {err.strip()[-2000:]}"
                break
            try:
                fjson = json.loads(out)
            except json.JSONDecodeError as exc:
                row["faithful_error"] = f"faithful stdout is not JSON ({exc}): {out[:500]!r}"
                break
            ftimes.append(wall)
            frss.append(rss)
        if ftimes:
            row["faithful_seconds"] = min(ftimes)
            row["faithful_all_seconds"] = ftimes
            row["faithful_peak_mib"] = max(frss)
            row["faithful_run"] = fjson.get("run") if isinstance(fjson, dict) else None
            if "zadu_scores" in row:
                deltas, problems = compare_scores(suite, row["zadu_scores"], fjson)
                row["deltas"] = deltas
                row["problems"] = problems
    return row


def markdown_table(rows, suite, args):
    lines = [
        f"Suite: {', '.join(cli_spec(m, p) for m, p in suite)}; blobs(n), D=20 -> 2-D PCA; "
        f"best of {args.repeat}; {os.cpu_count()} CPUs. ZADU s = one ZADU(...).measure() call "
        "(imports and data loading excluded); faithful s = wall time of the whole CLI process; "
        "peak = max RSS of each process.",
        "",
        "| n | ZADU s | faithful s | ratio (ZADU/faithful) | ZADU peak MiB | faithful peak MiB | max \\|Δ\\| score |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        zs, fs = r.get("zadu_seconds"), r.get("faithful_seconds")
        ratio = zs / fs if (zs is not None and fs) else None
        zs_txt = _fmt(zs) if "zadu_error" not in r else "error"
        fs_txt = _fmt(fs) if "faithful_error" not in r else "error"
        lines.append(
            f"| {r['n']} | {zs_txt} | {fs_txt} | {_fmt(ratio, '{:.1f}×')} | "
            f"{_fmt(r.get('zadu_peak_mib'), '{:.0f}')} | {_fmt(r.get('faithful_peak_mib'), '{:.0f}')} | "
            f"{_fmt_delta(max_delta(r.get('deltas', {})) if 'deltas' in r else None)} |"
        )
    keyed = [r for r in rows if r.get("deltas")]
    if keyed:
        keys = []
        for r in keyed:
            for k in r["deltas"]:
                if k not in keys:
                    keys.append(k)
        lines += [
            "",
            "| score | " + " | ".join(f"max \\|Δ\\| n={r['n']}" for r in keyed) + " |",
            "|---|" + "---:|" * len(keyed),
        ]
        for k in keys:
            lines.append(f"| {k} | " + " | ".join(_fmt_delta(r["deltas"].get(k)) for r in keyed) + " |")
    notes = []
    for r in rows:
        for key in ("zadu_error", "faithful_error"):
            if key in r:
                notes.append(f"- n={r['n']}: {key.replace('_', ' ')}: {r[key]}")
        for p in r.get("problems", []):
            notes.append(f"- n={r['n']}: {p}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000,5000,10000", help="comma-separated n values")
    ap.add_argument("--repeat", type=int, default=1, help="runs per side; best time is reported")
    ap.add_argument("--suite", default=DEFAULT_SUITE, help=f"measure list (default {DEFAULT_SUITE})")
    ap.add_argument("--faithful", default=os.path.join(REPO, "target", "release", "faithful"))
    ap.add_argument("--python", default=None, help="interpreter with zadu==0.5.4")
    ap.add_argument("--zadu-only", action="store_true", help="skip the faithful side")
    ap.add_argument("--markdown", help="also write the table(s) to this file")
    ap.add_argument("--json", dest="json_out", help="write all raw results as JSON")
    ap.add_argument("--workdir", help="keep data and logs here instead of a temp dir")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per subprocess")
    # Internal worker modes.
    ap.add_argument("--worker", choices=("gen", "zadu"), help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--dir", help=argparse.SUPPRESS)
    ap.add_argument("--specs", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker == "gen":
        return worker_gen(args)
    if args.worker == "zadu":
        return worker_zadu(args)

    if not hasattr(os, "wait4"):
        raise SystemExit("this benchmark needs os.wait4 (Linux/macOS)")
    args.python = args.python or default_python()
    if args.repeat < 1:
        raise SystemExit("--repeat must be >= 1")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    suite = parse_suite(args.suite)
    if not args.zadu_only:
        args.faithful = os.path.abspath(args.faithful)
        if not os.access(args.faithful, os.X_OK):
            raise SystemExit(
                f"faithful binary not found at {args.faithful} "
                "(build with `cargo build --release`, pass --faithful PATH, or use --zadu-only)"
            )

    workdir = args.workdir or tempfile.mkdtemp(prefix="faithful-bench-")
    os.makedirs(workdir, exist_ok=True)
    print(f"python: {args.python}\nworkdir: {workdir}", file=sys.stderr)
    rows = []
    try:
        for n in sizes:
            print(f"n={n} ...", file=sys.stderr, flush=True)
            row = bench_one(n, args, suite, workdir)
            rows.append(row)
            msg = f"  ZADU {_fmt(row.get('zadu_seconds'))} s, peak {_fmt(row.get('zadu_peak_mib'), '{:.0f}')} MiB"
            if not args.zadu_only:
                msg += f"; faithful {_fmt(row.get('faithful_seconds'))} s, peak {_fmt(row.get('faithful_peak_mib'), '{:.0f}')} MiB"
            print(msg, file=sys.stderr, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    write_outputs(markdown_table(rows, suite, args), args.markdown, args.json_out, {"suite": [[m, p] for m, p in suite], "rows": rows})
    failed = any(
        "zadu_error" in r
        or "faithful_error" in r
        or r.get("problems")
        or any(isinstance(v, str) for v in r.get("deltas", {}).values())
        for r in rows
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main() or 0)
