"""Row shards without an engine: Evaluator.map_rows on the blocks of shard_plan, folded in any
order (str or bytes), give measure's scores bit for bit; a missing block, a block off the plan
and partials of another run are ValueErrors that say so."""

import pickle

import numpy as np
import pytest

import faithful_dr
from faithful_dr.shard import check_shardable

SPECS = ["tnc:k=8", "mrre:k=4", "coranking:k_max=20"]


def scores_json(result):
    text = result.to_json()
    return text[: text.index(',"run":')]


@pytest.fixture(scope="module")
def run():
    rng = np.random.default_rng(1)
    high = rng.integers(0, 3, (700, 4)).astype(np.float64)
    low = rng.normal(size=(700, 2))
    ev = faithful_dr.Evaluator(high, local=True, threads=1)
    blocks = faithful_dr.shard_plan(700, 150)
    return ev, low, blocks, [ev.map_rows(low, b, SPECS) for b in blocks]


def test_the_plan_tiles_the_rows_with_tree_blocks():
    blocks = faithful_dr.shard_plan(1000, 200)
    assert blocks[0][0] == 0 and blocks[-1][1] == 1000
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    assert faithful_dr.shard_plan(100, 10) == [(0, 100)]  # a leaf is never split


def test_a_shuffled_fold_is_measure_bit_for_bit(run):
    ev, low, blocks, parts = run
    assert len(blocks) >= 4
    order = [parts[i].encode() if i % 2 else pickle.loads(pickle.dumps(parts[i])) for i in (3, 0, 2, 1)]
    order += parts[4:]
    got = faithful_dr.fold(order, local=True)
    assert scores_json(got) == scores_json(ev.measure(low, SPECS))
    assert faithful_dr.fold(parts).scores[0].local is None
    # The same block again: the same bytes (a retried task is harmless).
    assert ev.map_rows(low, blocks[1], SPECS) == parts[1]


def test_bad_folds_and_blocks_are_value_errors_that_say_why(run):
    ev, low, blocks, parts = run
    a, b = blocks[1]
    with pytest.raises(ValueError, match=f"rows {a}:{b} are in no partial"):
        faithful_dr.fold(parts[:1] + parts[2:])
    with pytest.raises(ValueError, match="overlaps"):
        faithful_dr.fold(parts + parts[:1])
    other = ev.map_rows(low * 2, blocks[0], SPECS)
    with pytest.raises(ValueError, match="fingerprint"):
        faithful_dr.fold([other] + parts[1:])
    with pytest.raises(ValueError, match="not a faithful partial"):
        faithful_dr.fold(["{}"])
    with pytest.raises(ValueError, match="rows 0:10 .*summation tree"):
        ev.map_rows(low, (0, 10), SPECS)
    with pytest.raises(ValueError, match="nm_stress: cannot be computed in row shards"):
        check_shardable(["tnc", "nm_stress"])


def test_a_plan_too_large_to_list_is_refused_by_its_bound():
    with pytest.raises(ValueError, match=r"^shard_plan: parameter n=1000000000000: above 2\^32 points"):
        faithful_dr.shard_plan(10**12, 1)
    with pytest.raises(ValueError, match=r"more than 1000000 blocks; raise max_rows"):
        faithful_dr.shard_plan(2**32, 1)
    assert 0 < len(faithful_dr.shard_plan(2**32, 2**32 // 1000)) <= 4096
