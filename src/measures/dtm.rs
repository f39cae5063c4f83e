//! Distance to measure (`dtm`, σ = 0.1): `Σ_i |p_i − q_i|` with p and q the Gaussian densities
//! of X and Y, as in `kl_div`. Undefined when every distance of either space is zero.

use super::kl_div::densities;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::sum::pairwise_sum;

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (p, q) = densities(ctx, r, "dtm")?;
    let terms: Vec<f64> = p.iter().zip(q).map(|(&a, &b)| (a - b).abs()).collect();
    Ok(Output::new().value("distance_to_measure", pairwise_sum(&terms)))
}
