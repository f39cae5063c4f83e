//! Scagnostics (`scagnostics`; Wilkinson, Anand & Grossman 2005, "Graph-Theoretic Scagnostics"):
//! nine measures of the 2-D projection's scatterplot, computed as pyscagnostics 0.1.0a4 (the C++
//! port of the code behind R's `scagnostics`) computes them, with its parameters and defaults
//! (`bins` = 50, `remove_outliers` = true):
//!
//! 1. Each axis scaled to [0, 1] by its range (`(v − min) / (max − min)`).
//! 2. Hexagonal binning (`support::hexbin`): a `bins` × `bins` grid, halved while more than 250
//!    bins are occupied; bin centres scaled to integers 0..1000.
//! 3. The graphs on the bins (`support::scag_graph`): Delaunay triangulation, minimum spanning
//!    tree, outlier peeling, alpha complex and hull, and the nine measures from them.
//!
//! Inputs the reference cannot score (it divides by a zero range, crashes or never returns) are
//! refused with a typed error naming the measure: a constant coordinate (all points identical,
//! a horizontal or vertical line), all points in one bin, bins that are collinear after the
//! reference's shift, a tree that cannot span them, or a value that comes out undefined (e.g.
//! when peeling leaves nothing).

use super::support::hexbin::bin_hex;
use super::support::pairwise::undefined;
use super::support::params::{param_int, param_str};
use super::support::scag_graph::{NAMES, scagnostics};
use super::{Ctx, Output, Resolved};
use crate::error::{Error, Result};

const ID: &str = "scagnostics";
/// The largest starting grid accepted: the binning allocates (bins + 20)² cells.
const MAX_BINS: i64 = 1000;

/// `bins` within 2..=1000 (a grid of one bin holds every point in one bin; past 1000 the grid's
/// cells cost memory for nothing, the reference keeps at most 250 occupied bins).
pub(super) fn check_bins(r: &Resolved) -> Result<i32> {
    let bins = param_int(r, "bins");
    if (2..=MAX_BINS).contains(&bins) {
        return Ok(bins as i32);
    }
    Err(Error::BadParam {
        id: ID.into(),
        param: "bins".into(),
        value: bins.to_string(),
        reason: format!("must be an integer with 2 <= bins <= {MAX_BINS}"),
    })
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let start = check_bins(r)?;
    let remove_outliers = param_str(r, "remove_outliers") == "true";
    let (low, n) = (ctx.low, ctx.n());
    if low.dim() != 2 {
        return Err(undefined(
            ID,
            &format!("scagnostics describe a 2-D scatterplot, this projection has {} columns", low.dim()),
        ));
    }
    let y = low.as_slice();
    let mut axes = [Vec::with_capacity(n), Vec::with_capacity(n)];
    for (c, axis) in axes.iter_mut().enumerate() {
        let col = (0..n).map(|i| y[2 * i + c]);
        let (lo, hi) = col.clone().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        let range = hi - lo;
        if !(range > 0.0 && range.is_finite()) {
            return Err(undefined(
                ID,
                &format!(
                    "coordinate {} of the projection is constant (or its range overflows); the reference scales each axis by its range",
                    c + 1
                ),
            ));
        }
        axis.extend(col.map(|v| (v - lo) / range));
    }
    let bins = bin_hex(&axes[0], &axes[1], start);
    let values =
        scagnostics(&bins.x, &bins.y, &bins.counts, remove_outliers).map_err(|reason| undefined(ID, reason))?;
    let mut out = Output::new();
    for (name, v) in NAMES.iter().zip(values) {
        if !v.is_finite() {
            return Err(undefined(
                ID,
                &format!(
                    "{name} is undefined for this scatterplot ({} bins; e.g. outlier peeling left too few)",
                    bins.counts.len()
                ),
            ));
        }
        out = out.value(*name, v);
    }
    Ok(out)
}
