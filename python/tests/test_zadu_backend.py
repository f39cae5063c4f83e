"""faithful as ZADU 0.5.4's resource provider (entry point `faithful` in `zadu.backends`):
every measure through ZADU equals ZADU's NumPy backend within 1e-12 on blobs and tie-heavy
data, and ZADU's run info names faithful as the provider of the kNN graphs."""

import re

import numpy as np
import pytest
import zadu
from zadu import ZADU, ExecutionConfig

from conftest import blobs
from test_zadu_facade import SPECS, close, ties


def test_entry_point_is_installed():
    assert "faithful" in zadu.backends.available_resource_backends()


def run(spec, high, low, labels, backend):
    z = ZADU([spec], high, return_local=True, execution=ExecutionConfig(backend=backend))
    return z.measure(low, labels), z.last_run_info


@pytest.mark.parametrize("data", ["blobs", "ties"])
def test_every_measure_equals_the_numpy_backend(data):
    high, low, labels = blobs(n=240, d=6, seed=21) if data == "blobs" else ties(seed=22)
    served = set()
    for spec in SPECS:
        try:
            want, _ = run(spec, high, low, labels, "numpy")
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e)[:40])):
                run(spec, high, low, labels, "faithful")
            continue
        (got_values,), (got_local,) = (got := run(spec, high, low, labels, "faithful"))[0]
        (want_values,), (want_local,) = want
        assert list(got_values) == list(want_values), spec
        for key in want_values:
            assert close(got_values[key], want_values[key]), (data, spec, key)
        assert (got_local is None) == (want_local is None), spec
        for key in want_local or {}:
            np.testing.assert_allclose(got_local[key], want_local[key], rtol=1e-12, atol=1e-12)
        info = got[1]
        assert info["backend"] == "faithful" and info["exact"] is True
        for r in info["resources"]:
            if r["kind"] in ("knn", "stable_knn"):
                assert r["provider"] == "faithful", (spec, r)
                served.add(spec["id"])
            else:
                assert r["details"].get("delegated_to") == "numpy", (spec, r)
    # The kNN-based measures were served by faithful (topo is undefined on the ties data).
    assert {"tnc", "mrre", "lcmc", "nh"} | ({"topo"} if data == "blobs" else set()) <= served, served
