//! Pearson's r of the pair distances (`pr`): `Σ(d^X − m_X)(d^Y − m_Y) / √(Σ(d^X − m_X)² Σ(d^Y − m_Y)²)`
//! over all pairs, from centred moments (no cancellation), clipped to [−1, 1] as ZADU does.
//! Undefined when the distances of either space are constant.

use super::support::pairwise::{HIGH, LOW, require_varying, undefined};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let pw = ctx.pairwise();
    let s = pw.sums.as_ref().expect("planner provides pair sums");
    require_varying("pr", pw.high.expect("extent"), HIGH)?;
    require_varying("pr", pw.low.expect("extent"), LOW)?;
    let (nx, ny) = (s.m2_x.sqrt(), s.m2_y.sqrt());
    if nx == 0.0 || ny == 0.0 {
        return Err(undefined("pr", "the pairwise distances are constant"));
    }
    Ok(Output::new().value("pearson_r", ((s.co_moment / nx) / ny).clamp(-1.0, 1.0)))
}
