//! KL divergence of the densities (`kl_div`, σ = 0.1): `Σ_i p_i ln(p_i / q_i)` with p and q
//! the Gaussian densities of X and Y (`resources::density`), summed in NumPy's order.
//! Undefined when every distance of either space is zero; σ must be positive.

use super::support::pairwise::{HIGH, LOW, require_nonzero};
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::sum::pairwise_sum;

/// The densities (p, q) for the spec's σ, or the error when a space has only zero distances.
pub(super) fn densities<'a>(ctx: &'a Ctx, r: &Resolved, id: &str) -> Result<(&'a [f64], &'a [f64])> {
    let pw = ctx.pairwise();
    let sigma = r.float("sigma");
    let d = pw.density(sigma).expect("planner provides the densities");
    require_nonzero(id, pw.high.expect("extent"), HIGH)?;
    require_nonzero(id, pw.low.expect("extent"), LOW)?;
    Ok((d.high.as_deref().expect("non-zero extent"), d.low.as_deref().expect("non-zero extent")))
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (p, q) = densities(ctx, r, "kl_div")?;
    let terms: Vec<f64> = p.iter().zip(q).map(|(&a, &b)| a * (a / b).ln()).collect();
    Ok(Output::new().value("kl_divergence", pairwise_sum(&terms)))
}
