//! Mean relative rank error (`mrre`), ZADU's orientation (1 is perfect).
//!
//! `false_i = 1 - (1/c) Σ_{s<k} |r^X(i, y_s) - (s+1)| / (s+1)` over the projection's neighbours
//! y_s, `missing_i` the same over the original neighbours, `c = Σ_{r=1..k} |n - 2r + 1| / r`.

use super::{Ctx, Output, Resolved, per_point};
use crate::error::Result;
use crate::sum::{mean, pairwise_sum};

fn local(ranks: &[u32], c: f64, buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend(ranks.iter().enumerate().map(|(s, &r)| {
        let own = s as i64 + 1;
        (r as i64 - own).abs() as f64 / own as f64
    }));
    1.0 - pairwise_sum(buf) / c
}

/// `c = Σ_{r=1..k} |n - 2r + 1| / r`, in ZADU's order.
fn norm(n: usize, k: usize) -> f64 {
    let mut c = 0.0;
    for rank in 1..=k as i64 {
        c += (n as i64 - 2 * rank + 1).abs() as f64 / rank as f64;
    }
    c
}

/// `mrre_missing` alone: the projection's ranks of the original neighbours only, so a kNN graph
/// of the original space serves it (the same values as mrre's, bit for bit).
pub(super) fn compute_missing(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, cross) = (r.k, ctx.n(), ctx.cross());
    let c = norm(n, k);
    let m = per_point(n, |i| local(cross.rank_low_of_high(i, k), c, &mut Vec::with_capacity(k)));
    Ok(Output::new().value("mrre_missing", mean(&m)).local("local_mrre_missing", m))
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, cross) = (r.k, ctx.n(), ctx.cross());
    let c = norm(n, k);
    let f = per_point(n, |i| local(cross.rank_high_of_low(i, k), c, &mut Vec::with_capacity(k)));
    let m = per_point(n, |i| local(cross.rank_low_of_high(i, k), c, &mut Vec::with_capacity(k)));
    Ok(Output::new()
        .value("mrre_false", mean(&f))
        .value("mrre_missing", mean(&m))
        .local("local_mrre_false", f)
        .local("local_mrre_missing", m))
}
