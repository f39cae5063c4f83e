//! Average local error (`ale`, Martins et al. 2014): per point the mean over the n − 1 other
//! points of `|d^X_ij / max d^X − d^Y_ij / max d^Y|` (each space's largest pair distance);
//! the value is their mean (NumPy's). `squared=true`: the same of the squared distances
//! (`|(d^X_ij)²/max (d^X)² − (d^Y_ij)²/max (d^Y)²|`, tf-projection-qm's `average_local_error`).
//! Undefined when a space's distances are all zero.

use super::support::pairwise::{HIGH, LOW, require_nonzero};
use super::support::params::param_str;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::sum::mean;

/// Whether a spec asks for the squared distances' error.
pub(super) fn squared(r: &Resolved) -> bool {
    param_str(r, "squared") == "true"
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let pw = ctx.pairwise();
    require_nonzero("ale", pw.high.expect("extent"), HIGH)?;
    require_nonzero("ale", pw.low.expect("extent"), LOW)?;
    let sq = squared(r);
    let (_, local) =
        ctx.sweep().ale.iter().find(|(s, _)| *s == sq).cloned().expect("planner provides the average local error");
    Ok(Output::new().value("average_local_error", mean(&local)).local("local_average_local_error", local))
}
