"""Run by scripts/test_python.sh in a fresh venv holding only the built wheel and its declared
dependencies (numpy): the wheel imports and reproduces a golden ZADU 0.5.4 score."""

import json
import pathlib
import sys

import numpy as np

import faithful_dr

fixture = pathlib.Path(sys.argv[1])
golden = json.loads((fixture / "zadu.json").read_text())
want = next(r for r in golden["results"] if r["id"] == "tnc")
ev = faithful_dr.Evaluator(np.load(fixture / "hd.npy"))
got = ev.measure(np.load(fixture / "ld.npy"), [{"id": "tnc", "params": want["params"]}]).scores[0].values
for key, value in want["values"].items():
    assert abs(got[key] - value) <= 1e-12, (key, got[key], value)
print(f"wheel smoke: faithful_dr {faithful_dr.__version__} reproduces ZADU's tnc {want['params']} on {fixture.name}")
