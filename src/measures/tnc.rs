//! Trustworthiness & continuity (`tnc`).
//!
//! `T_i = 1 - 2/(k(2n-3k-1)) · Σ_{j ∈ N^Y_k(i) ∖ N^X_k(i)} (r^X(i,j) - k)`; j is outside
//! `N^X_k(i)` exactly when `r^X(i,j) > k`. Continuity swaps the spaces. The sum is an exact
//! integer, scaled as ZADU scales it, so local values equal ZADU's bit for bit.

use super::{Ctx, Output, Resolved, per_point, tnc_factor};
use crate::error::Result;
use crate::sum::mean;

/// Sum of `rank - k` over the ranks beyond k that `keep` accepts (by slot).
pub(super) fn excess(ranks: &[u32], k: usize, keep: impl Fn(usize) -> bool) -> i64 {
    ranks.iter().enumerate().filter(|&(s, &r)| r as usize > k && keep(s)).map(|(_, &r)| r as i64 - k as i64).sum()
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, cross) = (r.k, ctx.n(), ctx.cross());
    let f = tnc_factor(n, k);
    let t = per_point(n, |i| 1.0 - excess(cross.rank_high_of_low(i, k), k, |_| true) as f64 * f);
    let c = per_point(n, |i| 1.0 - excess(cross.rank_low_of_high(i, k), k, |_| true) as f64 * f);
    Ok(Output::new()
        .value("trustworthiness", mean(&t))
        .value("continuity", mean(&c))
        .local("local_trustworthiness", t)
        .local("local_continuity", c))
}

/// `continuity` alone: the projection's ranks of the original neighbours only, so a kNN graph
/// of the original space serves it (the same values as tnc's continuity, bit for bit).
pub(super) fn compute_continuity(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, cross) = (r.k, ctx.n(), ctx.cross());
    let f = tnc_factor(n, k);
    let c = per_point(n, |i| 1.0 - excess(cross.rank_low_of_high(i, k), k, |_| true) as f64 * f);
    Ok(Output::new().value("continuity", mean(&c)).local("local_continuity", c))
}
