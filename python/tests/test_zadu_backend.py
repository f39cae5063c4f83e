"""faithful as ZADU 0.5.4's resource provider (entry point `faithful` in `zadu.backends`):
every ZADU measure through ZADU equals ZADU's NumPy backend within 1e-12 on blobs and
tie-heavy data, ZADU's run info names faithful as the provider of every resource it builds,
and what it leaves to ZADU's NumPy provider is marked so."""

import re

import numpy as np
import pytest
import zadu
from zadu import ZADU, ExecutionConfig

from conftest import blobs
from test_zadu_facade import SPECS, close, ties

# The ZADU measures beyond the facade's list: clustering-based (seeded) and snc, which runs in
# ZADU on the kNN graphs the provider builds.
EXTRA_SPECS = [
    {"id": "c_evm", "params": {"measure": "arand", "clustering": "kmeans", "clustering_args": {"random_state": 0}}},
    {"id": "cadi", "params": {"random_seed": 0}},
    {"id": "snc", "params": {"k": 10, "iteration": 40, "random_state": 0}},
]

# Resource kinds faithful builds itself, and those it leaves to ZADU's NumPy provider.
BUILT = {
    "knn",
    "stable_knn",
    "density",
    "condensed_pairs",
    "pair_order",
    "pair_statistics",
    "ordered_pair_statistics",
    "topographic_product_statistics",
    "rank_comparisons",
    "neighbor_statistics",
}
DELEGATED = {"distance_matrix", "neighbor_ranking"}


def test_entry_point_is_installed():
    assert "faithful" in zadu.backends.available_resource_backends()


def run(spec, high, low, labels, backend):
    z = ZADU([spec], high, return_local=True, execution=ExecutionConfig(backend=backend))
    return z.measure(low, labels), z.last_run_info


def test_every_zadu_measure_is_in_the_test():
    from zadu.registry import METRICS

    tested = {s["id"] for s in SPECS + EXTRA_SPECS}
    assert {d.alias for d in METRICS} <= tested


@pytest.mark.parametrize("data", ["blobs", "ties"])
def test_every_measure_equals_the_numpy_backend(data):
    high, low, labels = blobs(n=240, d=6, seed=21) if data == "blobs" else ties(seed=22)
    built = set()
    for spec in SPECS + EXTRA_SPECS:
        try:
            want, _ = run(spec, high, low, labels, "numpy")
        except ValueError as e:
            # Undefined for ZADU: the same error, with ZADU's own message.
            with pytest.raises(ValueError, match=re.escape(str(e)[:60])):
                run(spec, high, low, labels, "faithful")
            continue
        (got_values,), (got_local,) = (got := run(spec, high, low, labels, "faithful"))[0]
        (want_values,), (want_local,) = want
        assert list(got_values) == list(want_values), spec
        for key in want_values:
            assert close(got_values[key], want_values[key]), (data, spec, key, got_values[key], want_values[key])
        assert (got_local is None) == (want_local is None), spec
        for key in want_local or {}:
            np.testing.assert_allclose(got_local[key], want_local[key], rtol=1e-12, atol=1e-12)
        info = got[1]
        assert info["backend"] == "faithful" and info["exact"] is True
        for r in info["resources"]:
            if r["kind"] in BUILT:
                assert r["provider"] == "faithful" and "delegated_to" not in r["details"], (spec, r)
                built.add(r["kind"])
            else:
                assert r["kind"] in DELEGATED, (spec, r)
                assert r["details"]["delegated_to"] == "numpy" and r["details"]["delegated_because"], (spec, r)
    # Every kind faithful builds was exercised (topo's statistics are undefined on the ties).
    expected = BUILT - ({"topographic_product_statistics"} if data == "ties" else set())
    assert built >= expected, expected - built


def test_resources_have_zadu_dtypes_and_shapes():
    from zadu.backends import NumpyResourceProvider
    from zadu.engine.resources import ResourceKey, ResourceKind, Space

    from faithful_dr.zadu_backend import FaithfulResourceProvider

    high, low, _ = ties(n=150, seed=3)
    ours, theirs = FaithfulResourceProvider(), NumpyResourceProvider()
    for kind, k, parameter in [
        (ResourceKind.KNN, 9, None),
        (ResourceKind.STABLE_KNN, 9, None),
        (ResourceKind.DENSITY, None, 0.3),
        (ResourceKind.CONDENSED_PAIRS, None, None),
        (ResourceKind.PAIR_ORDER, None, None),
    ]:
        key = ResourceKey(kind, Space.ORIGINAL, k, parameter)
        kw = dict(distance_matrix=None, condensed_pairs=None, working_memory_bytes=1 << 24, geodesic=False)
        a, b = ours.build(key, high, **kw), theirs.build(key, high, **kw)
        assert a.implementation == "faithful", kind
        if kind is ResourceKind.PAIR_ORDER:
            # Ties may come in any order (NumPy's argsort is not stable); the ranks may not.
            assert a.value.indices.dtype == b.value.indices.dtype
            np.testing.assert_array_equal(a.value.sorted_ranks, b.value.sorted_ranks)
            condensed = theirs.build(ResourceKey(ResourceKind.CONDENSED_PAIRS, Space.ORIGINAL), high, **kw).value
            np.testing.assert_array_equal(condensed[a.value.indices], np.sort(condensed))
            assert (a.value.min_distance, a.value.max_distance) == (b.value.min_distance, b.value.max_distance)
            continue
        assert a.value.dtype == b.value.dtype and a.value.shape == b.value.shape, kind
        if kind is ResourceKind.DENSITY:
            np.testing.assert_allclose(a.value, b.value, rtol=1e-13)
        else:
            np.testing.assert_array_equal(a.value, b.value)


def test_memory_planning_counts_faithful():
    # The planner asks the provider what it needs: a budget that holds ZADU's cache but not the
    # pair order faithful sorts (32 bytes a pair) fails before any work, with ZADU's message.
    high, low, _ = blobs(n=400, d=5, seed=4)
    plan = ZADU([{"id": "srho"}], high, execution=ExecutionConfig(backend="faithful"))._execution_plan
    order = [key for key in plan.resource_working_bytes if key.kind.value == "pair_order"]
    assert order and plan.resource_working_bytes[order[0]] == 32 * (400 * 399 // 2)
    with pytest.raises(MemoryError, match="max_memory_bytes"):
        ZADU([{"id": "srho"}], high, max_memory_bytes=3 * 400 * 399 * 8, execution=ExecutionConfig(backend="faithful"))
