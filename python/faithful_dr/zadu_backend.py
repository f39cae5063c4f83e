"""faithful as a ZADU 0.5.4 resource provider: the entry point `faithful` in the group
`zadu.backends`, so that

    ZADU(specs, hd, execution=ExecutionConfig(backend="faithful"))

builds its exact kNN graphs (ordinary and stable kNN: ties by index, self excluded) in Rust.
Every other resource is built by ZADU's own NumPy provider, and its details say so
(``"delegated_to": "numpy"``). Requires zadu (``pip install faithful-dr[zadu]``).
"""

import functools

from zadu.backends import NumpyResourceProvider
from zadu.backends.base import BuiltResource
from zadu.engine.resources import ResourceKind, compact_index_dtype

from .evaluator import knn

_KNN_KINDS = (ResourceKind.KNN, ResourceKind.STABLE_KNN)


def _delegated(built):
    return BuiltResource(built.value, built.implementation, {**built.details, "delegated_to": "numpy"})


class FaithfulResourceProvider(NumpyResourceProvider):
    """ZADU's NumPy provider with faithful's exact kNN."""

    name = "faithful"
    device = "cpu"
    dtype = "float64"
    exact = True
    supports_embedding_batching = False

    def build(self, key, points, *, distance_matrix, condensed_pairs, working_memory_bytes, geodesic):
        if key.kind in _KNN_KINDS and not geodesic:
            indices, _ = knn(points, key.k, backend="cpu")
            value = indices.astype(compact_index_dtype(points.shape[0]), copy=False)
            details = {"algorithm": "faithful exact kNN (Rust)", "dtype": "float64", "stable_ties": True}
            return BuiltResource(value, "faithful", details)
        built = super().build(
            key,
            points,
            distance_matrix=distance_matrix,
            condensed_pairs=condensed_pairs,
            working_memory_bytes=working_memory_bytes,
            geodesic=geodesic,
        )
        return _delegated(built)


def _delegate(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return _delegated(method(self, *args, **kwargs))

    return wrapper


# The statistics built from planned resources: ZADU's NumPy code, recorded as delegated.
for _name in (
    "build_pair_statistics",
    "build_ordered_pair_statistics",
    "build_topographic_product_statistics",
    "build_rank_comparisons",
    "build_neighbor_statistics",
):
    setattr(FaithfulResourceProvider, _name, _delegate(getattr(NumpyResourceProvider, _name)))


def backend_entrypoint(execution):
    """The `zadu.backends` entry point: a provider for one ZADU run."""
    del execution
    return FaithfulResourceProvider()
