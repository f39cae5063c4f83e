//! TriMap's global score (`global_score`, Amid & Warmuth 2019): `exp(−(E_Y − E_PCA)/E_PCA)`,
//! E_Y the least-squares error of reconstructing the centred X from a linear map of the centred
//! projection, `E = ‖X_c − P X_c‖²_F / (nD)` with P the orthogonal projection onto the span of
//! the projection's columns, and E_PCA the same for X's own first d principal components (d
//! the projection's dimension): the best any linear d-dimensional projection can do. 1 for a
//! PCA projection, lower is worse. The projector comes from an SVD of the projection (columns
//! below `max(n, d)·ε` of the largest singular value dropped, as `numpy.linalg.lstsq`), so a
//! collinear or constant projection has a defined score; the principal axes from the symmetric
//! eigendecomposition of `X_cᵀX_c`. Undefined when X lies in d dimensions (E_PCA = 0: no
//! projection can lose anything) or d ≥ D.

use nalgebra::{DMatrix, SymmetricEigen};

use super::support::pairwise::undefined;
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::Result;
use crate::sum::pairwise_sum;

/// The points as an n×dim matrix with each column's mean (NumPy's) subtracted.
fn centred(p: &Points) -> DMatrix<f64> {
    let (n, dim) = (p.n(), p.dim());
    let means: Vec<f64> = (0..dim).map(|c| pairwise_sum(p.col(c)) / n as f64).collect();
    DMatrix::from_fn(n, dim, |r, c| p.row(r)[c] - means[c])
}

/// `‖X − P X‖²_F / (nD)`, P the orthogonal projection onto the span of `basis`'s columns
/// (numerically independent ones only).
fn residual(x: &DMatrix<f64>, basis: DMatrix<f64>) -> f64 {
    let (n, d) = basis.shape();
    let svd = basis.svd(true, false);
    let u = svd.u.expect("u requested");
    let top = svd.singular_values.iter().copied().fold(0.0, f64::max);
    let cut = top * (n.max(d) as f64) * f64::EPSILON;
    let keep: Vec<usize> = (0..svd.singular_values.len()).filter(|&k| svd.singular_values[k] > cut).collect();
    let mut r = x.clone();
    if !keep.is_empty() {
        let ur = u.select_columns(&keep);
        r -= &ur * (ur.transpose() * x);
    }
    let squares: Vec<f64> = r.iter().map(|v| v * v).collect();
    pairwise_sum(&squares) / (x.nrows() * x.ncols()) as f64
}

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let id = "global_score";
    let (big_d, d) = (ctx.high.dim(), ctx.low.dim());
    if d >= big_d {
        return Err(undefined(id, "the projection has as many dimensions as the original space (E_PCA = 0)"));
    }
    let x = centred(ctx.high);
    let e_y = residual(&x, centred(ctx.low));
    let eig = SymmetricEigen::new(x.transpose() * &x);
    let mut order: Vec<usize> = (0..big_d).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]).then(a.cmp(&b)));
    let axes = eig.eigenvectors.select_columns(&order[..d]);
    let e_pca = residual(&x, &x * axes);
    let total = residual(&x, DMatrix::zeros(x.nrows(), 1));
    if !(e_pca > total * 1e-14) {
        return Err(undefined(id, "the original space lies in d dimensions (E_PCA = 0): no projection loses anything"));
    }
    Ok(Output::new().value(id, (-(e_y - e_pca) / e_pca).exp()))
}
