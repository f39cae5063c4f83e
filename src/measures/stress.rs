//! Stress (`stress`): `√(Σ_P (d^X − d^Y)² / Σ_P (d^X)²)` over all pairs i < j.
//! Undefined (an error, as in ZADU) when every original distance is zero.

use super::support::pairwise::{HIGH, require_finite_sums, require_nonzero};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let pw = ctx.pairwise();
    let s = pw.sums.as_ref().expect("planner provides pair sums");
    require_nonzero("stress", pw.high.expect("extent"), HIGH)?;
    require_finite_sums("stress", pw, &[s.sum_xx], &[s.sum_sq_diff])?;
    Ok(Output::new().value("stress", (s.sum_sq_diff / s.sum_xx).sqrt()))
}
