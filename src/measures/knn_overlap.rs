//! kNN overlap (`knn_overlap`): per point the t = |N^X_k(i) ∩ N^Y_k(i)| shared neighbours,
//! `t/k` (TorchDR's `neighborhood_preservation`, uwot's and openproblems' kNN preservation) and
//! the Jaccard index `t/(2k − t)` (tf-projection-qm); the values are their means (NumPy's).
//! Also per point the counts of true (t), false (in N^Y not N^X: k − t) and missing (in N^X not
//! N^Y: k − t) neighbours.

use super::lcmc::overlap;
use super::{Ctx, Output, Resolved, per_point};
use crate::error::Result;
use crate::sum::mean;

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n) = (r.k, ctx.n());
    let (xk, yk) = (ctx.knn_high(), ctx.knn_low());
    let t: Vec<usize> = per_point(n, |i| overlap(xk.row(i, k), yk.row(i, k)));
    let share: Vec<f64> = t.iter().map(|&t| t as f64 / k as f64).collect();
    let jaccard: Vec<f64> = t.iter().map(|&t| t as f64 / (2 * k - t) as f64).collect();
    let other: Vec<f64> = t.iter().map(|&t| (k - t) as f64).collect();
    Ok(Output::new()
        .value("knn_overlap", mean(&share))
        .value("jaccard", mean(&jaccard))
        .local("local_knn_overlap", share)
        .local("local_jaccard", jaccard)
        .local("true_neighbours", t.iter().map(|&t| t as f64).collect())
        .local("false_neighbours", other.clone())
        .local("missing_neighbours", other))
}
