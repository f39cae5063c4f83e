"""faithful_dr.tl.evaluate on an AnnData object: per-point values in obs, the JSON in uns, and
the same scores as the Evaluator on the same arrays."""

import anndata
import numpy as np
import pandas as pd

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
