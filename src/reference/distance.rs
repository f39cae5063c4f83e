//! Distance rows: `d(i, j)` for one i and every j.

use crate::data::Points;

/// Writes `d(i, j) = sqrt(Σ_c (x[i][c] - x[j][c])²)` for every j into `out` (length n).
///
/// Each sum runs in coordinate order c = 0..D-1 with one rounding per operation and no FMA,
/// exactly as `docs/exactness.md` defines it (scipy's `cdist`). The loop runs over j inside c,
/// on the column-major copy, so it vectorises across points without changing any sum's order.
/// `(x_j - x_i)²` equals `(x_i - x_j)²` bit for bit, so `d(i,j) = d(j,i)`.
pub fn distance_row(points: &Points, i: usize, out: &mut [f64]) {
    let xi = points.row(i);
    debug_assert_eq!(out.len(), points.n());
    let first = points.col(0);
    let x0 = xi[0];
    for (o, &v) in out.iter_mut().zip(first) {
        let t = v - x0;
        *o = t * t;
    }
    for (c, &xc) in xi.iter().enumerate().skip(1) {
        for (o, &v) in out.iter_mut().zip(points.col(c)) {
            let t = v - xc;
            *o += t * t;
        }
    }
    for o in out.iter_mut() {
        *o = o.sqrt();
    }
}
