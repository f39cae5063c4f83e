"""AnnData helper (scanpy's `tl` convention): evaluate embeddings stored in `adata.obsm`
against a representation of the same cells, or against the kNN graph `sc.pp.neighbors` stored.
Requires anndata only at call time."""

import json

import numpy as np

from .evaluator import Evaluator

DEFAULT_SPECS = ("tnc", "mrre", "lcmc")
#: The default specs when the original space is a kNN graph (they need only its neighbours).
GRAPH_SPECS = ("continuity", "mrre_missing", "lcmc")


def evaluate(adata, use_rep="X_pca", bases=("X_umap",), labels_key=None, specs=None, key_added="faithful",
             *, basis=None, neighbors_key=None, metric="euclidean", p=None, **options):
    """Evaluates each embedding `adata.obsm[basis]` against the cells' original space: the
    representation `use_rep` (an `obsm` key, or "X" for `adata.X`) under `metric` (scipy's
    names, default Euclidean), or with `neighbors_key` the kNN graph that scanpy's
    `sc.pp.neighbors(..., key_added=...)` stored (`adata.obsp[adata.uns[neighbors_key]
    ["distances_key"]]`; "neighbors" for scanpy's default), which then is the original space.

    `basis` names one embedding (as scanpy's plotting functions do); `bases` several.
    `labels_key` (an `obs` column) gives class labels. `specs` default to tnc, mrre and lcmc, or
    with a graph to continuity, mrre_missing and lcmc at the graph's k (a kNN graph holds no
    ranks of arbitrary pairs, so trustworthiness is refused with the input it needs; use
    `use_rep`).

    Writes every per-point value to `adata.obs["{key_added}_{basis}_{local key}"]` (e.g.
    `faithful_X_umap_local_trustworthiness`) and the result JSON (the CLI's schema) to
    `adata.uns[key_added]`; returns the `Result`. `options` go to `Evaluator` (backend, threads,
    ...); local values are always computed.
    """
    if basis is not None:
        bases = (basis,)
    labels = None
    if labels_key is not None:
        column = adata.obs[labels_key]
        # Categories (or any values) as integer codes in sorted order of the distinct values.
        labels = np.unique(np.asarray(column), return_inverse=True)[1].astype(np.int64)
    lows = {b: _matrix(adata.obsm[b], b) for b in bases}
    if neighbors_key is not None:
        if neighbors_key not in adata.uns:
            raise ValueError(f"neighbors_key={neighbors_key!r}: adata.uns has no such entry (run sc.pp.neighbors first)")
        key = adata.uns[neighbors_key].get("distances_key", "distances")
        if key not in adata.obsp:
            raise ValueError(f"neighbors_key={neighbors_key!r}: adata.obsp has no {key!r} (the kNN distances)")
        graph = adata.obsp[key]
        evaluator = Evaluator.from_knn_graph(graph, labels=labels, local=True, name=key, **options)
        if specs is None:
            # At the graph's k (its shortest row), for continuity within k < n/2.
            k = int(np.diff(graph.tocsr().indptr).min())
            k = max(1, min(k, (graph.shape[0] - 1) // 2))
            specs = [f"{s}:k={k}" for s in GRAPH_SPECS]
    else:
        high = _matrix(adata.X if use_rep == "X" else adata.obsm[use_rep], use_rep)
        evaluator = Evaluator(high, labels=labels, local=True, metric=metric, p=p, **options)
        specs = DEFAULT_SPECS if specs is None else specs
    res = evaluator.measure_many(lows, list(specs))
    for s in res.scores:
        for key, values in (s.local or {}).items():
            suffix = key if len([t for t in res.projections[s.projection] if t.id == s.id]) == 1 else f"{key}_{s.spec}"
            adata.obs[f"{key_added}_{s.projection}_{suffix}"] = values
    adata.uns[key_added] = json.loads(res.to_json())
    return res


def _matrix(x, name):
    """A dense 2-D array (scipy sparse matrices are densified)."""
    if hasattr(x, "toarray"):
        x = x.toarray()
    return np.asarray(x) if not hasattr(x, "to_numpy") else x.to_numpy()
