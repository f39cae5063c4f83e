//! Curvilinear component analysis stress (`cca_stress`, Demartines & Hérault 1997), normalised:
//! `Σ_{i<j} (d^X − d^Y)² F(d^Y) ÷ Σ_{i<j} (d^X)² F(d^Y)` with `F(d) = exp(−d/λ)` (`exponential`)
//! or `1[d ≤ λ]` (`step`); `cca_stress_raw` is the numerator. Local: each point's part of the
//! value (its full row's numerator over the whole denominator; kind `sum`). Undefined when the
//! weighted denominator is zero (every weighted pair at original distance 0, or no pair weighed).

use super::support::pairwise::{require_finite_sums, undefined};
use super::support::params::param_str;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::resources::{CcaJob, CcaKernel};

/// The weighting a spec asks for.
pub(super) fn job(r: &Resolved) -> CcaJob {
    let kernel = if param_str(r, "kernel") == "step" { CcaKernel::Step } else { CcaKernel::Exponential };
    CcaJob { lambda: r.float("lambda"), kernel }
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let want = job(r);
    let sweep = ctx.sweep();
    let (_, s) = sweep
        .cca
        .iter()
        .find(|(j, _)| j.kernel == want.kernel && j.lambda.to_bits() == want.lambda.to_bits())
        .expect("planner provides this weighting's sums");
    require_finite_sums("cca_stress", ctx.pairwise(), &[], &[s.num, s.den])?;
    if s.den <= 0.0 {
        return Err(undefined(
            "cca_stress",
            "the weighted sum of squared original distances is zero (no pair with d^X > 0 has weight F(d^Y) > 0)",
        ));
    }
    let local = s.rows.iter().map(|v| v / s.den).collect();
    Ok(Output::new()
        .value("cca_stress", s.num / s.den)
        // Every pair is in two rows: half the total is the sum over the pairs i < j.
        .value("cca_stress_raw", s.num / 2.0)
        .local("local_cca_stress", local))
}
