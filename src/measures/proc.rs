//! Procrustes (`proc`): for each point, its original neighbourhood X_i and its projected
//! neighbourhood Y_i (k×D and k×d, paired row by row in rank order, both centred), rotated
//! optimally (R = UVᵀ from the SVD of X_iᵀY_i); `g_i = ‖X_i - Y_iRᵀ‖²_F / ‖X_i‖²_F`; mean.

use nalgebra::DMatrix;

use super::{Ctx, Output, Resolved, per_point};
use crate::data::Points;
use crate::error::{Error, Result};
use crate::sum::mean;

/// The k×dim matrix of the given points' coordinates, centred on its column means.
fn centred(points: &Points, idx: &[u32]) -> DMatrix<f64> {
    let (k, dim) = (idx.len(), points.dim());
    let mut m = DMatrix::from_fn(k, dim, |r, c| points.row(idx[r] as usize)[c]);
    for c in 0..dim {
        let mu = m.column(c).sum() / k as f64;
        m.column_mut(c).add_scalar_mut(-mu);
    }
    m
}

fn local(ctx: &Ctx, i: usize, k: usize) -> Option<f64> {
    let x = centred(ctx.high, ctx.knn_high().row(i, k));
    let y = centred(ctx.low, ctx.knn_low().row(i, k));
    let denom = x.norm_squared();
    if denom <= 0.0 {
        return None;
    }
    let svd = (x.transpose() * &y).svd(true, true);
    let rot = svd.u.expect("u requested") * svd.v_t.expect("v_t requested");
    let residual = x - y * rot.transpose();
    Some(residual.norm_squared() / denom)
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let scores = per_point(ctx.n(), |i| local(ctx, i, r.k));
    let scores: Option<Vec<f64>> = scores.into_iter().collect();
    let scores = scores.ok_or_else(|| Error::Undefined {
        id: "proc".into(),
        projection: None,
        reason: "an original-space neighbourhood has zero variance (all its points coincide)".into(),
    })?;
    Ok(Output::new().value("procrustes", mean(&scores)))
}
