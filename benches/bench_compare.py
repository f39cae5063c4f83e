#!/usr/bin/env python3
"""Before/after table from faithful bench receipts: best (minimum) warm and cold per row over
all receipts of each binary."""
import json, sys, glob
def load(pattern):
    best = {}
    for f in sorted(glob.glob(pattern)):
        for r in json.load(open(f))['rows']:
            key = (r['backend'], r['kernel'], r['n'], r['d'])
            w = min(r['warm_runs_s']) if r.get('warm_runs_s') else r['warm_s']
            b = best.setdefault(key, {'warm': w, 'cold': r['cold_s'], 'parity': r['parity'], 'served': r['served']})
            b['warm'] = min(b['warm'], w); b['cold'] = min(b['cold'], r['cold_s'])
            if r['parity'] not in ('identical', 'reference'): b['parity'] = r['parity']
    return best
before, after = load(sys.argv[1]), load(sys.argv[2])
print('| backend | kernel | n | D | cold s before | cold s after | fastest warm s before | fastest warm s after | after / before (warm) | parity after | served |')
print('|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|')
for key in before:
    if key not in after: continue
    b, a = before[key], after[key]
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {b['cold']:.4f} | {a['cold']:.4f} | {b['warm']:.4f} | {a['warm']:.4f} | {a['warm']/b['warm']:.2f} | {a['parity']} | {a['served']} |")
