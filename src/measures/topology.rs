//! Topology (`topology`, `dim` = 0 | 1): the persistence diagrams of the Vietoris–Rips
//! filtrations of X and of Y (reference distances), compared by the bottleneck and the
//! 1-Wasserstein distance with the L∞ ground distance (gudhi's defaults); the diagrams
//! themselves as curves for plotting.
//!
//! - `dim=0`: every class is born at 0 and dies at an edge length of a minimum spanning tree
//!   (`support::mst`: Prim's algorithm on exact distances in O(n·D) memory); the one infinite
//!   class of each space matches the other's at cost 0 and is left out. Curves `deaths_high`,
//!   `deaths_low`: the positive death times, ascending.
//! - `dim=1`: ripser's reduction (`support::rips`), planned against the memory budget before any
//!   work. Curves `births_high`, `deaths_high`, `births_low`, `deaths_low`: the pairs sorted by
//!   birth, then death.
//!
//! Zero-length pairs (death = birth, e.g. a duplicate point's edge of length 0) are not in a
//! diagram, as in ripser and gudhi.

use super::support::diagram::{bottleneck, bottleneck_h0, wasserstein, wasserstein_h0};
use super::support::mst::mst_lengths;
use super::support::pairwise::undefined;
use super::support::params::param_str;
use super::support::rips::h1_pairs;
use super::{Ctx, Output, Resolved};
use crate::error::Result;

const ID: &str = "topology";

/// The dimension asked for: 0 or 1.
pub(super) fn dim(r: &Resolved) -> usize {
    usize::from(param_str(r, "dim") == "1")
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    if dim(r) == 0 {
        let positive = |v: Vec<f64>| v.into_iter().filter(|&d| d > 0.0).collect::<Vec<f64>>();
        let high = positive(mst_lengths(ctx.high, ctx.ctl, "topology: H0 of the original space")?);
        let low = positive(mst_lengths(ctx.low, ctx.ctl, "topology: H0 of the projection")?);
        return Ok(Output::new()
            .value("bottleneck", bottleneck_h0(&high, &low))
            .value("wasserstein", wasserstein_h0(&high, &low))
            .curve("deaths_high", high)
            .curve("deaths_low", low));
    }
    let (high, eh) = h1_pairs(ctx.high, ctx.memory_budget, ctx.ctl, "topology: H1 of the original space")?;
    let (low, el) = h1_pairs(ctx.low, ctx.memory_budget, ctx.ctl, "topology: H1 of the projection")?;
    if eh + el > 0 {
        // The filtration is cut at the enclosing radius, where the complex is a cone: no class
        // can live on. Counted rather than assumed.
        return Err(undefined(ID, "an H1 class outlived the enclosing radius (essential classes are not compared)"));
    }
    let split = |v: &[(f64, f64)]| -> (Vec<f64>, Vec<f64>) { v.iter().copied().unzip() };
    let ((bh, dh), (bl, dl)) = (split(&high), split(&low));
    Ok(Output::new()
        .value("bottleneck", bottleneck(&high, &low))
        .value("wasserstein", wasserstein(&high, &low))
        .curve("births_high", bh)
        .curve("deaths_high", dh)
        .curve("births_low", bl)
        .curve("deaths_low", dl))
}
