"""Results: scores, run report, to_frame, and to_json byte for byte as `faithful measure --json`."""

import json
import re
import subprocess

import numpy as np
import pytest

import faithful_dr
from conftest import blobs


def test_to_json_equals_the_cli(cli, tmp_path):
    high, low, labels = blobs(n=120, d=4, seed=3)
    low2 = low[:, ::-1].copy()
    paths = {}
    for name, a in {"hd": high, "ld": low, "ld2": low2, "label": labels}.items():
        paths[name] = str(tmp_path / f"{name}.npy")
        np.save(paths[name], a)
    specs = ["tnc:k=7", "mrre", "nh:k=5", "srho", "kl_div:sigma=0.5"]
    args = [cli, "measure", "--high", paths["hd"], "--low", paths["ld"], "--low", paths["ld2"], "--labels", paths["label"],
            "--json", "--local", "--backend", "cpu"]
    for s in specs:
        args += ["--spec", s]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    ev = faithful_dr.Evaluator(high, labels=labels, local=True, backend="cpu")
    # The CLI names a projection by its file name.
    res = ev.measure_many({"ld.npy": low, "ld2.npy": low2}, specs)
    got = res.to_json()
    assert out.endswith("\n") and "\n" not in out[:-1]
    # Byte for byte, once the run's wall-clock timings (which vary) are blanked.
    blank = lambda doc: re.sub(r'"timings":\{[^{}]*\}', '"timings":{}', doc)
    assert blank(got) == blank(out[:-1])
    assert blank(got) != got and set(json.loads(got)["run"]["timings"]) == set(json.loads(out)["run"]["timings"])


def test_scores_run_and_frame():
    high, low, labels = blobs(n=100, d=4, seed=6)
    ev = faithful_dr.Evaluator(high, labels=labels, local=True)
    res = ev.measure_many({"a": low, "b": np.asfortranarray(low.astype(np.float32))}, ["tnc:k=5", {"id": "nh"}])
    assert list(res.projections) == ["a", "b"]
    s = res.projections["a"][0]
    assert s.id == "tnc" and s.params == {"k": 5} and s.spec == "tnc:k=5"
    assert list(s.values) == ["trustworthiness", "continuity"]
    assert set(s.local) == {"local_trustworthiness", "local_continuity"} and s.local["local_continuity"].shape == (100,)
    nh = res.projections["a"][1]
    assert nh.params == {"k": 20} and 0.0 <= nh["neighborhood_hit"] <= 1.0
    run = res.run
    assert run["n"] == 100 and run["dims_low"] == [2, 2] and run["numerics"] == "exact"
    frame = res.to_frame()
    assert list(frame.columns) == ["projection", "id", "spec", "key", "value"]
    assert len(frame) == 2 * 3
    row = frame[(frame.projection == "b") & (frame.key == "continuity")]
    assert row.value.item() == res.projections["b"][0]["continuity"]


def test_measure_equals_measure_many_and_reuses_the_knn():
    high, low, _ = blobs(n=100, d=4, seed=7)
    ev = faithful_dr.Evaluator(high)
    first = ev.measure(low, "tnc:k=5")
    again = ev.measure(low, ["tnc:k=5"])
    assert first.scores[0].values == again.scores[0].values
    assert again.run["plan"]["knn_high_reused"] is True
    assert first.scores[0].local is None


def test_coranking_curves_equal_the_cli(cli, tmp_path):
    high, low, _ = blobs(n=150, d=5, seed=11)
    for name, a in {"hd": high, "ld": low}.items():
        np.save(tmp_path / f"{name}.npy", a)
    out = subprocess.run([cli, "measure", "--high", str(tmp_path / "hd.npy"), "--low", str(tmp_path / "ld.npy"),
                          "--spec", "coranking:k_max=40", "--json", "--backend", "cpu"],
                         check=True, capture_output=True, text=True).stdout
    want = json.loads(out)["projections"][0]["scores"][0]
    s = faithful_dr.Evaluator(high, backend="cpu").measure(low, ["coranking:k_max=40"]).projections["low"][0]
    assert s.values == want["values"]
    assert set(s.curves) == set(want["curves"]) >= {"qnx", "rnx", "lcmc", "trustworthiness", "continuity"}
    for key, curve in want["curves"].items():
        assert s.curves[key].dtype == np.float64 and s.curves[key].tolist() == curve
    assert len(s.curves["rnx"]) == 40
    # A measure without curves has an empty dict.
    assert faithful_dr.Evaluator(high).measure(low, ["tnc:k=5"]).projections["low"][0].curves == {}


def _misaligned(a):
    """A copy of `a` whose data starts one byte past an aligned address (as an array unpickled
    from an out-of-band buffer can be)."""
    buf = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_misaligned_arrays_are_read_as_their_aligned_copies():
    high, low, labels = blobs(n=90, d=5, seed=4)
    specs = ["tnc:k=6", "nh:k=5", "srho"]
    want = faithful_dr.Evaluator(high, labels=labels, local=True).measure(low, specs).to_json()
    got = faithful_dr.Evaluator(_misaligned(high), labels=_misaligned(labels), local=True).measure(_misaligned(low), specs)
    blank = lambda doc: re.sub(r'"timings":\{[^{}]*\}', '"timings":{}', doc)
    assert blank(got.to_json()) == blank(want)
