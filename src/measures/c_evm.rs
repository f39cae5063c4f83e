//! Clustering + external validation (`c_evm`): cluster the projection with k-means (k = the
//! number of classes; scikit-learn's `KMeans(n_init="auto", random_state=0)` as ZADU runs it,
//! see [`super::kmeans`]), then score the clustering against the labels with an external
//! measure: `arand` (adjusted Rand), `ami` (adjusted mutual information), `nmi` (normalized
//! mutual information) or `vmeasure`. The key is `{clustering}_{measure}`, as in ZADU.

use super::support::contingency::Contingency;
use super::support::kmeans::kmeans;
use super::support::params::param_str;
use super::{Ctx, Output, Resolved};
use crate::error::Result;

/// ZADU's default `random_state` for KMeans.
const SEED: u32 = 0;

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let labels = ctx.labels();
    let clusters = kmeans(ctx.low, labels.classes(), SEED);
    let table = Contingency::new(labels.codes(), &clusters);
    let measure = param_str(r, "measure");
    let value = match measure {
        "arand" => table.adjusted_rand(),
        "ami" => table.adjusted_mutual_info(),
        "nmi" => table.normalized_mutual_info(),
        _ => table.v_measure(),
    };
    // ZADU's key: `{clustering}_{measure}`.
    Ok(Output::new().value(format!("{}_{measure}", param_str(r, "clustering")), value))
}
