"""faithful as a ZADU 0.5.4 resource provider: the entry point `faithful` in the group
`zadu.backends`, so that

    ZADU(specs, hd, execution=ExecutionConfig(backend="faithful"))

builds in Rust every resource faithful computes: kNN and stable kNN, densities, condensed
pair distances, the pair order, pair statistics, ordered-pair statistics (Spearman's rho,
non-metric stress), Topographic Product statistics, rank comparisons and neighbour statistics
(LCMC, neighbour dissimilarity), with ZADU's dtypes and shapes. What faithful does not compute
(dense n x n distance matrices, full neighbour rankings, geodesic distances, the external pair
order) is built by ZADU's own NumPy provider, and the resource's details say so
(``"delegated_to": "numpy"`` and the reason). Where faithful finds a resource undefined (zero
distances, say), ZADU's NumPy provider builds it, so that ZADU's own error message reaches the
user. The provider answers ZADU's memory planner (``working_memory_bytes``) for what it builds.
Requires zadu (``pip install faithful-dr[zadu]``).
"""

import math
import os

import numpy as np
from zadu.backends import NumpyResourceProvider
from zadu.backends.base import BuiltResource
from zadu.engine.resources import (
    NeighborStatistics,
    OrderedPairStatistics,
    PairOrder,
    PairStatistics,
    PairStrategy,
    RankComparisons,
    ResourceKind,
    TopographicProductStatistics,
    compact_index_dtype,
)

from . import _native
from .evaluator import knn

_KNN_KINDS = (ResourceKind.KNN, ResourceKind.STABLE_KNN)
# Built by one of faithful's passes over the rows (O(n) scratch per thread).
_ROW_PASS_KINDS = (
    *_KNN_KINDS,
    ResourceKind.RANK_COMPARISONS,
    ResourceKind.TOPOGRAPHIC_PRODUCT_STATISTICS,
    ResourceKind.PAIR_STATISTICS,
)
_RUST = "faithful"


def _delegated(built, reason):
    details = {**built.details, "delegated_to": "numpy", "delegated_because": reason}
    return BuiltResource(built.value, built.implementation, details)


def _threads():
    return os.cpu_count() or 1


class FaithfulResourceProvider:
    """ZADU's resource provider protocol (zadu/backends/base.py), served by faithful."""

    name = "faithful"
    device = "cpu"
    dtype = "float64"
    exact = True
    supports_embedding_batching = False

    def __init__(self):
        self._numpy = NumpyResourceProvider()

    def fork(self):
        return type(self)()

    def invalidate(self, space):
        del space  # faithful keeps no state between resources

    def can_batch(self, key):
        del key
        return False

    def working_memory_bytes(self, key, n_samples, available_work_bytes):
        """ZADU's planner hook: the working memory faithful uses for `key`, or None where ZADU's
        own estimate stands (densities, which ZADU sizes first, and what faithful delegates).
        A row pass holds a distance row and a selection buffer (24 bytes a point) per thread;
        the pair order two 16-byte records a pair (the records and the radix sort's scratch),
        as does faithful's ordered-pair statistics."""
        del available_work_bytes
        if key.kind in _ROW_PASS_KINDS:
            return max(1, _threads() * n_samples * 24)
        if key.kind in (ResourceKind.PAIR_ORDER, ResourceKind.ORDERED_PAIR_STATISTICS):
            return max(1, 32 * (n_samples * (n_samples - 1) // 2))
        return None

    # -- one space -------------------------------------------------------------------------

    def build_batch(self, key, points_batch, *, distance_matrices, condensed_pairs, working_memory_bytes, geodesic):
        return [
            self.build(
                key,
                points,
                distance_matrix=matrix,
                condensed_pairs=condensed,
                working_memory_bytes=working_memory_bytes,
                geodesic=geodesic,
            )
            for points, matrix, condensed in zip(points_batch, distance_matrices, condensed_pairs, strict=True)
        ]

    def build(self, key, points, *, distance_matrix, condensed_pairs, working_memory_bytes, geodesic):
        built = None if geodesic else self._build_rust(key, points, condensed_pairs)
        if built is not None:
            return built
        reason = "geodesic distances" if geodesic else _NOT_BUILT.get(key.kind, "undefined in faithful")
        return _delegated(
            self._numpy.build(
                key,
                points,
                distance_matrix=distance_matrix,
                condensed_pairs=condensed_pairs,
                working_memory_bytes=working_memory_bytes,
                geodesic=geodesic,
            ),
            reason,
        )

    def _build_rust(self, key, points, condensed_pairs):
        n = points.shape[0]
        if key.kind in _KNN_KINDS:
            indices, _ = knn(points, key.k, backend="cpu")
            value = indices.astype(compact_index_dtype(n), copy=False)
            details = {"algorithm": "faithful exact kNN", "dtype": "float64", "stable_ties": True}
            return BuiltResource(value, _RUST, details)
        if key.kind is ResourceKind.DENSITY:
            sigma = float(key.parameter)
            if not (sigma > 0 and math.isfinite(sigma)):
                return None
            values = _native.densities(points, [sigma])
            if values is None:
                return None
            details = {"algorithm": "faithful density pass (each pair's kernel once)", "sigma": sigma}
            return BuiltResource(values[0], _RUST, details)
        if key.kind is ResourceKind.CONDENSED_PAIRS:
            value = _native.condensed_distances(points)
            return BuiltResource(value, _RUST, {"algorithm": "faithful exact distance rows"})
        if key.kind is ResourceKind.PAIR_ORDER:
            distances = condensed_pairs if condensed_pairs is not None else _native.condensed_distances(points)
            indices, ranks = _native.pair_order(np.ascontiguousarray(distances, dtype=np.float64))
            value = PairOrder(
                indices=indices.astype(compact_index_dtype(distances.size), copy=False),
                sorted_ranks=ranks,
                min_distance=float(distances[indices[0]]),
                max_distance=float(distances[indices[-1]]),
            )
            details = {"pair_count": distances.size, "ordering": "faithful radix sort", "ranks": "average"}
            return BuiltResource(value, _RUST, details)
        return None

    # -- both spaces -----------------------------------------------------------------------

    def build_pair_statistics(
        self, plan, orig, emb, *, orig_distance_matrix, emb_distance_matrix, orig_condensed, emb_condensed, geodesic
    ):
        s = None if geodesic else _native.pair_statistics(orig, emb, True, False, False, None)
        if s is None or s["y_scale_exp"] != 0:
            reason = "geodesic distances" if geodesic else "projection distances out of f64's squared range"
            built = self._numpy.build_pair_statistics(
                plan,
                orig,
                emb,
                orig_distance_matrix=orig_distance_matrix,
                emb_distance_matrix=emb_distance_matrix,
                orig_condensed=orig_condensed,
                emb_condensed=emb_condensed,
                geodesic=geodesic,
            )
            return _delegated(built, reason)
        fields = {name: s[name] for name in PairStatistics.__dataclass_fields__ if name in s}
        value = PairStatistics(
            **fields,
            strategy=plan.strategy,
            block_count=1,
            block_rows=plan.block_rows,
            chunk_pairs=plan.chunk_pairs,
        )
        details = {
            "algorithm": "faithful pair sums (fixed merge tree)",
            "pair_count": value.count,
            "fused_metrics": list(plan.metric_ids),
        }
        return BuiltResource(value, _RUST, details)

    def build_ordered_pair_statistics(
        self, plan, pair_order, *, orig, emb, emb_distance_matrix, emb_condensed, geodesic
    ):
        metrics = plan.ordered_metric_ids
        if geodesic or plan.strategy is PairStrategy.EXTERNAL:
            built = self._numpy.build_ordered_pair_statistics(
                plan,
                pair_order,
                orig=orig,
                emb=emb,
                emb_distance_matrix=emb_distance_matrix,
                emb_condensed=emb_condensed,
                geodesic=geodesic,
            )
            reason = "geodesic distances" if geodesic else "ZADU's external pair order was asked for"
            return _delegated(built, reason)
        s = _native.pair_statistics(
            orig, emb, False, "spearman_rho" in metrics, "non_metric_stress" in metrics, None
        )
        spearman_rho = non_metric_stress = None
        # ZADU's checks and messages, in ZADU's order.
        if "spearman_rho" in metrics:
            if s["min_orig"] == s["max_orig"] or s["min_emb"] == s["max_emb"]:
                raise ValueError("Spearman correlation is undefined for constant distances")
            spearman_rho = s["spearman_rho"]
        if "non_metric_stress" in metrics:
            if s["max_orig"] <= 0 or s["max_emb"] <= 0:
                raise ValueError("Non-metric stress is undefined when all pairwise distances are zero")
            raw, norm = s["isotonic"]
            non_metric_stress = math.sqrt(raw / norm)
        value = OrderedPairStatistics(
            spearman_rho=spearman_rho,
            non_metric_stress=non_metric_stress,
            strategy=plan.strategy,
            pair_count=plan.pair_count,
        )
        details = {
            "algorithm": "faithful pair order (exact integer rank sums, isotonic fit)",
            "pair_count": plan.pair_count,
            "fused_metrics": list(metrics),
            "ordering_reused": False,
        }
        return BuiltResource(value, _RUST, details)

    def build_topographic_product_statistics(self, plan, orig, emb, *, orig_knn, emb_knn):
        def numpy(reason):
            built = self._numpy.build_topographic_product_statistics(
                plan, orig, emb, orig_knn=orig_knn, emb_knn=emb_knn
            )
            return _delegated(built, reason)

        if plan.geodesic:
            return numpy("geodesic distances")
        ks = list(plan.requested_ks)
        try:
            values = _native.topographic_product(orig, emb, plan.k, ks)
        except ValueError as e:
            # Undefined (zero distances): ZADU's provider raises ZADU's own message.
            return numpy(f"faithful: {e}")
        scores = np.full(plan.k, np.nan, dtype=np.float64)
        scores[np.asarray(ks) - 1] = values
        value = TopographicProductStatistics(scores=scores, block_count=1, block_rows=orig.shape[0])
        details = {"algorithm": "faithful topo on its row pass", "k": plan.k, "requested_ks": ks}
        return BuiltResource(value, _RUST, details)

    def build_rank_comparisons(self, plan, orig, emb, *, orig_knn, orig_distance_matrix, emb_distance_matrix):
        if plan.geodesic:
            built = self._numpy.build_rank_comparisons(
                plan,
                orig,
                emb,
                orig_knn=orig_knn,
                orig_distance_matrix=orig_distance_matrix,
                emb_distance_matrix=emb_distance_matrix,
            )
            return _delegated(built, "geodesic distances")
        r = _native.rank_comparisons(orig, emb, plan.k, list(plan.membership_ks))
        index_dtype = compact_index_dtype(orig.shape[0])
        as_index = {name: r[name].astype(index_dtype) for name in _RANK_ARRAYS}
        value = RankComparisons(**as_index, emb_in_orig=r["emb_in_orig"], orig_in_emb=r["orig_in_emb"])
        details = {
            "algorithm": "faithful row pass (stable kNN, cross-space rank counts)",
            "k": plan.k,
            "requested_ks": list(plan.requested_ks),
            "membership_ks": list(plan.membership_ks),
            "index_dtype": index_dtype.name,
        }
        return BuiltResource(value, _RUST, details)

    def build_neighbor_statistics(self, plan, *, orig_knn, emb_knn):
        def table(value):
            indices = value.indices if hasattr(value, "indices") else value
            return np.ascontiguousarray(np.asarray(indices)[:, : plan.k], dtype=np.int64)

        local, nd = _native.neighbor_statistics(table(orig_knn), table(emb_knn), list(plan.lcmc_ks), list(plan.nd_ks))
        value = NeighborStatistics(
            local_lcmc=dict(zip(plan.lcmc_ks, local, strict=True)),
            neighbor_dissimilarity=dict(zip(plan.nd_ks, nd, strict=True)),
        )
        details = {
            "algorithm": "faithful lcmc and nd",
            "k": plan.k,
            "lcmc_ks": list(plan.lcmc_ks),
            "neighbor_dissimilarity_ks": list(plan.nd_ks),
            "fused_metrics": list(plan.metric_ids),
        }
        return BuiltResource(value, _RUST, details)


_RANK_ARRAYS = ("orig_indices", "emb_indices", "orig_ranks_of_emb", "emb_ranks_of_orig")

# Why faithful leaves a resource kind to ZADU's NumPy provider.
_NOT_BUILT = {
    ResourceKind.DISTANCE_MATRIX: "faithful never holds an n x n distance matrix",
    ResourceKind.NEIGHBOR_RANKING: "faithful builds no full n x n neighbour ranking",
}


def backend_entrypoint(execution):
    """The `zadu.backends` entry point: a provider for one ZADU run."""
    del execution
    return FaithfulResourceProvider()
