#!/usr/bin/env python3
"""Receipt for issue 27: topology (H0, H1), knn_classification and hypothesis_margin, timed
against ripser (and scikit-learn for kNN accuracy) in the same run.

    python3 benches/topology_compare.py --python VENV/bin/python --faithful target/release/faithful \
        --markdown docs/bench/topology_2026-12-02.md --json docs/bench/topology_2026-12-02.json

Data: generate_oracle.py's ``generic(n)`` (five blobs in 10-D, a noisy linear 2-D projection),
labels = the blob of each point. faithful runs through its CLI (``--json``; "call" is its own
``run.timings.total_s``); the peers in the interpreter given, on loaded arrays.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

PEER = r'''
import json, sys, time
import numpy as np
kind, hd, ld, labels, k = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
X, Y = np.load(hd), np.load(ld)
out = {}
if kind.startswith("ripser"):
    import ripser
    maxdim = int(kind[-1])
    t = time.perf_counter()
    for Z in (X, Y):
        ripser.ripser(Z, maxdim=maxdim)
    out["s"] = time.perf_counter() - t
elif kind == "sklearn_knn":
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.model_selection import cross_val_score, LeaveOneOut
    lab = np.load(labels)
    t = time.perf_counter()
    accs = []
    for Z in (Y, X):
        # leave-one-out through the k+1 nearest neighbours (self first), as faithful
        from sklearn.neighbors import NearestNeighbors
        idx = NearestNeighbors(n_neighbors=k + 1).fit(Z).kneighbors(Z, return_distance=False)[:, 1:]
        votes = lab[idx]
        pred = np.array([np.bincount(v).argmax() for v in votes])
        accs.append(float((pred == lab).mean()))
    out["s"] = time.perf_counter() - t
    out["value"] = accs[0]
print(json.dumps(out))
'''


def generic(n, seed=11):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 6, (5, 10))
    c = rng.integers(0, 5, n)
    X = centres[c] + rng.normal(0, 1, (n, 10))
    Y = X @ rng.normal(0, 1, (10, 2)) + rng.normal(0, 0.5, (n, 2))
    return X, Y, c.astype(np.int64)


TIME = "/usr/bin/time"


def timed(cmd):
    """Runs cmd; returns (process, wall seconds, peak RSS in MB or None) — the RSS from GNU
    time's %M when /usr/bin/time exists (its last stderr line, removed from stderr)."""
    wrap = os.path.exists(TIME)
    t = time.perf_counter()
    p = subprocess.run(([TIME, "-f", "%M"] if wrap else []) + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    rss = None
    if wrap:
        lines = p.stderr.rstrip("\n").split("\n")
        try:
            rss = round(int(lines[-1]) / 1024, 1)
            p.stderr = "\n".join(lines[:-1])
        except ValueError:
            pass
    return p, wall, rss


def faithful(exe, hd, ld, labels, spec):
    p, wall, rss = timed([exe, "measure", "--high", hd, "--low", ld, "--labels", labels, "--spec", spec,
                          "--json", "--backend", "cpu", "--memory-budget", "1G"])
    if p.returncode != 0:
        return {"error": p.stderr.strip(), "cli_s": wall, "peak_rss_mb": rss}
    v = json.loads(p.stdout)
    s = v["projections"][0]["scores"][0]["values"]
    return {"call_s": v["run"]["timings"]["total_s"], "cli_s": wall, "peak_rss_mb": rss, "values": s}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--faithful", required=True)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--h1", default="1000,2000,4000")
    ap.add_argument("--h1-only", action="store_true", help="only the H1 runs of --h1")
    ap.add_argument("--peer-max-n", type=int, default=10**9, help="run the peers only up to this n")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    peer = os.path.join(tmp, "peer.py")
    open(peer, "w").write(PEER)
    rows = []
    runs = [] if a.h1_only else [("topology:dim=0", 20000, "ripser0")]
    runs += [("topology:dim=1", int(n), "ripser1") for n in a.h1.split(",")]
    if not a.h1_only:
        runs += [("knn_classification:k=10", 50000, "sklearn_knn"), ("hypothesis_margin", 50000, None)]
    for spec, n, peer_kind in runs:
        X, Y, c = generic(n)
        hd, ld, lab = (os.path.join(tmp, f"{w}{n}.npy") for w in ("hd", "ld", "lab"))
        np.save(hd, X), np.save(ld, Y), np.save(lab, c)
        f = faithful(a.faithful, hd, ld, lab, spec)
        row = {"spec": spec, "n": n, "faithful": f}
        if peer_kind and n > a.peer_max_n:
            row["peer"] = peer_kind
            row["peer_result"] = {"error": f"not run (n > --peer-max-n {a.peer_max_n})"}
        elif peer_kind:
            p, _, rss = timed([a.python, peer, peer_kind, hd, ld, lab, "10"])
            row["peer"] = peer_kind
            row["peer_result"] = json.loads(p.stdout) if p.returncode == 0 else {"error": p.stderr.strip()[-300:]}
            row["peer_result"]["peak_rss_mb"] = rss
        print(json.dumps(row), file=sys.stderr)
        rows.append(row)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    if a.markdown:
        with open(a.markdown, "w") as m:
            m.write("| spec | n | faithful call (s) | faithful CLI (s) | peer | peer (s) | values |\n|---|---|---|---|---|---|---|\n")
            for r in rows:
                f, pr = r["faithful"], r.get("peer_result", {})
                m.write(f"| `{r['spec']}` | {r['n']} | {f.get('call_s', f.get('error', ''))} | {f['cli_s']:.3f} | "
                        f"{r.get('peer', '–')} | {pr.get('s', pr.get('error', '–'))} | {f.get('values', '')} |\n")


if __name__ == "__main__":
    main()
