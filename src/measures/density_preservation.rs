//! Density preservation (`density_preservation`, densMAP's local-radius correlation, Narayan,
//! Berger & Cho 2021): `R_i` the mean squared distance to i's k nearest neighbours in each space;
//! the value is Pearson's correlation of `ln R^X_i` and `ln R^Y_i` over the points whose radii
//! are both positive. Local: `ln(R^Y_i / R^X_i)` centred (its mean over those points
//! subtracted), so 0 is the typical change and the sign says where the projection spreads (+)
//! or packs (−) a neighbourhood relative to the rest (kind `log_ratio`; a point with a zero
//! radius, its k neighbours all on top of it, has none: null). Undefined when fewer than two
//! points have both radii positive or either log radius is constant.

use super::support::pairwise::undefined;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::resources::Neighbours;
use crate::sum::{mean, pairwise_sum_by};

/// Each point's `ln R_i`, R_i the mean of its k squared neighbour distances (−∞ when 0).
fn log_radii(nb: &Neighbours, k: usize, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let d = nb.dist_row(i, k);
            (pairwise_sum_by(k, &|m| d[m] * d[m]) / k as f64).ln()
        })
        .collect()
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n) = (r.k, ctx.n());
    let lx = log_radii(ctx.knn_high(), k, n);
    let ly = log_radii(ctx.knn_low(), k, n);
    let ok: Vec<usize> = (0..n).filter(|&i| lx[i].is_finite() && ly[i].is_finite()).collect();
    let id = "density_preservation";
    if ok.len() < 2 {
        return Err(undefined(id, "fewer than two points have a positive local radius in both spaces"));
    }
    let (a, b): (Vec<f64>, Vec<f64>) = ok.iter().map(|&i| (lx[i], ly[i])).unzip();
    let (ma, mb) = (mean(&a), mean(&b));
    let m = a.len();
    let [saa, sbb, sab] = crate::sum::pairwise_sums(m, &|t| {
        let (u, v) = (a[t] - ma, b[t] - mb);
        [u * u, v * v, u * v]
    });
    if saa == 0.0 || sbb == 0.0 {
        return Err(undefined(id, "the log local radii are constant in a space"));
    }
    let rho = (sab / saa.sqrt() / sbb.sqrt()).clamp(-1.0, 1.0);
    let ratio: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
    let centre = mean(&ratio);
    let mut local = vec![f64::NAN; n];
    for (&i, v) in ok.iter().zip(&ratio) {
        local[i] = v - centre;
    }
    Ok(Output::new().value("density_preservation", rho).local("local_density_preservation", local))
}
