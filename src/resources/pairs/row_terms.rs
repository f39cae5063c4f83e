//! The per-row terms of the full-row sweep ([`super::row_sweep`]): Sammon's and CCA's weighted
//! errors, the average local error and NeRV's divergences, each a function of one point's two
//! full distance rows `dx = d^X(i, ·)`, `dy = d^Y(i, ·)` (length n, the point itself at 0).
//!
//! Every sum is NumPy's pairwise sum over the whole row in index order, the point's own entry
//! adding an exact 0, so a row's terms are those of `np.sum(M[i])` on the dense matrices.

use multiversion::multiversion;

use super::super::density::gaussian_sums;
use super::super::exp::exp_neg_over;
use super::super::ln::ln;
#[cfg(target_arch = "x86_64")]
use crate::resources::isa::avx512;
use crate::sum::{L8, lane_sums, pairwise_sums};

/// NeRV's bandwidth search: the entropy tolerance, in nats.
pub const NERV_TOLERANCE: f64 = 1e-5;
/// NeRV's bandwidth search: the most entropy evaluations per row.
pub const NERV_MAX_ITERATIONS: usize = 200;
/// NeRV's floor on probabilities inside the logarithms (SickleJS's guard against log 0).
pub const NERV_FLOOR: f64 = 1e-12;

/// CCA's weighting of a pair by its projected distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CcaKernel {
    /// `F(d) = exp(−d/λ)`.
    Exponential,
    /// `F(d) = 1` for `d ≤ λ`, else 0.
    Step,
}

/// One CCA weighting: its width λ > 0 and kernel.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CcaJob {
    pub lambda: f64,
    pub kernel: CcaKernel,
}

/// One NeRV neighbourhood: the perplexity, and whether the projection's bandwidths are the
/// original space's (`shared`, SickleJS's choice) or fitted to the perplexity in the projection.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct NervJob {
    pub perplexity: f64,
    pub shared: bool,
}

/// Sammon's row: `(Σ_{j: dx > 0} (dx − dy)²/dx, Σ_j dx)`.
pub(super) fn sammon_row(dx: &[f64], dy: &[f64]) -> [f64; 2] {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::sammon(dx, dy) };
    }
    sammon_portable(dx, dy)
}

#[multiversion(targets("x86_64+avx2"))]
fn sammon_portable(dx: &[f64], dy: &[f64]) -> [f64; 2] {
    lane_sums([dx, dy], sammon_terms)
}

/// Sammon's terms of eight pairs `(d^X, d^Y)`: `((d^X − d^Y)²/d^X` where d^X > 0, else 0; `d^X)`.
#[inline(always)]
pub(super) fn sammon_terms([a, b]: [L8; 2]) -> [L8; 2] {
    let e = a - b;
    [a.where_positive(e * e / a), a]
}

/// CCA's row: `(Σ_j (dx − dy)² F(dy), Σ_j dx² F(dy))`; `w` is scratch for the weights (the
/// exponential kernel's by `resources::exp`'s vectorised `exp_neg_over`).
pub(super) fn cca_row(dx: &[f64], dy: &[f64], job: CcaJob, w: &mut Vec<f64>) -> [f64; 2] {
    let (n, lambda) = (dx.len(), job.lambda);
    w.resize(n, 0.0);
    match job.kernel {
        CcaKernel::Exponential => exp_neg_over(dy, lambda, w),
        CcaKernel::Step => {
            for (f, &b) in w.iter_mut().zip(dy) {
                *f = if b <= lambda { 1.0 } else { 0.0 };
            }
        }
    }
    weighted_sums(dx, dy, w)
}

/// `(Σ_j (dx − dy)² w, Σ_j dx² w)`.
fn weighted_sums(dx: &[f64], dy: &[f64], w: &[f64]) -> [f64; 2] {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::weighted(dx, dy, w) };
    }
    weighted_portable(dx, dy, w)
}

#[multiversion(targets("x86_64+avx2"))]
fn weighted_portable(dx: &[f64], dy: &[f64], w: &[f64]) -> [f64; 2] {
    lane_sums([dx, dy, w], weighted_terms)
}

/// CCA's terms of eight pairs `(d^X, d^Y, F)`: `((d^X − d^Y)² F, (d^X)² F)`.
#[inline(always)]
pub(super) fn weighted_terms([a, b, f]: [L8; 3]) -> [L8; 2] {
    let e = a - b;
    [e * e * f, a * a * f]
}

/// The average local error's row sum: `Σ_j |dx/max_x − dy/max_y|`, or with `squared` of the
/// squares, `Σ_j |dx²/max_x² − dy²/max_y²|` (tf-projection-qm's, on squared distances).
pub(super) fn ale_row(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::ale(dx, dy, max_x, max_y, squared) };
    }
    ale_portable(dx, dy, max_x, max_y, squared)
}

#[multiversion(targets("x86_64+avx2"))]
fn ale_portable(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool) -> f64 {
    if squared {
        let (mx, my) = (max_x * max_x, max_y * max_y);
        return lane_sums([dx, dy], |t| ale_squared_terms(t, mx, my))[0];
    }
    lane_sums([dx, dy], |t| ale_terms(t, max_x, max_y))[0]
}

/// The average local error's terms of eight pairs: `|d^X/max_x − d^Y/max_y|`.
#[inline(always)]
pub(super) fn ale_terms([a, b]: [L8; 2], max_x: f64, max_y: f64) -> [L8; 1] {
    [(a / max_x - b / max_y).abs()]
}

/// The same of the squares, given the squared maxima: `|(d^X)²/mx − (d^Y)²/my|`.
#[inline(always)]
pub(super) fn ale_squared_terms([a, b]: [L8; 2], mx: f64, my: f64) -> [L8; 1] {
    [(a * a / mx - b * b / my).abs()]
}

/// The row terms on AVX-512 vectors: each the portable version's expression, operation for
/// operation (see `lane_sums_avx512`).
#[cfg(target_arch = "x86_64")]
pub(super) mod simd {
    use std::arch::x86_64::*;

    use crate::resources::ln::avx512::ln_v;
    use crate::sum::lane_sums_avx512;

    /// [`super::kl_both`]'s terms on eight lanes (the skipped point floored equal in both rows).
    #[target_feature(enable = "avx512f")]
    pub(super) fn kl_both(p: &[f64], q: &[f64]) -> [f64; 2] {
        let floor = _mm512_set1_pd(super::NERV_FLOOR);
        let sign = _mm512_set1_epi64(i64::MIN);
        lane_sums_avx512([p, q], |[pv, qv]| {
            let (a, b) = (_mm512_max_pd(pv, floor), _mm512_max_pd(qv, floor));
            let equal = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b);
            let l = ln_v(_mm512_div_pd(a, b));
            let minus_bl = _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(_mm512_mul_pd(b, l)), sign));
            [_mm512_maskz_mov_pd(!equal, _mm512_mul_pd(a, l)), _mm512_maskz_mov_pd(!equal, minus_bl)]
        })
    }

    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn sammon(dx: &[f64], dy: &[f64]) -> [f64; 2] {
        lane_sums_avx512([dx, dy], |t| sammon_v(t))
    }

    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn weighted(dx: &[f64], dy: &[f64], w: &[f64]) -> [f64; 2] {
        lane_sums_avx512([dx, dy, w], |t| weighted_v(t))
    }

    #[target_feature(enable = "avx512f")]
    pub(in super::super) fn ale(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool) -> f64 {
        if squared {
            let (mx, my) = (_mm512_set1_pd(max_x * max_x), _mm512_set1_pd(max_y * max_y));
            return lane_sums_avx512([dx, dy], |t| ale_squared_v(t, mx, my))[0];
        }
        let (mx, my) = (_mm512_set1_pd(max_x), _mm512_set1_pd(max_y));
        lane_sums_avx512([dx, dy], |t| ale_v(t, mx, my))[0]
    }

    /// [`super::sammon_terms`] on eight lanes.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(in super::super) fn sammon_v([a, b]: [__m512d; 2]) -> [__m512d; 2] {
        let e = _mm512_sub_pd(a, b);
        let t = _mm512_div_pd(_mm512_mul_pd(e, e), a);
        [_mm512_maskz_mov_pd(_mm512_cmp_pd_mask::<_CMP_GT_OQ>(a, _mm512_setzero_pd()), t), a]
    }

    /// [`super::weighted_terms`] on eight lanes.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(in super::super) fn weighted_v([a, b, f]: [__m512d; 3]) -> [__m512d; 2] {
        let e = _mm512_sub_pd(a, b);
        [_mm512_mul_pd(_mm512_mul_pd(e, e), f), _mm512_mul_pd(_mm512_mul_pd(a, a), f)]
    }

    /// [`super::ale_terms`] on eight lanes (the maxima splatted).
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(in super::super) fn ale_v([a, b]: [__m512d; 2], mx: __m512d, my: __m512d) -> [__m512d; 1] {
        [_mm512_abs_pd(_mm512_sub_pd(_mm512_div_pd(a, mx), _mm512_div_pd(b, my)))]
    }

    /// [`super::ale_squared_terms`] on eight lanes (the squared maxima splatted).
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(in super::super) fn ale_squared_v([a, b]: [__m512d; 2], mx: __m512d, my: __m512d) -> [__m512d; 1] {
        [_mm512_abs_pd(_mm512_sub_pd(_mm512_div_pd(_mm512_mul_pd(a, a), mx), _mm512_div_pd(_mm512_mul_pd(b, b), my)))]
    }
}

/// Squares of a distance row into `out`, the point's own entry set to +∞ (it never counts).
pub(super) fn squares(d: &[f64], i: usize, out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(d) {
        *o = v * v;
    }
    out[i] = f64::INFINITY;
}

/// A NeRV row's scratch: the shifted squared row and the kernel values of the last evaluation.
#[derive(Default)]
pub(super) struct Kernel {
    /// `d2_j − m` (0 for the point itself, whose kernel value is 0).
    shifted: Vec<f64>,
    /// `e_j` of the last [`kernel_sums`] (0 for the point itself).
    pub e: Vec<f64>,
}

impl Kernel {
    /// Takes the squared row `d2` (the point itself +∞), shifted by its smallest entry.
    fn shift(&mut self, d2: &[f64]) {
        let m = d2.iter().copied().fold(f64::INFINITY, f64::min);
        self.shifted.clear();
        self.shifted.extend(d2.iter().map(|&v| if v.is_infinite() { 0.0 } else { v - m }));
        self.e.resize(d2.len(), 0.0);
    }
}

/// The unnormalised Gaussian neighbourhood `e_j = exp(−β (d2_j − m))` (0 for the point itself,
/// `skip`) into `k.e`, its total S and `W = Σ (d2_j − m) e_j`, over the row [`Kernel::shift`]
/// took. Shifting by the smallest squared distance m changes nothing after normalisation and
/// keeps S ≥ 1 (no underflow to an empty neighbourhood). The exponentials are
/// `resources::exp`'s vectorised `exp_nonpositive` (within 2 ulp of the correctly rounded value, the same bits on
/// every platform), with values below e^−708 written as 0: next to S ≥ 1 they change no bit of
/// S, nothing visible of W, and no probability above the 10⁻¹² floor. One pass over the row
/// where the CPU has AVX-512 ([`gaussian_sums`]).
fn kernel_sums(k: &mut Kernel, beta: f64, skip: usize) -> [f64; 2] {
    gaussian_sums(&k.shifted, beta, skip, &mut k.e)
}

/// The bandwidth `β = 1/(2σ²)` whose neighbourhood over the squared row `d2` (point `skip`'s,
/// its own entry +∞) has entropy `ln(perplexity)`, by SickleJS's bisection: β starts at 1; the
/// entropy `H = ln S + β W / S` is compared with the target; within [`NERV_TOLERANCE`] it stops,
/// else β doubles (too much entropy, no upper bound yet) or halves (too little, no lower bound
/// yet) or moves to the middle of its bounds; at most [`NERV_MAX_ITERATIONS`] evaluations. The
/// result is the last β evaluated and its S; `k.e` holds that evaluation's kernel values, so the
/// neighbourhood is `k.e[j] / S`.
pub(super) fn fit_beta(d2: &[f64], skip: usize, perplexity: f64, k: &mut Kernel) -> (f64, f64) {
    let target = perplexity.ln();
    k.shift(d2);
    let (mut beta, mut lo, mut hi) = (1.0f64, f64::NEG_INFINITY, f64::INFINITY);
    let mut total;
    let mut it = 0;
    loop {
        let [s, w] = kernel_sums(k, beta, skip);
        total = s;
        it += 1;
        let h = s.ln() + beta * w / s;
        let diff = h - target;
        if diff.abs() <= NERV_TOLERANCE || it == NERV_MAX_ITERATIONS {
            break;
        }
        let next = if diff > 0.0 {
            lo = beta;
            if hi == f64::INFINITY { beta * 2.0 } else { (beta + hi) / 2.0 }
        } else {
            hi = beta;
            if lo == f64::NEG_INFINITY { beta / 2.0 } else { (beta + lo) / 2.0 }
        };
        // At the ends of f64's range the search cannot move: the neighbourhood is as narrow
        // (or wide) as it can be.
        if next == beta || !next.is_finite() || next == 0.0 {
            break;
        }
        beta = next;
    }
    (beta, total)
}

/// The normalised neighbourhood of bandwidth `beta` over the squared row `d2` (point `skip`'s),
/// into `out`.
pub(super) fn neighbourhood(d2: &[f64], skip: usize, beta: f64, k: &mut Kernel, out: &mut [f64]) {
    k.shift(d2);
    let [s, _] = kernel_sums(k, beta, skip);
    normalise(&k.e, s, out);
}

/// `out[j] = e[j] / s`.
pub(super) fn normalise(e: &[f64], s: f64, out: &mut [f64]) {
    for (o, &v) in out.iter_mut().zip(e) {
        *o = v / s;
    }
}

/// `(KL(p‖q), KL(q‖p))` over the row, each probability floored at [`NERV_FLOOR`]; the point's own
/// entry (`skip`) adds nothing. One logarithm per point: with `a`, `b` the floored p_j, q_j and
/// `l = ln(a/b)` ([`ln`]: fdlibm's, the same bits on every target), the terms are `a·l` and
/// `−(b·l)` (= b·ln(b/a) up to the logarithm's last place). With AVX-512 in one pass over the
/// row (both probabilities of `skip` are 0 in NeRV's rows, which adds nothing by the floor alone;
/// a row where they differ takes the portable loop).
pub(super) fn kl_both(p: &[f64], q: &[f64], skip: usize) -> [f64; 2] {
    assert!(p.len() == q.len() && skip < p.len());
    #[cfg(target_arch = "x86_64")]
    if avx512() && p[skip].max(NERV_FLOOR) == q[skip].max(NERV_FLOOR) {
        // SAFETY: the CPU has AVX-512F (checked above).
        return unsafe { simd::kl_both(p, q) };
    }
    kl_portable(p, q, skip)
}

/// [`kl_both`]'s terms of one point.
#[inline(always)]
fn kl_terms(p: f64, q: f64) -> [f64; 2] {
    let (a, b) = (p.max(NERV_FLOOR), q.max(NERV_FLOOR));
    // Equal probabilities (the point itself, and the far points both floored) add a·ln 1 = +0:
    // no logarithm needed, the same bits.
    if a == b {
        return [0.0, 0.0];
    }
    let l = ln(a / b);
    [a * l, -(b * l)]
}

fn kl_portable(p: &[f64], q: &[f64], skip: usize) -> [f64; 2] {
    pairwise_sums(p.len(), &|j| if j == skip { [0.0, 0.0] } else { kl_terms(p[j], q[j]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows built to break a vectorised sum: zeros, −0, repeated values, huge and tiny scales,
    /// every leaf shape (lengths around 8, 128 and their multiples).
    fn hostile_rows(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut s = seed;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let dx = (0..n)
            .map(|j| match j % 7 {
                0 => 0.0,
                1 => 1e-300 * next(),
                2 => 1e150 * next(),
                _ => next() * 10.0,
            })
            .collect();
        let dy = (0..n).map(|j| if j % 5 == 0 { -0.0 } else { next() * 3.0 }).collect();
        (dx, dy)
    }

    /// The vectorised row terms (each multiversioned: the widest this CPU has) are the scalar
    /// expressions summed in NumPy's order, bit for bit.
    #[test]
    fn vectorised_row_terms_are_the_scalar_sums() {
        for (n, seed) in [(0, 1), (1, 2), (7, 3), (8, 4), (9, 5), (127, 6), (128, 7), (129, 8), (1000, 9), (5003, 10)] {
            let (dx, dy) = hostile_rows(n, seed);
            let bits = |v: [f64; 2]| v.map(f64::to_bits);
            let want = pairwise_sums(n, &|j| {
                let (a, b) = (dx[j], dy[j]);
                let e = a - b;
                [if a > 0.0 { e * e / a } else { 0.0 }, a]
            });
            assert_eq!(bits(sammon_row(&dx, &dy)), bits(want), "sammon, n = {n}");
            assert_eq!(bits(sammon_portable(&dx, &dy)), bits(want), "sammon (portable), n = {n}");
            let w: Vec<f64> = dy.iter().map(|&b| (-b / 2.0).exp()).collect();
            let want = pairwise_sums(n, &|j| {
                let (a, b, f) = (dx[j], dy[j], w[j]);
                [(a - b) * (a - b) * f, a * a * f]
            });
            assert_eq!(bits(weighted_sums(&dx, &dy, &w)), bits(want), "cca, n = {n}");
            assert_eq!(bits(weighted_portable(&dx, &dy, &w)), bits(want), "cca (portable), n = {n}");
            // Probabilities: many floored (equal), a few not; the point itself 0 in both.
            if n > 0 {
                let prob =
                    |v: &[f64]| -> Vec<f64> { v.iter().map(|&d| if d > 5.0 { 1e-13 } else { d * 1e-3 }).collect() };
                let (mut p, mut q) = (prob(&dx), prob(&dy));
                let skip = n / 2;
                (p[skip], q[skip]) = (0.0, 0.0);
                let want = pairwise_sums(n, &|j| {
                    if j == skip {
                        return [0.0, 0.0];
                    }
                    let (a, b) = (p[j].max(NERV_FLOOR), q[j].max(NERV_FLOOR));
                    if a == b {
                        return [0.0, 0.0];
                    }
                    let l = ln(a / b);
                    [a * l, -(b * l)]
                });
                assert_eq!(bits(kl_both(&p, &q, skip)), bits(want), "kl, n = {n}");
                assert_eq!(bits(kl_portable(&p, &q, skip)), bits(want), "kl (portable), n = {n}");
                // A skipped point whose probabilities differ: the portable loop, the same rule.
                (p[skip], q[skip]) = (0.5, 0.25);
                let want = pairwise_sums(n, &|j| if j == skip { [0.0, 0.0] } else { kl_terms(p[j], q[j]) });
                assert_eq!(bits(kl_both(&p, &q, skip)), bits(want), "kl with a weighted skip, n = {n}");
            }
            for sq in [false, true] {
                let (mx, my) = (2e150, 3.0);
                let want = if sq {
                    pairwise_sums(n, &|j| [(dx[j] * dx[j] / (mx * mx) - dy[j] * dy[j] / (my * my)).abs()])[0]
                } else {
                    pairwise_sums(n, &|j| [(dx[j] / mx - dy[j] / my).abs()])[0]
                };
                assert_eq!(ale_row(&dx, &dy, mx, my, sq).to_bits(), want.to_bits(), "ale {sq}, n = {n}");
                assert_eq!(
                    ale_portable(&dx, &dy, mx, my, sq).to_bits(),
                    want.to_bits(),
                    "ale {sq} (portable), n = {n}"
                );
            }
        }
    }

    /// The fitted neighbourhood has the asked perplexity (2^H within the tolerance).
    #[test]
    fn the_bandwidth_gives_the_perplexity() {
        let d: Vec<f64> = (0..200).map(|j| ((j * 37 % 101) as f64 * 0.13 + 0.01) * 3.0).collect();
        let mut d2 = vec![0.0; d.len()];
        squares(&d, 5, &mut d2);
        for perplexity in [2.0, 10.0, 30.0, 150.0] {
            let mut k = Kernel::default();
            let (beta, total) = fit_beta(&d2, 5, perplexity, &mut k);
            let mut p = vec![0.0; d.len()];
            normalise(&k.e, total, &mut p);
            let mut again = vec![0.0; d.len()];
            neighbourhood(&d2, 5, beta, &mut k, &mut again);
            assert_eq!(p, again, "the last evaluation is the bandwidth's neighbourhood");
            let sum: f64 = p.iter().sum();
            assert!((sum - 1.0).abs() < 1e-12, "{sum}");
            let h: f64 = p.iter().filter(|&&v| v > 0.0).map(|&v| -v * v.ln()).sum();
            assert!((h - perplexity.ln()).abs() < 2e-5, "perplexity {perplexity}: H {h}");
            assert_eq!(p[5], 0.0);
        }
    }

    /// Equal distances: every entropy is ln(n − 1); the search stops at a finite β with the
    /// uniform neighbourhood, never a NaN.
    #[test]
    fn constant_rows_give_the_uniform_neighbourhood() {
        let d = vec![2.0; 10];
        let mut d2 = vec![0.0; 10];
        squares(&d, 0, &mut d2);
        let mut k = Kernel::default();
        let (beta, _) = fit_beta(&d2, 0, 3.0, &mut k);
        assert!(beta.is_finite() && beta > 0.0);
        let mut p = vec![0.0; 10];
        neighbourhood(&d2, 0, beta, &mut k, &mut p);
        assert!(p[1..].iter().all(|&v| (v - 1.0 / 9.0).abs() < 1e-15));
        let [a, b] = kl_both(&p, &p, 0);
        assert_eq!((a, b), (0.0, 0.0));
    }
}
