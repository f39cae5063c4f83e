//! Neighbourhood hit (`nh`): the share of each point's projection neighbours with its label.

use super::{Ctx, Output, Resolved, per_point};
use crate::error::Result;
use crate::sum::mean;

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n, yk) = (r.k, ctx.n(), ctx.knn_low());
    let lab = ctx.labels().codes();
    let l = per_point(n, |i| yk.row(i, k).iter().filter(|&&j| lab[j as usize] == lab[i]).count() as f64 / k as f64);
    Ok(Output::new().value("neighborhood_hit", mean(&l)).local("local_neighborhood_hit", l))
}
