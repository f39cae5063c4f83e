//! NumPy's and scikit-learn's reduction orders, for the label and cluster measures.
//!
//! ZADU computes these measures with NumPy reductions whose summation order is fixed by the
//! array layout: `np.sum` of a contiguous run is pairwise ([`crate::sum::pairwise_sum`]),
//! `X.mean(axis=0)` of a C-ordered n×D array (D ≥ 2) adds the rows one after another, and
//! scikit-learn's Euclidean distances use `‖x‖² - 2x·y + ‖y‖²`. Reproducing those orders keeps
//! faithful's results within a few ulps of ZADU's (most of them bit-identical).

use crate::data::Points;

pub(in crate::measures) use crate::sum::pairwise_sum_by;

/// `np.sum((a - b) ** 2)` over one row: the squared Euclidean norm of `np.linalg.norm(.., axis=-1)`.
pub(in crate::measures) fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    pairwise_sum_by(a.len(), &|c| {
        let d = a[c] - b[c];
        d * d
    })
}

/// `X[rows].mean(axis=0)`: the column means of the selected rows, in NumPy's order (rows added
/// one after another for D ≥ 2; a pairwise sum when D = 1, where NumPy reduces a contiguous run).
pub(in crate::measures) fn mean_rows(points: &Points, rows: &[usize]) -> Vec<f64> {
    let dim = points.dim();
    let m = rows.len() as f64;
    if dim == 1 {
        return vec![pairwise_sum_by(rows.len(), &|t| points.row(rows[t])[0]) / m];
    }
    let mut acc = vec![0.0; dim];
    for &r in rows {
        for (a, &x) in acc.iter_mut().zip(points.row(r)) {
            *a += x;
        }
    }
    acc.iter().map(|a| a / m).collect()
}

/// `np.einsum("ij,ij->i")` for one row: scikit-learn's squared row norm (coordinate order).
pub(in crate::measures) fn row_norm_sq(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x {
        s += v * v;
    }
    s
}

/// The dot product as the BLAS `gemm` kernels compute it: one fused multiply-add per coordinate.
pub(in crate::measures) fn blas_dot(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = x[0] * y[0];
    for c in 1..x.len() {
        acc = x[c].mul_add(y[c], acc);
    }
    acc
}

/// scikit-learn's `euclidean_distances` entry: `sqrt(max(-2 x·y + ‖x‖² + ‖y‖², 0))`.
pub(in crate::measures) fn sk_dist(x: &[f64], xx: f64, y: &[f64], yy: f64) -> f64 {
    let d = -2.0 * blas_dot(x, y) + xx + yy;
    d.max(0.0).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_rows_orders() {
        let p = Points::from_vec("p", 3, 2, vec![1.0, 2.0, 3.0, 4.0, 5.0, 7.0]).unwrap();
        assert_eq!(mean_rows(&p, &[0, 2]), vec![3.0, 4.5]);
        let q = Points::from_vec("q", 3, 1, vec![1.0, 2.0, 6.0]).unwrap();
        assert_eq!(mean_rows(&q, &[0, 1, 2]), vec![3.0]);
    }
}
