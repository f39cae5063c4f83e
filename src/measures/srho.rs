//! Spearman's ρ of the pair distances (`srho`): the Pearson correlation of the average ranks
//! (ties share the mean of their positions) of d^X and d^Y over all pairs. Computed from exact
//! integer sums of doubled ranks (see `resources::pairs::scans`). Undefined when the distances of
//! either space are constant.

use super::support::pairwise::{HIGH, LOW, require_varying, undefined};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let order = ctx.pairwise().order.as_ref().expect("planner provides the pair order");
    require_varying("srho", order.high, HIGH)?;
    require_varying("srho", order.low, LOW)?;
    let rho = order
        .ranks
        .as_ref()
        .expect("ranks")
        .rho()
        .ok_or_else(|| undefined("srho", "the pairwise distances are constant"))?;
    Ok(Output::new().value("spearman_rho", rho))
}
