"""Bad inputs raise ValueError (or MemoryError) with the CLI's one-line messages."""

import numpy as np
import pytest

import faithful_dr
from conftest import blobs


@pytest.fixture
def ev():
    high, _, labels = blobs(n=40, d=3)
    return faithful_dr.Evaluator(high, labels=labels)


def test_row_mismatch(ev):
    with pytest.raises(ValueError, match=r"^low: has 39 rows but the original space has 40$"):
        ev.measure(np.zeros((39, 2)), ["tnc"])


def test_non_finite_and_too_large():
    with pytest.raises(ValueError, match=r"^high: non-finite value inf at row 2, column 0$"):
        faithful_dr.Evaluator(np.array([[0.0], [1.0], [np.inf]]))
    with pytest.raises(ValueError, match=r"^high: value 1e200 at row 0, column 1 is too large"):
        faithful_dr.Evaluator(np.array([[0.0, 1e200], [1.0, 0.0]]))


def test_shapes_and_dtypes():
    with pytest.raises(ValueError, match=r"^high: needs at least 2 points, got 1$"):
        faithful_dr.Evaluator(np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"^high: expected a 2-D array"):
        faithful_dr.Evaluator(np.zeros(5))
    with pytest.raises(ValueError, match=r"^high: expected float64 or float32 values, got dtype complex128$"):
        faithful_dr.Evaluator(np.zeros((4, 2), dtype=complex))
    with pytest.raises(ValueError, match=r"^labels: expected integer labels, got dtype float64$"):
        faithful_dr.Evaluator(np.zeros((4, 2)), labels=np.zeros(4))


def test_specs(ev):
    low = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(ValueError, match=r"^unknown measure id 'nope' \(known: "):
        ev.measure(low, ["nope"])
    with pytest.raises(ValueError, match=r"^malformed spec 'tnc:k': parameters are written NAME=VALUE$"):
        ev.measure(low, ["tnc:k"])
    with pytest.raises(ValueError, match=r"^tnc: k=20 is out of range"):
        ev.measure(low, [{"id": "tnc", "params": {"k": 20}}])
    with pytest.raises(ValueError, match=r"^tnc: unknown parameter 'kk'"):
        ev.measure(low, [{"id": "tnc", "params": {"kk": 2}}])
    with pytest.raises(ValueError, match=r"^malformed spec: a dict spec needs an 'id'$"):
        ev.measure(low, [{"params": {"k": 2}}])
    with pytest.raises(ValueError, match=r"^tnc: parameter k=True: expected an integer"):
        ev.measure(low, [{"id": "tnc", "params": {"k": True}}])
    # A number given as text is refused as that, whatever the parameter's kind.
    for spec in ({"id": "tnc", "params": {"k": "5"}}, {"id": "kl_div", "params": {"sigma": "0.5"}},
                 {"id": "kl_div", "params": {"sigma": "5"}}):
        with pytest.raises(ValueError, match=r'=".*": a number written as text; pass it without quotes$'):
            ev.measure(low, [spec])


def test_labels(ev):
    high, low, _ = blobs(n=40, d=3)
    with pytest.raises(ValueError, match=r"^nh: needs labels \(--labels\)$"):
        faithful_dr.Evaluator(high).measure(low, ["nh"])
    with pytest.raises(ValueError, match=r"^labels: has 3 entries but the data has 40 points$"):
        ev.measure(low, ["nh"], labels=np.array([1, 2, 3]))


def test_options():
    high, low, _ = blobs(n=40, d=3)
    with pytest.raises(ValueError, match=r"backend 'tpu' \(accepted: auto, cpu, gpu\)"):
        faithful_dr.Evaluator(high, backend="tpu")
    with pytest.raises(ValueError, match=r"^invalid option: --threads 5000 is above the limit of 1024"):
        faithful_dr.Evaluator(high, threads=5000).measure(low, ["tnc"])


def test_memory_budget_is_a_memory_error():
    high, low, _ = blobs(n=200, d=3)
    with pytest.raises(MemoryError, match=r"above the memory budget of 1000 bytes"):
        faithful_dr.Evaluator(high, memory_budget=1000).measure(low, ["tnc:k=50"])


def test_two_keys_naming_one_projection_raise(ev):
    low = np.random.default_rng(0).normal(size=(40, 2))
    both = {1: low, "1": low + 1.0}
    message = r"^lows: the keys 1 and '1' both name the projection '1'$"
    with pytest.raises(ValueError, match=message):
        ev.measure_many(both, ["tnc:k=3"])
    with pytest.raises(ValueError, match=message):
        ev.views(both, k=3)
    # Distinct names still give one result per projection.
    assert sorted(ev.measure_many({1: low, "2": low + 1.0}, ["tnc:k=3"]).projections) == ["1", "2"]
