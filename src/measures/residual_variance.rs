//! Residual variance (`residual_variance`, Tenenbaum et al. 2000): `1 − r²`, r Pearson's
//! correlation of d^X and d^Y over all pairs, from `pr`'s exact sums (the same r, clipped to
//! [−1, 1]). Undefined when either space's distances are constant.

use super::support::pairwise::{HIGH, LOW, require_varying, undefined};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let pw = ctx.pairwise();
    let s = pw.sums.as_ref().expect("planner provides pair sums");
    require_varying("residual_variance", pw.high.expect("extent"), HIGH)?;
    require_varying("residual_variance", pw.low.expect("extent"), LOW)?;
    let (nx, ny) = (s.m2_x.sqrt(), s.m2_y.sqrt());
    if nx == 0.0 || ny == 0.0 {
        return Err(undefined("residual_variance", "the pairwise distances are constant"));
    }
    let r = ((s.co_moment / nx) / ny).clamp(-1.0, 1.0);
    Ok(Output::new().value("residual_variance", 1.0 - r * r))
}
