//! Non-metric stress (`nm_stress`): d̂ is the increasing isotonic regression of d^Y on d^X over
//! all pairs (pairs with tied d^X pooled to their mean first, then PAVA: scikit-learn's
//! `IsotonicRegression`, as ZADU uses it); `√(Σ (d^Y − d̂)² / Σ (d^Y)²)`. Undefined when every
//! distance of either space is zero.

use super::support::pairwise::{HIGH, LOW, require_nonzero};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let order = ctx.pairwise().order.as_ref().expect("planner provides the pair order");
    require_nonzero("nm_stress", order.high, HIGH)?;
    require_nonzero("nm_stress", order.low, LOW)?;
    let (raw, norm) = order.isotonic.expect("isotonic fit");
    Ok(Output::new().value("non_metric_stress", (raw / norm).sqrt()))
}
