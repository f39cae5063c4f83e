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
use crate::sum::{LEAF, lane_sums, pairwise_leaves, pairwise_sum};

/// The points with each column's mean (NumPy's) subtracted, read in place: no n×D copy.
struct Centred<'a> {
    p: &'a Points,
    means: Vec<f64>,
}

impl<'a> Centred<'a> {
    fn new(p: &'a Points) -> Self {
        Centred { p, means: (0..p.dim()).map(|c| pairwise_sum(p.col(c)) / p.n() as f64).collect() }
    }
    /// As an n×dim matrix (the projection's, for its basis).
    fn matrix(&self) -> DMatrix<f64> {
        let n = self.p.n();
        let cols = (0..self.p.dim()).flat_map(|c| self.p.col(c).iter().map(move |&v| v - self.means[c]));
        DMatrix::from_iterator(n, self.p.dim(), cols)
    }
    /// The points' coordinates on the columns of `axes` (dim×d): each point's terms summed in
    /// coordinate order from +0, column by column.
    fn coordinates(&self, axes: &DMatrix<f64>) -> DMatrix<f64> {
        let n = self.p.n();
        let mut out = DMatrix::zeros(n, axes.ncols());
        for (k, mut o) in out.column_iter_mut().enumerate() {
            let o = o.as_mut_slice();
            for c in 0..self.p.dim() {
                let (a, m) = (axes[(c, k)], self.means[c]);
                for (s, &v) in o.iter_mut().zip(self.p.col(c)) {
                    *s += (v - m) * a;
                }
            }
        }
        out
    }
    /// `X_cᵀ X_c`, each entry a pairwise sum over the points (eight at a time: `lane_sums`, the
    /// same bits as the scalar sum).
    fn gram(&self) -> DMatrix<f64> {
        let dim = self.p.dim();
        let mut g = DMatrix::zeros(dim, dim);
        for a in 0..dim {
            for b in a..dim {
                let (ma, mb) = (self.means[a], self.means[b]);
                let v = lane_sums([self.p.col(a), self.p.col(b)], |[u, w]| [(u - ma) * (w - mb)])[0];
                g[(a, b)] = v;
                g[(b, a)] = v;
            }
        }
        g
    }
}

/// `‖X − P X‖²_F / (nD)`, P the orthogonal projection onto the span of `basis`'s columns
/// (numerically independent ones only, as `numpy.linalg.lstsq` decides: singular values above
/// `max(n, d)·ε` of the largest). A well-conditioned basis is made orthonormal by
/// [`cholesky_qr2`]; any other goes through the SVD.
fn residual(x: &Centred, basis: DMatrix<f64>) -> f64 {
    if let Some(u) = cholesky_qr2(&basis) {
        return mean_square(x, Some(&u));
    }
    let (n, d) = basis.shape();
    let svd = basis.svd(true, false);
    let u = svd.u.expect("u requested");
    let top = svd.singular_values.iter().copied().fold(0.0, f64::max);
    let cut = top * (n.max(d) as f64) * f64::EPSILON;
    let keep: Vec<usize> = (0..svd.singular_values.len()).filter(|&k| svd.singular_values[k] > cut).collect();
    mean_square(x, (!keep.is_empty()).then(|| u.select_columns(&keep)).as_ref())
}

/// The Gram matrix `BᵀB` of an n×d matrix's columns, each entry a pairwise sum over the rows.
fn column_gram(b: &DMatrix<f64>) -> DMatrix<f64> {
    let d = b.ncols();
    let mut g = DMatrix::zeros(d, d);
    for a in 0..d {
        for c in a..d {
            let v = lane_sums([b.column(a).as_slice(), b.column(c).as_slice()], |[u, w]| [u * w])[0];
            g[(a, c)] = v;
            g[(c, a)] = v;
        }
    }
    g
}

/// An orthonormal basis of the span of `b`'s columns by Cholesky QR done twice (CholeskyQR2,
/// Fukaya, Nakatsukasa, Yanagisawa & Yamamoto 2014: `Q = B R⁻¹` with `RᵀR = BᵀB`, then once more
/// on Q; orthonormal to O(ε) when cond(B) is below about ε^(−1/2) ≈ 7·10⁷), in O(n·d²) where the
/// SVD of a tall matrix costs several times that. Served only when its premises are certain
/// from `BᵀB`'s eigenvalues λ: every finite one at least 10⁻⁶ of the largest, so cond(B) ≤ 10³
/// up to the Gram matrix's rounding (relative O(log n·ε) in pairwise sums, far below the
/// margin) and lstsq's cut, σ ≤ max(n, d)·ε·σ_max, drops no column (it would need cond(B) ≥
/// 1/(max(n, d)·ε) > 10⁴ for any n below 4·10¹¹): the same span the SVD keeps. `None`: a
/// premise fails (or a Cholesky factor does not exist): the caller's SVD decides.
fn cholesky_qr2(b: &DMatrix<f64>) -> Option<DMatrix<f64>> {
    let g = column_gram(b);
    let ev = g.symmetric_eigenvalues();
    let hi = ev.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = ev.iter().copied().fold(f64::INFINITY, f64::min);
    if !(hi.is_finite() && lo > hi * 1e-6) {
        return None;
    }
    let q = cholesky_step(b.clone(), g)?;
    let g2 = column_gram(&q);
    cholesky_step(q, g2)
}

/// `B R⁻¹` for the Cholesky factor `R = Lᵀ` of `g = BᵀB`: column j of the result is
/// `(b_j − Σ_{m<j} l_jm q_m) / l_jj`, column by column.
fn cholesky_step(mut q: DMatrix<f64>, g: DMatrix<f64>) -> Option<DMatrix<f64>> {
    let l = g.cholesky()?.unpack();
    let (n, d) = q.shape();
    let cols = q.as_mut_slice();
    for j in 0..d {
        let (done, rest) = cols.split_at_mut(j * n);
        let qj = &mut rest[..n];
        for m in 0..j {
            let a = l[(j, m)];
            for (v, &w) in qj.iter_mut().zip(&done[m * n..(m + 1) * n]) {
                *v -= a * w;
            }
        }
        let diag = l[(j, j)];
        for v in qj.iter_mut() {
            *v /= diag;
        }
    }
    Some(q)
}

/// `‖X − U Uᵀ X‖²_F / (nD)` for orthonormal columns U (none: `‖X‖²_F / (nD)`), summed in X's
/// column-major order without storing the projection, the residual or its squares: `Uᵀ X` (d×D
/// pairwise sums over the points), then each residual entry `x_ic − Σ_k u_ik (UᵀX)_kc`, one
/// leaf of the pairwise tree at a time (its terms in a stack buffer).
fn mean_square(x: &Centred, u: Option<&DMatrix<f64>>) -> f64 {
    let (n, dim) = (x.p.n(), x.p.dim());
    let len = n * dim;
    let (us, d) = u.map_or((&[][..], 0), |u| (u.as_slice(), u.ncols()));
    let utx: Vec<f64> = (0..dim)
        .flat_map(|c| {
            let (col, m) = (x.p.col(c), x.means[c]);
            (0..d).map(move |k| lane_sums([&us[k * n..(k + 1) * n], col], |[u, v]| [u * (v - m)])[0])
        })
        .collect();
    let [sum] = pairwise_leaves(len, |start, cnt| {
        let (mut terms, mut proj) = ([0.0f64; LEAF], [0.0f64; LEAF]);
        let mut t = start;
        // The leaf's terms by column segments: slices the loops can vectorise.
        while t < start + cnt {
            let (c, i0) = (t / n, t % n);
            let i1 = (i0 + (start + cnt - t)).min(n);
            let at = t - start..t - start + (i1 - i0);
            // p_i = Σ_k u_ik (UᵀX)_kc from +0 in k order (no terms: +0, and (v − m) − 0 is
            // v − m up to the sign of a zero, which the square drops).
            let p = &mut proj[at.clone()];
            for k in 0..d {
                let a = utx[c * d + k];
                for (p, &u) in p.iter_mut().zip(&us[k * n + i0..k * n + i1]) {
                    *p += u * a;
                }
            }
            let m = x.means[c];
            for ((term, &v), &p) in terms[at].iter_mut().zip(&x.p.col(c)[i0..i1]).zip(p.iter()) {
                let r = (v - m) - p;
                *term = r * r;
            }
            t += i1 - i0;
        }
        [pairwise_sum(&terms[..cnt])]
    });
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
    let pca = x.coordinates(&axes);
    let e_pca = residual(&x, pca);
    // Nothing projected away: the projector onto no columns.
    let total = mean_square(&x, None);
    if !(e_pca > total * 1e-14) {
        return Err(undefined(id, "the original space lies in d dimensions (E_PCA = 0): no projection loses anything"));
    }
    Ok(Output::new().value(id, (-(e_y - e_pca) / e_pca).exp()))
}
