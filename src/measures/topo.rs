//! Topographic product (`topo`).
//!
//! With x_l / y_l the l-th neighbour of i in X / Y: Q1 = d^X(i,y_l)/d^X(i,x_l),
//! Q2 = d^Y(i,y_l)/d^Y(i,x_l), `log P3(i,κ) = Σ_{l≤κ} ln(Q1·Q2) / (2κ)`, TP = mean over i, κ.
//! Zero distances make it undefined: an error, as in ZADU.

use super::{Ctx, Output, Resolved, per_point};
use crate::error::{Error, Result};
use crate::sum::mean;

fn undefined(reason: &str) -> Error {
    Error::Undefined { id: "topo".into(), projection: None, reason: reason.into() }
}

fn row(ctx: &Ctx, i: usize, k: usize) -> Result<Vec<f64>> {
    let cross = ctx.cross();
    let dx_x = ctx.knn_high().dist_row(i, k);
    let dy_y = ctx.knn_low().dist_row(i, k);
    let dx_y = cross.dist_high_of_low(i, k);
    let dy_x = cross.dist_low_of_high(i, k);
    if dx_x.iter().any(|&d| d <= 0.0) {
        return Err(undefined(&format!("point {i} has an original-space neighbour at distance zero")));
    }
    if dy_x.iter().any(|&d| d <= 0.0) {
        return Err(undefined(&format!(
            "point {i} has an original-space neighbour at distance zero in the projection"
        )));
    }
    let mut out = Vec::with_capacity(k);
    let mut acc = 0.0;
    for l in 0..k {
        let ratio = (dx_y[l] / dx_x[l]) * (dy_y[l] / dy_x[l]);
        if !(ratio > 0.0 && ratio.is_finite()) {
            return Err(undefined(&format!("point {i} coincides with a neighbour")));
        }
        acc += ratio.ln();
        out.push(acc / (2 * (l + 1)) as f64);
    }
    Ok(out)
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let rows = per_point(ctx.n(), |i| row(ctx, i, r.k));
    let mut all = Vec::with_capacity(ctx.n() * r.k);
    for row in rows {
        all.extend(row?);
    }
    Ok(Output::new().value("topographic_product", mean(&all)))
}
