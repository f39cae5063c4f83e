//! Scale-normalised stress (`sn_stress`): with α = Σ d^X d^Y / Σ (d^Y)², the stress of α·Y,
//! `√(Σ (d^X − α d^Y)² / Σ (d^X)²)`. The residual is accumulated directly (never as
//! Σd^X² − 2αΣd^Xd^Y + α²Σd^Y², which cancels near a perfect fit). Undefined when every
//! distance of either space is zero.

use super::support::pairwise::{HIGH, LOW, require_finite_sums, require_nonzero};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let pw = ctx.pairwise();
    let s = pw.sums.as_ref().expect("planner provides pair sums");
    require_nonzero("sn_stress", pw.high.expect("extent"), HIGH)?;
    require_nonzero("sn_stress", pw.low.expect("extent"), LOW)?;
    require_finite_sums("sn_stress", pw, &[s.sum_xx], &[s.scaled_residual])?;
    Ok(Output::new().value("scale_normalized_stress", (s.scaled_residual / s.sum_xx).sqrt()))
}
