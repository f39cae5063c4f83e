"""The measures of issue 26 from Python: the drop-ins with the peers' signatures
(faithful_dr.peers) give the peers' own values, committed in tests/fixtures/peers/peers.json
(tests/fixtures/peers/generate_peers.py ran tensorflow-projection-qm, PaCMAP's evaluation code
and TriMap); `measures()` and `Score.local_kinds` say what per-point values mean; a point
without a value is masked, never 0 or NaN."""

import json

import numpy as np
import pytest

import faithful_dr
from faithful_dr import peers

from conftest import REPO

FIXTURES = REPO / "tests" / "fixtures"
PEERS = json.loads((FIXTURES / "peers" / "peers.json").read_text())["results"]


def data(name):
    folder = FIXTURES / "measures" / name
    return np.load(folder / "hd.npy"), np.load(folder / "ld.npy")


@pytest.mark.parametrize("name", ["generic_300", "swiss_200", "duplicates_240"])
def test_tf_projection_qm_drop_ins(name):
    X, Y = data(name)
    tf = PEERS[name]["tf_projection_qm"]
    for k in (5, 10):
        for fn, key in (
            (peers.jaccard_with_local, "jaccard"),
            (peers.true_neighbors_with_local, "true_neighbors"),
            (peers.false_neighbors_with_local, "false_neighbors"),
            (peers.missing_neighbors_with_local, "missing_neighbors"),
        ):
            value, local = fn(X, Y, k)
            assert np.array_equal(local, np.array(tf[f"{key}@{k}"]["local"])), (name, key, k)
            assert value == pytest.approx(tf[f"{key}@{k}"]["value"], rel=1e-14)
    value, local = peers.average_local_error_with_local(X, Y)
    assert value == pytest.approx(tf["average_local_error"]["value"], rel=1e-12)
    np.testing.assert_allclose(local, tf["average_local_error"]["local"], rtol=1e-12)
    assert peers.jaccard(X, Y, 5) == peers.jaccard_with_local(X, Y, 5)[0]


@pytest.mark.parametrize("name", ["generic_300", "lattice_400"])
def test_pacmap_and_trimap_drop_ins(name):
    X, Y = data(name)
    for seed, want in PEERS[name]["pacmap_random_triplet_eval"].items():
        got = peers.random_triplet_eval(X, Y, None, random_state=int(seed))
        assert round(got * 5 * len(X)) == round(want * 5 * len(X)), (name, seed)
        assert got == pytest.approx(want, rel=1e-15)
    assert peers.global_score(X, Y) == pytest.approx(PEERS[name]["trimap_global_score"], rel=1e-12)


def test_measures_lists_every_measure_with_its_local_kinds():
    listed = {m["id"]: m for m in faithful_dr.measures()}
    for mid in ("sammon", "cca_stress", "residual_variance", "nerv", "knn_overlap", "ale",
                "density_preservation", "triplet_accuracy", "global_score", "tnc", "snc"):
        assert mid in listed, mid
    assert listed["sammon"]["local"] == [{"key": "local_sammon_stress", "kind": "sum"}]
    assert [l["kind"] for l in listed["knn_overlap"]["local"]] == ["mean", "mean", "count", "count", "count"]
    assert listed["snc"]["local"][0]["kind"] == "score"
    lam = listed["cca_stress"]["params"][0]
    assert (lam["name"], lam["required"], lam["default"]) == ("lambda", True, "")


def test_local_kinds_and_values_without_a_point_are_masked():
    X, Y = data("duplicates_240")
    res = faithful_dr.Evaluator(X, local=True).measure(
        Y, ["density_preservation:k=5", "sammon", "knn_overlap:k=5"]
    )
    dens, sammon, knn = res.scores
    assert dens.local_kinds == {"local_density_preservation": "log_ratio"}
    v = dens.local["local_density_preservation"]
    assert isinstance(v, np.ma.MaskedArray)
    # The oracle's nulls: 54 points whose 5 nearest neighbours sit on them.
    assert int(v.mask.sum()) == 54
    assert abs(float(v.mean())) < 1e-12
    assert sammon.local_kinds == {"local_sammon_stress": "sum"}
    assert float(np.sum(sammon.local["local_sammon_stress"])) == pytest.approx(sammon["sammon_stress"], rel=1e-12)
    assert knn.local_kinds["true_neighbours"] == "count"
    assert not isinstance(knn.local["true_neighbours"], np.ma.MaskedArray)
    # The CLI's JSON has null where Python masks.
    out = json.loads(res.to_json())
    local = out["projections"][0]["scores"][0]["local"]["local_density_preservation"]
    assert [x is None for x in local] == list(v.mask)
    assert out["projections"][0]["scores"][0]["local_kinds"] == {"local_density_preservation": "log_ratio"}
