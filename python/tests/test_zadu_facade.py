"""faithful_dr.zadu.ZADU against ZADU 0.5.4 itself (installed by scripts/test_python.sh):
the same return shapes and keys, and every value and local value within 1e-12."""

import numpy as np
import pytest
import zadu

from conftest import blobs
from faithful_dr.zadu import ZADU

TOL = 1e-12
SPECS = [
    {"id": "tnc", "params": {"k": 10}},
    {"id": "mrre", "params": {"k": 10}},
    {"id": "lcmc"},
    {"id": "nh", "params": {"k": 7}},
    {"id": "ca_tnc", "params": {"k": 10}},
    {"id": "nd", "params": {"k": 10}},
    {"id": "proc", "params": {"k": 10}},
    {"id": "topo", "params": {"k": 10}},
    {"id": "stress"},
    {"id": "sn_stress"},
    {"id": "nm_stress"},
    {"id": "pr"},
    {"id": "srho"},
    {"id": "kl_div", "params": {"sigma": 0.5}},
    {"id": "dtm", "params": {"sigma": 0.1}},
    {"id": "dsc"},
    {"id": "l_tnc"},
    {"id": "ivm", "params": {"measure": "silhouette"}},
    {"id": "gi"},
]


def ties(n=200, seed=0):
    """Tie-heavy data: integer lattices with duplicates in both spaces."""
    rng = np.random.default_rng(seed)
    high = rng.integers(0, 4, size=(n, 4)).astype(np.float64)
    low = rng.integers(0, 5, size=(n, 2)).astype(np.float64)
    return high, low, rng.integers(0, 3, n)


def close(a, b):
    return abs(a - b) <= TOL * max(abs(b), 1.0)


def check(name, high, low, labels):
    for spec in SPECS:
        one = [spec]
        try:
            want = zadu.ZADU(one, high, return_local=True).measure(low, labels)
        except ValueError:
            with pytest.raises(ValueError, match="undefined because"):
                ZADU(one, high, return_local=True).measure(low, labels)
            continue
        got = ZADU(one, high, return_local=True).measure(low, labels)
        assert isinstance(got, tuple) and len(got) == 2
        (gv,), (gl,) = got
        (wv,), (wl,) = want
        assert list(gv) == list(wv), (name, spec)
        if spec["id"] == "gi" and name == "ties":
            continue  # cocircular lattice: the Delaunay triangulation is not unique (docs/measures.md)
        for key in wv:
            assert close(gv[key], wv[key]), (name, spec, key, gv[key], wv[key])
        assert (gl is None) == (wl is None), (name, spec)
        for key in wl or {}:
            np.testing.assert_allclose(gl[key], wl[key], rtol=TOL, atol=TOL, err_msg=f"{name} {spec} {key}")


def test_blobs_equal_zadu():
    check("blobs", *blobs(n=240, d=6, seed=11))


def test_ties_equal_zadu():
    check("ties", *ties())


def test_shapes_without_local_and_measure_many():
    high, low, labels = blobs(n=120, d=4, seed=12)
    specs = [{"id": "tnc", "params": {"k": 5}}, {"id": "srho"}]
    want = zadu.ZADU(specs, high).measure_many([low, low[:, ::-1]], labels)
    got = ZADU(specs, high).measure_many([low, low[:, ::-1]], labels)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert [list(d) for d in g] == [list(d) for d in w]
        assert all(close(g[i][k], w[i][k]) for i in range(2) for k in w[i])
    single = ZADU(specs, high).measure(low)
    assert isinstance(single, list) and set(single[0]) == {"trustworthiness", "continuity"}


def test_snc_same_shapes_keys_and_range_as_zadu():
    # Values equal ZADU's only with NumPy's baseline sort (tests/snc.rs, docs/measures.md): on
    # AVX2/AVX-512 machines ZADU's HDBSCAN breaks tied tree edges in another order.
    high, low, _ = blobs(n=120, d=3)
    spec = [{"id": "snc", "params": {"random_state": 0, "iteration": 20}}]
    (gv,), (gl,) = ZADU(spec, high, return_local=True).measure(low)
    (wv,), (wl,) = zadu.ZADU(spec, high, return_local=True).measure(low)
    assert list(gv) == list(wv) == ["steadiness", "cohesiveness"]
    assert list(gl) == list(wl) == ["local_steadiness", "local_cohesiveness"]
    assert all(len(gl[k]) == len(wl[k]) == len(high) for k in wl)
    assert all(0.0 <= gv[k] <= 1.0 for k in gv)


def test_snc_refuses_a_numpy_generator_as_random_state():
    # ZADU accepts one (its PCG64 stream); faithful reproduces RandomState(int) only.
    high, _, _ = blobs(n=60, d=3)
    spec = [{"id": "snc", "params": {"random_state": np.random.default_rng(0), "iteration": 5}}]
    with pytest.raises(TypeError, match="snc: random_state as a numpy.random.Generator is not supported"):
        ZADU(spec, high)


def test_labels_of_any_kind_are_classes_and_unused_labels_are_ignored():
    high, low, labels = blobs(n=120, d=4, seed=3)
    specs = [{"id": "ca_tnc", "params": {"k": 5}}, {"id": "nh", "params": {"k": 5}}]
    want = ZADU(specs, high).measure(low, labels)
    names = np.array(["c%d" % c for c in labels])
    assert ZADU(specs, high).measure(low, names) == want
    assert ZADU(specs, high).measure(low, labels.astype(np.float64) / 2) == want
    # tnc uses no labels: ZADU ignores them, so does the facade.
    assert ZADU([{"id": "tnc", "params": {"k": 5}}], high).measure(low, labels[:3])
    with pytest.raises(ValueError, match=r"^orig: "):
        ZADU(specs, high[:1])
    with pytest.raises(ValueError, match=r"^emb: has 119 rows"):
        ZADU(specs, high).measure(low[:119], labels)
