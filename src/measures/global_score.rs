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
use crate::sum::{pairwise_sum, pairwise_sum_by};

/// The points with each column's mean (NumPy's) subtracted, read in place: no n×D copy.
struct Centred<'a> {
    p: &'a Points,
    means: Vec<f64>,
}

impl<'a> Centred<'a> {
    fn new(p: &'a Points) -> Self {
        Centred { p, means: (0..p.dim()).map(|c| pairwise_sum(p.col(c)) / p.n() as f64).collect() }
    }
    #[inline]
    fn at(&self, i: usize, c: usize) -> f64 {
        self.p.col(c)[i] - self.means[c]
    }
    /// As an n×dim matrix (the projection's, for its SVD).
    fn matrix(&self) -> DMatrix<f64> {
        DMatrix::from_fn(self.p.n(), self.p.dim(), |i, c| self.at(i, c))
    }
    /// `X_cᵀ X_c`, each entry a pairwise sum over the points.
    fn gram(&self) -> DMatrix<f64> {
        let (n, dim) = (self.p.n(), self.p.dim());
        let mut g = DMatrix::zeros(dim, dim);
        for a in 0..dim {
            for b in a..dim {
                let v = pairwise_sum_by(n, &|i| self.at(i, a) * self.at(i, b));
                g[(a, b)] = v;
                g[(b, a)] = v;
            }
        }
        g
    }
}

/// `‖X − P X‖²_F / (nD)`, P the orthogonal projection onto the span of `basis`'s columns
/// (numerically independent ones only).
fn residual(x: &Centred, basis: DMatrix<f64>) -> f64 {
    let (n, d) = basis.shape();
    let svd = basis.svd(true, false);
    let u = svd.u.expect("u requested");
    let top = svd.singular_values.iter().copied().fold(0.0, f64::max);
    let cut = top * (n.max(d) as f64) * f64::EPSILON;
    let keep: Vec<usize> = (0..svd.singular_values.len()).filter(|&k| svd.singular_values[k] > cut).collect();
    mean_square(x, (!keep.is_empty()).then(|| u.select_columns(&keep)).as_ref())
}

/// `‖X − U Uᵀ X‖²_F / (nD)` for orthonormal columns U (none: `‖X‖²_F / (nD)`), summed in X's
/// column-major order without storing the projection, the residual or its squares: `Uᵀ X` (d×D
/// pairwise sums over the points), then each residual entry `x_ic − Σ_k u_ik (UᵀX)_kc`.
fn mean_square(x: &Centred, u: Option<&DMatrix<f64>>) -> f64 {
    let (n, dim) = (x.p.n(), x.p.dim());
    let len = n * dim;
    let sum = match u {
        Some(u) => {
            let (us, d) = (u.as_slice(), u.ncols());
            let utx: Vec<f64> = (0..dim)
                .flat_map(|c| (0..d).map(move |k| pairwise_sum_by(n, &|i| us[k * n + i] * x.at(i, c))))
                .collect();
            pairwise_sum_by(len, &|t| {
                let (i, c) = (t % n, t / n);
                let mut p = 0.0;
                for k in 0..d {
                    p += us[k * n + i] * utx[c * d + k];
                }
                let r = x.at(i, c) - p;
                r * r
            })
        }
        None => pairwise_sum_by(len, &|t| {
            let v = x.at(t % n, t / n);
            v * v
        }),
    };
    sum / len as f64
}

pub(super) fn compute(ctx: &Ctx, _: &Resolved) -> Result<Output> {
    let id = "global_score";
    let (big_d, d) = (ctx.high.dim(), ctx.low.dim());
    if d >= big_d {
        return Err(undefined(id, "the projection has as many dimensions as the original space (E_PCA = 0)"));
    }
    let x = Centred::new(ctx.high);
    let e_y = residual(&x, Centred::new(ctx.low).matrix());
    let eig = SymmetricEigen::new(x.gram());
    let mut order: Vec<usize> = (0..big_d).collect();
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]).then(a.cmp(&b)));
    let axes = eig.eigenvectors.select_columns(&order[..d]);
    // X's first d principal components: each point's coordinates summed in coordinate order.
    let pca = DMatrix::from_fn(x.p.n(), d, |i, k| (0..big_d).fold(0.0, |s, c| s + x.at(i, c) * axes[(c, k)]));
    let e_pca = residual(&x, pca);
    // Nothing projected away: the projector onto no columns.
    let total = mean_square(&x, None);
    if !(e_pca > total * 1e-14) {
        return Err(undefined(id, "the original space lies in d dimensions (E_PCA = 0): no projection loses anything"));
    }
    Ok(Output::new().value(id, (-(e_y - e_pca) / e_pca).exp()))
}
