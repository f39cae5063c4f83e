"""A drop-in for ZADU 0.5.4's `ZADU` class: the same constructor, and `measure` /
`measure_many` returning the same shapes and keys, computed by faithful. Changing
``from zadu import ZADU`` to ``from faithful_dr.zadu import ZADU`` is enough.

What differs: `snc` (steadiness & cohesiveness) equals ZADU's seeded runs where NumPy sorts
with its baseline introsort; with x86-simd-sort (AVX2/AVX-512) ZADU's HDBSCAN orders tied tree
edges differently (docs/measures.md), an unseeded `random_state` (ZADU's default None) is
seed 0 here and a NumPy `Generator` as `random_state` is refused with a TypeError (integer
seeds only); c_evm's `clustering="dbscan"` and `clustering_args` are not supported, nor gi
with a `metric` other than euclidean; `geodesic=True` is not supported; `execution` is accepted
for its memory budget only. Labels of any kind (strings, floats) are taken as ZADU takes them,
as classes in sorted order, and only where a spec uses them. ZADU itself is not needed.
"""

from collections.abc import Sequence

import numpy as np

from . import measures
from .evaluator import Evaluator


def _renamed(error, name, as_name):
    """`error` (a ValueError naming faithful's argument `name`) naming ZADU's `as_name`."""
    text = str(error)
    if text.startswith(f"{name}:"):
        return ValueError(f"{as_name}:{text[len(name) + 1:]}")
    return error


class ZADU:
    """Evaluates projections of `orig` with ZADU's spec list
    (``[{"id": "tnc", "params": {"k": 20}}, ...]``)."""

    DEFAULT_K = 20

    def __init__(
        self,
        spec_list,
        orig,
        return_local=False,
        verbose=False,
        geodesic=False,
        max_memory_bytes=None,
        execution=None,
    ):
        if isinstance(spec_list, (str, bytes)) or not isinstance(spec_list, Sequence):
            raise TypeError("spec_list must be a sequence of measure specifications")
        for spec in spec_list:
            if not isinstance(spec, dict):
                raise TypeError("Each measure specification must be a dictionary")
            if "id" not in spec:
                raise ValueError(f"Measure specification missing required key 'id': {spec}")
        if geodesic:
            raise ValueError("geodesic=True is not supported by faithful (Euclidean distances only)")
        budget = max_memory_bytes
        if budget is None and execution is not None:
            budget = getattr(execution, "memory_budget_bytes", None)
        self.spec_list = [{"id": s["id"], "params": dict(s.get("params") or {})} for s in spec_list]
        for spec in self.spec_list:
            # ZADU's snc also draws from a NumPy Generator (PCG64); faithful reproduces only the
            # RandomState stream of an integer seed, so a Generator is refused, not approximated.
            if isinstance(spec["params"].get("random_state"), np.random.Generator):
                raise TypeError(
                    f"{spec['id']}: random_state as a numpy.random.Generator is not supported; "
                    "pass an integer seed (faithful reproduces NumPy's RandomState(seed) draws)"
                )
        self.return_local = bool(return_local)
        self.verbose = bool(verbose)
        try:
            self._evaluator = Evaluator(orig, local=self.return_local, memory_budget=budget)
        except ValueError as e:
            raise _renamed(e, "high", "orig") from None
        by_label = {name for m in measures() if m["labels"] for name in (m["id"], m["zadu_id"])}
        self._uses_labels = any(s["id"] in by_label for s in self.spec_list)
        self.last_run_info = None

    def _labels(self, labels, name):
        """ZADU's labels as faithful's integer classes: any 1-D array (strings, floats too) as
        its classes in sorted order (np.unique's, as ZADU's measures group them), and None
        where no spec uses labels (ZADU ignores them there)."""
        if labels is None or not self._uses_labels:
            return None
        a = np.asarray(labels)
        if a.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D array of labels, got {a.ndim}-D")
        if a.dtype.kind in "iub":
            return a
        try:
            return np.unique(a, return_inverse=True)[1].reshape(-1).astype(np.int64)
        except TypeError as e:
            raise ValueError(f"{name}: labels that cannot be sorted into classes ({e})") from None

    def measure(self, emb, label=None):
        """Every spec's scores on `emb`, in spec order: a list of dicts (with `return_local`, a
        pair (scores, locals), None for measures without local values)."""
        try:
            res = self._evaluator.measure_many({"emb": emb}, self.spec_list, labels=self._labels(label, "label"))
        except ValueError as e:
            raise _renamed(_renamed(e, "labels", "label"), "low", "emb") from None
        self.last_run_info = res.run
        return self._shape(res.projections["emb"])

    def measure_many(self, embeddings, labels=None):
        """`measure` for each projection of `embeddings`, sharing the original space's
        resources; `labels` is shared by all."""
        if isinstance(embeddings, np.ndarray) and embeddings.ndim == 2:
            raise ValueError("embeddings must contain multiple 2D arrays; use measure() for one embedding")
        lows = {f"embeddings[{i}]": e for i, e in enumerate(embeddings)}
        if not lows:
            return []
        res = self._evaluator.measure_many(lows, self.spec_list, labels=self._labels(labels, "labels"))
        self.last_run_info = res.run
        return [self._shape(scores) for scores in res.projections.values()]

    def _shape(self, scores):
        values = [dict(s.values) for s in scores]
        if not self.return_local:
            return values
        return values, [None if s.local is None else dict(s.local) for s in scores]
