"""Row shards (docs/distributed.md): a run split into blocks of rows, each block scored
anywhere by `Evaluator.map_rows` into a partial, the partials folded into the result of one
`Evaluator.measure_many` call, bit for bit. `faithful_dr.dask` runs the blocks on a Dask
cluster; this module is the engine-free part."""

from . import _native
from .evaluator import Result, _count


def shard_plan(n, max_rows):
    """The blocks `[(start, end), ...]` covering rows 0..n, each of at most `max_rows` rows
    where NumPy's summation tree allows (a leaf of up to 128 rows is never split)."""
    return _native.shard_plan(_count("n", n), _count("max_rows", max_rows))


def check_shardable(specs):
    """Raises ValueError naming the first spec that is malformed or cannot be computed in row
    shards (shardable: tnc, mrre, lcmc, nh, ca_tnc, knn_overlap, nerv, coranking)."""
    _native.check_shardable(specs)


def fold(partials, *, local=False):
    """The `Result` of the partials (str or bytes, any order) of every block of one run: the
    same scores, bit for bit, as `Evaluator(high, local=local).measure_many(lows, specs)`, one
    projection per name the partials carry, in order of first appearance. A gap, an overlap, a
    block off the plan or partials of different runs raise ValueError."""
    texts = [p.decode("utf-8") if isinstance(p, (bytes, bytearray)) else p for p in partials]
    return Result._of(_native.fold(texts, bool(local)))
