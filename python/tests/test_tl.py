"""faithful_dr.tl.evaluate on an AnnData object: per-point values in obs, the JSON in uns, and
the same scores as the Evaluator on the same arrays."""

import anndata
import numpy as np
import pandas as pd
import pytest

import faithful_dr
from conftest import blobs
from faithful_dr import tl


def test_evaluate_writes_obs_and_uns():
    high, low, labels = blobs(n=150, d=6, seed=41)
    adata = anndata.AnnData(X=high)
    adata.obsm["X_pca"] = high[:, :4]
    adata.obsm["X_umap"] = low
    adata.obsm["X_tsne"] = low[:, ::-1] * 2.0
    adata.obs["cell_type"] = pd.Categorical([f"t{v}" for v in labels])
    res = tl.evaluate(adata, use_rep="X", bases=["X_umap", "X_tsne"], labels_key="cell_type",
                      specs=["tnc:k=10", "nh:k=5", "nh:k=9"])
    want = faithful_dr.Evaluator(high, labels=labels, local=True).measure_many(
        {"X_umap": low, "X_tsne": low[:, ::-1] * 2.0}, ["tnc:k=10", "nh:k=5", "nh:k=9"])
    assert [s.values for s in res.scores] == [s.values for s in want.scores]
    np.testing.assert_array_equal(adata.obs["faithful_X_umap_local_trustworthiness"],
                                  want.projections["X_umap"][0].local["local_trustworthiness"])
    # Two specs of one measure: the spec tells their columns apart.
    np.testing.assert_array_equal(adata.obs["faithful_X_tsne_local_neighborhood_hit_nh:k=9"],
                                  want.projections["X_tsne"][2].local["local_neighborhood_hit"])
    uns = adata.uns["faithful"]
    assert [p["name"] for p in uns["projections"]] == ["X_umap", "X_tsne"]
    assert uns["projections"][0]["scores"][0]["values"]["trustworthiness"] == res.scores[0]["trustworthiness"]


def test_scanpy_neighbors_graph_gives_the_raw_representations_continuity_and_lcmc():
    # scanpy's kNN graph (exact: sklearn's brute-force transformer at this n), self dropped:
    # n_neighbors − 1 neighbours per row in adata.obsp["distances"].
    import scanpy as sc

    high, low, labels = blobs(n=300, d=8, seed=43)
    k = 12
    adata = anndata.AnnData(X=high)
    adata.obsm["X_umap"] = low
    sc.pp.neighbors(adata, n_neighbors=k + 1, use_rep="X", transformer="sklearn")
    specs = [f"continuity:k={k}", f"mrre_missing:k={k}", f"lcmc:k={k}"]
    graph = tl.evaluate(adata, neighbors_key="neighbors", basis="X_umap", specs=specs, key_added="g")
    raw = tl.evaluate(adata, use_rep="X", basis="X_umap", specs=specs, key_added="r")
    assert [s.values for s in graph.scores] == [s.values for s in raw.scores]
    np.testing.assert_array_equal(adata.obs["g_X_umap_local_continuity"], adata.obs["r_X_umap_local_continuity"])
    assert graph.run["spaces"]["high"]["input"] == "kNN graph"
    assert graph.run["spaces"]["high"]["graph"]["k"] == k
    # The default specs from a graph; trustworthiness is refused with the input it needs.
    default = tl.evaluate(adata, neighbors_key="neighbors", basis="X_umap")
    assert [s.id for s in default.scores] == ["continuity", "mrre_missing", "lcmc"]
    with pytest.raises(ValueError, match=r"tnc: needs the original ranks of arbitrary pairs .* kNN graph \(12 neighbours"):
        tl.evaluate(adata, neighbors_key="neighbors", basis="X_umap", specs=["tnc:k=5"])
    with pytest.raises(ValueError, match=r"neighbors_key='nope': adata.uns has no such entry"):
        tl.evaluate(adata, neighbors_key="nope", basis="X_umap")
