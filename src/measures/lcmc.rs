//! Local continuity meta-criterion (`lcmc`): `(|N^X_k(i) ∩ N^Y_k(i)| - k²/(n-1)) / k`.

use super::{Ctx, Output, Resolved, per_point};
use crate::error::Result;
use crate::sum::mean;

/// Number of common entries of two short index lists.
pub(super) fn overlap(a: &[u32], b: &[u32]) -> usize {
    a.iter().filter(|x| b.contains(x)).count()
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n) = (r.k, ctx.n());
    let (xk, yk) = (ctx.knn_high(), ctx.knn_low());
    let chance = (k * k) as f64 / (n - 1) as f64;
    let l = per_point(n, |i| (overlap(xk.row(i, k), yk.row(i, k)) as f64 - chance) / k as f64);
    Ok(Output::new().value("lcmc", mean(&l)).local("local_lcmc", l))
}
