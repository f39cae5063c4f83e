//! Sammon's stress (`sammon`, Sammon 1969), normalised:
//! `Σ_{i<j, d^X>0} (d^X − d^Y)²/d^X ÷ Σ_{i<j} d^X`. Pairs at original distance 0 are left out
//! (they would divide by zero; the run report counts them). Local: each point's part, its full
//! row's sum over the whole denominator, so the local values sum to the value (kind `sum`).
//! Undefined when every original distance is zero.

use super::support::pairwise::{require_finite_sums, undefined};
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let sweep = ctx.sweep();
    let s = sweep.sammon.as_ref().expect("planner provides Sammon's sums");
    if s.den <= 0.0 {
        return Err(undefined("sammon", "all pairwise distances are zero in the original space"));
    }
    require_finite_sums("sammon", ctx.pairwise(), &[s.den], &[s.num])?;
    // Both totals count every pair twice (once in each of its rows): the ratio is the pairs'.
    let local = s.rows.iter().map(|r| r / s.den).collect();
    Ok(Output::new().value("sammon_stress", s.num / s.den).local("local_sammon_stress", local))
}
