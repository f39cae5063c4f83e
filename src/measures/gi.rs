//! Gap index (`gi`, Ros, Arleo & Paulovich): the projection's Delaunay triangles (spade's, see
//! [`super::support::delaunay`]: of coincident projected points only the first occurrence is a vertex;
//! among cocircular points one deterministic choice); each triangle's area by Heron's formula
//! from its side lengths in X and in Y, each set normalised to sum 1; `m_t = max(a^X_t, a^Y_t)`,
//! `δ_t = (a^Y_t - a^X_t) / max(m_t, 1e-6)`; score `clip(Σ |δ_t| m_t / Σ m_t, 0, 1)`.
//! Needs a 2-D projection. Arithmetic in ZADU's order (NumPy's pairwise sums) over the triangles
//! in [`super::support::delaunay::triangulate`]'s canonical order.

use rayon::prelude::*;

use super::support::delaunay::triangulate;
use super::support::numpy::{pairwise_sum_by, sq_dist};
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::{Error, Result};

const DEFORMATION_EPSILON: f64 = 1e-6;
const TRIANGLE_TOLERANCE: f64 = 1e-12;

fn undefined(reason: impl Into<String>) -> Error {
    Error::Undefined { id: "gi".into(), projection: None, reason: reason.into() }
}

/// Heron areas of the triangles in `points`, normalised to sum 1 (ZADU's `_compute_areas`).
fn relative_areas(points: &Points, tris: &[[usize; 3]]) -> Result<Vec<f64>> {
    let side = |a: usize, b: usize| sq_dist(points.row(a), points.row(b)).sqrt();
    let areas: Vec<Option<f64>> = tris
        .par_iter()
        .map(|t| {
            let (a, b, c) = (side(t[0], t[1]), side(t[0], t[2]), side(t[1], t[2]));
            let s = (a + b + c) / 2.0;
            let radicand = s * (s - a) * (s - b) * (s - c);
            let scale = a.max(b).max(c).max(1.0).powi(4);
            (radicand >= -TRIANGLE_TOLERANCE * scale).then(|| radicand.max(0.0).sqrt())
        })
        .collect();
    let areas: Vec<f64> = areas
        .into_iter()
        .collect::<Option<_>>()
        .ok_or_else(|| undefined("triangle edge lengths do not satisfy the triangle inequality"))?;
    let total = pairwise_sum_by(areas.len(), &|t| areas[t]);
    if !total.is_finite() || total <= 0.0 {
        return Err(undefined("all triangle areas are zero"));
    }
    Ok(areas.iter().map(|a| a / total).collect())
}

pub(super) fn compute(ctx: &Ctx, _r: &Resolved) -> Result<Output> {
    let low = ctx.low;
    if low.dim() != 2 {
        return Err(undefined(format!("the gap index needs a 2-D projection, this one has {} columns", low.dim())));
    }
    if low.n() < 3 {
        return Err(undefined("the gap index needs at least 3 points"));
    }
    let tris = triangulate(low.as_slice())
        .ok_or_else(|| undefined("the gap index needs at least three non-collinear projected points"))?;
    let orig = relative_areas(ctx.high, &tris)?;
    let emb = relative_areas(low, &tris)?;
    let m: Vec<f64> = orig.iter().zip(&emb).map(|(o, e)| o.max(*e)).collect();
    let weighted = pairwise_sum_by(m.len(), &|t| ((emb[t] - orig[t]) / m[t].max(DEFORMATION_EPSILON)).abs() * m[t]);
    let score = weighted / pairwise_sum_by(m.len(), &|t| m[t]);
    Ok(Output::new().value("gap_index", score.clamp(0.0, 1.0)))
}
