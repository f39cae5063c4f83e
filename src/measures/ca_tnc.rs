//! Class-aware trustworthiness & continuity (`ca_tnc`): as `tnc`, but trustworthiness counts
//! only false neighbours of another class, continuity only missing neighbours of the same class.

use super::tnc::excess;
use super::{Ctx, Output, Resolved, per_point, tnc_factor};
use crate::error::Result;
use crate::sum::mean;

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, cross) = (r.k, ctx.n(), ctx.cross());
    let (lab, xk, yk) = (ctx.labels().codes(), ctx.knn_high(), ctx.knn_low());
    let f = tnc_factor(n, k);
    let t = per_point(n, |i| {
        let nb = yk.row(i, k);
        1.0 - excess(cross.rank_high_of_low(i, k), k, |s| lab[nb[s] as usize] != lab[i]) as f64 * f
    });
    let c = per_point(n, |i| {
        let nb = xk.row(i, k);
        1.0 - excess(cross.rank_low_of_high(i, k), k, |s| lab[nb[s] as usize] == lab[i]) as f64 * f
    });
    Ok(Output::new()
        .value("ca_trustworthiness", mean(&t))
        .value("ca_continuity", mean(&c))
        .local("local_ca_trustworthiness", t)
        .local("local_ca_continuity", c))
}
