//! Distance rows: `d(i, j)` for one i and every j.

use multiversion::multiversion;

use crate::data::Points;

/// Points per chunk: the chunk's partial sums stay in L1 while the coordinates stream past.
const CHUNK: usize = 256;

/// Writes `d(i, j) = sqrt(Σ_c (x[i][c] - x[j][c])²)` for every j into `out` (length n).
///
/// Each sum runs in coordinate order c = 0..D-1 with one rounding per operation and no FMA,
/// exactly as `docs/exactness.md` defines it (scipy's `cdist`). The loop runs over j inside c,
/// on the column-major copy, so it vectorises across points without changing any sum's order.
/// `(x_j - x_i)²` equals `(x_i - x_j)²` bit for bit, so `d(i,j) = d(j,i)`. Wider SIMD (chosen
/// at run time) changes nothing: Rust never fuses a multiply and an add.
#[inline]
pub fn distance_row(points: &Points, i: usize, out: &mut [f64]) {
    distance_row_from(points, i, 0, out);
}

/// [`distance_row`] for the points j ≥ `from` only: `out[j - from] = d(i, j)`, the same bits.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn distance_row_from(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    let xi = points.row(i);
    let n = points.n();
    debug_assert_eq!(out.len(), n - from);
    for start in (from..n).step_by(CHUNK) {
        let end = (start + CHUNK).min(n);
        let o = &mut out[start - from..end - from];
        let x0 = xi[0];
        for (s, &v) in o.iter_mut().zip(&points.col(0)[start..end]) {
            let t = v - x0;
            *s = t * t;
        }
        for (c, &xc) in xi.iter().enumerate().skip(1) {
            for (s, &v) in o.iter_mut().zip(&points.col(c)[start..end]) {
                let t = v - xc;
                *s += t * t;
            }
        }
        for s in o.iter_mut() {
            *s = s.sqrt();
        }
    }
}

/// `d(i, j)` for one pair, bit-identical to `distance_row(points, i, ..)[j]`.
pub fn distance_pair(points: &Points, i: usize, j: usize) -> f64 {
    let (xi, xj) = (points.row(i), points.row(j));
    let t = xj[0] - xi[0];
    let mut s = t * t;
    for c in 1..xi.len() {
        let t = xj[c] - xi[c];
        s += t * t;
    }
    s.sqrt()
}
