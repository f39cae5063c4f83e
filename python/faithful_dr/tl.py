"""AnnData helper (scanpy's `tl` convention): evaluate embeddings stored in `adata.obsm`
against a representation of the same cells. Requires anndata only at call time."""

import json

import numpy as np

from .evaluator import Evaluator

DEFAULT_SPECS = ("tnc", "mrre", "lcmc")


def evaluate(adata, use_rep="X_pca", bases=("X_umap",), labels_key=None, specs=DEFAULT_SPECS, key_added="faithful",
             **options):
    """Evaluates each embedding `adata.obsm[basis]` against `use_rep` (an `obsm` key, or "X"
    for `adata.X`), with `labels_key` (an `obs` column) as class labels.

    Writes every per-point value to `adata.obs["{key_added}_{basis}_{local key}"]` (e.g.
    `faithful_X_umap_local_trustworthiness`) and the result JSON (the CLI's schema) to
    `adata.uns[key_added]`; returns the `Result`. `options` go to `Evaluator` (backend, threads,
    ...); local values are always computed.
    """
    high = _matrix(adata.X if use_rep == "X" else adata.obsm[use_rep], use_rep)
    labels = None
    if labels_key is not None:
        column = adata.obs[labels_key]
        # Categories (or any values) as integer codes in sorted order of the distinct values.
        labels = np.unique(np.asarray(column), return_inverse=True)[1].astype(np.int64)
    lows = {basis: _matrix(adata.obsm[basis], basis) for basis in bases}
    res = Evaluator(high, labels=labels, local=True, **options).measure_many(lows, list(specs))
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
