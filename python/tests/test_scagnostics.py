"""scagnostics through the Python package: listed with its keys and parameters, the committed
pyscagnostics oracle's values bit for bit (tests/fixtures/scagnostics/scagnostics.json, as
tests/scagnostics.rs checks them in Rust), and ValueError naming the measure where it is undefined."""

import json

import numpy as np
import pytest

import faithful_dr
from conftest import REPO

KEYS = ["outlying", "skewed", "clumpy", "sparse", "striated", "convex", "skinny", "stringy", "monotonic"]
ORACLE = json.loads((REPO / "tests" / "fixtures" / "scagnostics" / "scagnostics.json").read_text())


def test_listed_with_keys_and_parameters():
    m = {m["id"]: m for m in faithful_dr.measures()}["scagnostics"]
    assert m["keys"] == KEYS
    assert m["local"] == []
    assert [(p["name"], p["default"]) for p in m["params"]] == [("bins", "50"), ("remove_outliers", "true")]


@pytest.mark.parametrize("name", ["generic_500", "clustered_600", "striated_500",
                                  "outliers_406:bins=50,remove_outliers=false"])
def test_values_are_the_references(name):
    r = ORACLE["fixtures"][name]
    y = np.array(ORACLE["datasets"][r["dataset"]], dtype=np.float64)
    score = faithful_dr.Evaluator(y).measure(y, [r["spec"]]).scores[0]
    assert [score[k] for k in KEYS] == [r["values"][k] for k in KEYS]


def test_undefined_inputs_raise_value_error():
    ev = faithful_dr.Evaluator(np.arange(60.0).reshape(20, 3))
    with pytest.raises(ValueError, match=r"^scagnostics.*2-D"):
        ev.measure(np.arange(60.0).reshape(20, 3), ["scagnostics"])
    with pytest.raises(ValueError, match=r"^scagnostics.*constant"):
        ev.measure(np.ones((20, 2)), ["scagnostics"])
    with pytest.raises(ValueError, match=r"bins"):
        ev.measure(np.arange(40.0).reshape(20, 2) % 7, ["scagnostics:bins=1"])
