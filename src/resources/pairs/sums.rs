//! [`PairSums`]: sums over all n(n−1)/2 pairs i < j, streamed row by row in O(n) memory.
//!
//! Row i contributes the pairs (i, j), j > i. Each row's statistics are computed on their own
//! (NumPy's pairwise summation over the row, and means and centred moments from two sweeps
//! over it), stored in a per-row vector, and then combined by a fixed binary tree over the row
//! index (sums add; centred moments and regression residuals merge with Chan's formulas, whose
//! terms are all non-negative corrections). The tree's shape depends only on n, so the result is
//! bit-identical for any thread count and block size, and every sum has an error of a few units
//! in the last place times log₂ n (no catastrophic cancellation: nothing is computed as a
//! difference of large sums).

use crate::sum::pairwise_sums;

/// Statistics of the pairs (d^X, d^Y) over all pairs i < j, for one projection.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairSums {
    /// Number of pairs.
    pub count: u64,
    /// Σ (d^X − d^Y)².
    pub sum_sq_diff: f64,
    /// Σ (d^X)².
    pub sum_xx: f64,
    /// Σ (d^Y)².
    pub sum_yy: f64,
    /// Σ d^X d^Y.
    pub sum_xy: f64,
    /// min over α of Σ (d^X − α d^Y)² (attained at α = Σ d^X d^Y / Σ (d^Y)²).
    pub scaled_residual: f64,
    /// Means of d^X and d^Y.
    pub mean_x: f64,
    pub mean_y: f64,
    /// Σ (d^X − mean)², Σ (d^Y − mean)², Σ (d^X − mean)(d^Y − mean).
    pub m2_x: f64,
    pub m2_y: f64,
    pub co_moment: f64,
    /// 0, or e when the statistics of d^Y (`sum_yy`, `sum_xy`, `mean_y`, `m2_y`, `co_moment`)
    /// are those of 2^e·d^Y: a projection whose distances are so large or small that their
    /// squares and products leave f64's range is measured rescaled (see
    /// `resources::pairwise::rescaled_sums`). `sum_sq_diff` is always in original
    /// units and `scaled_residual` does not depend on the scale of d^Y.
    pub y_scale_exp: i32,
}

impl PairSums {
    /// Merges two disjoint sets of pairs (Chan et al.'s pairwise update).
    pub fn merge(a: PairSums, b: PairSums) -> PairSums {
        if a.count == 0 {
            return b;
        }
        if b.count == 0 {
            return a;
        }
        let n = a.count + b.count;
        let (na, nb, nf) = (a.count as f64, b.count as f64, n as f64);
        let w = na * nb / nf;
        let dx = b.mean_x - a.mean_x;
        let dy = b.mean_y - a.mean_y;
        let syy = a.sum_yy + b.sum_yy;
        // Least-squares fit through the origin: R(α) = R_a + S_a(α−α_a)² + R_b + S_b(α−α_b)².
        let scaled_residual = if a.sum_yy > 0.0 && b.sum_yy > 0.0 {
            let (alpha_a, alpha_b) = (a.sum_xy / a.sum_yy, b.sum_xy / b.sum_yy);
            let d = alpha_a - alpha_b;
            a.scaled_residual + b.scaled_residual + d * d * (a.sum_yy * b.sum_yy / syy)
        } else {
            a.scaled_residual + b.scaled_residual
        };
        PairSums {
            count: n,
            sum_sq_diff: a.sum_sq_diff + b.sum_sq_diff,
            sum_xx: a.sum_xx + b.sum_xx,
            sum_yy: syy,
            sum_xy: a.sum_xy + b.sum_xy,
            scaled_residual,
            mean_x: a.mean_x + dx * (nb / nf),
            mean_y: a.mean_y + dy * (nb / nf),
            m2_x: a.m2_x + b.m2_x + dx * dx * w,
            m2_y: a.m2_y + b.m2_y + dy * dy * w,
            co_moment: a.co_moment + b.co_moment + dx * dy * w,
            y_scale_exp: a.y_scale_exp,
        }
    }

    /// The statistics of one row's pairs: `x[j]`, `y[j]` for the j > i. Two fused sweeps (each
    /// sum is NumPy's pairwise sum of its terms, bit for bit): on AVX-512 vectors where the CPU
    /// has them, the same operations lane by lane (tested against the scalar sums).
    pub(super) fn of_row(x: &[f64], y: &[f64]) -> PairSums {
        let c = x.len();
        if c == 0 {
            return PairSums::default();
        }
        let (first, second): (Sweep1, Sweep2) = (sweep1, sweep2);
        #[cfg(target_arch = "x86_64")]
        let (first, second): (Sweep1, Sweep2) = if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (the functions are called only then).
            (|x, y| unsafe { simd::sweep1(x, y) }, |x, y, m| unsafe { simd::sweep2(x, y, m) })
        } else {
            (first, second)
        };
        let [sum_xx, sum_yy, sum_xy, sum_sq_diff, sum_x, sum_y] = first(x, y);
        let (mean_x, mean_y) = (sum_x / c as f64, sum_y / c as f64);
        let alpha = if sum_yy > 0.0 { sum_xy / sum_yy } else { 0.0 };
        let [residual, m2_x, m2_y, co_moment] = second(x, y, [alpha, mean_x, mean_y]);
        let scaled_residual = if sum_yy > 0.0 { residual } else { sum_xx };
        PairSums {
            count: c as u64,
            sum_sq_diff,
            sum_xx,
            sum_yy,
            sum_xy,
            scaled_residual,
            mean_x,
            mean_y,
            m2_x,
            m2_y,
            co_moment,
            y_scale_exp: 0,
        }
    }
}

type Sweep1 = fn(&[f64], &[f64]) -> [f64; 6];
type Sweep2 = fn(&[f64], &[f64], [f64; 3]) -> [f64; 4];

/// Σ a², b², ab, (a − b)², a, b.
fn sweep1(x: &[f64], y: &[f64]) -> [f64; 6] {
    pairwise_sums(x.len(), &|t| {
        let (a, b) = (x[t], y[t]);
        [a * a, b * b, a * b, (a - b) * (a - b), a, b]
    })
}

/// Σ (a − αb)², (a − mean_x)², (b − mean_y)², (a − mean_x)(b − mean_y).
fn sweep2(x: &[f64], y: &[f64], [alpha, mean_x, mean_y]: [f64; 3]) -> [f64; 4] {
    pairwise_sums(x.len(), &|t| {
        let (a, b) = (x[t], y[t]);
        [
            (a - alpha * b) * (a - alpha * b),
            (a - mean_x) * (a - mean_x),
            (b - mean_y) * (b - mean_y),
            (a - mean_x) * (b - mean_y),
        ]
    })
}

/// [`sweep1`] and [`sweep2`] on AVX-512 vectors, operation for operation.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use crate::sum::lane_sums_avx512;

    #[target_feature(enable = "avx512f")]
    pub(super) fn sweep1(x: &[f64], y: &[f64]) -> [f64; 6] {
        lane_sums_avx512([x, y], |[a, b]| {
            let d = _mm512_sub_pd(a, b);
            [_mm512_mul_pd(a, a), _mm512_mul_pd(b, b), _mm512_mul_pd(a, b), _mm512_mul_pd(d, d), a, b]
        })
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn sweep2(x: &[f64], y: &[f64], [alpha, mean_x, mean_y]: [f64; 3]) -> [f64; 4] {
        let (al, mx, my) = (_mm512_set1_pd(alpha), _mm512_set1_pd(mean_x), _mm512_set1_pd(mean_y));
        lane_sums_avx512([x, y], |[a, b]| {
            let r = _mm512_sub_pd(a, _mm512_mul_pd(al, b));
            let (u, v) = (_mm512_sub_pd(a, mx), _mm512_sub_pd(b, my));
            [_mm512_mul_pd(r, r), _mm512_mul_pd(u, u), _mm512_mul_pd(v, v), _mm512_mul_pd(u, v)]
        })
    }
}

/// Merges per-row statistics by a binary tree whose shape depends only on their number.
pub fn tree<T: Copy>(v: &[T], empty: T, merge: &impl Fn(T, T) -> T) -> T {
    match v.len() {
        0 => empty,
        1 => v[0],
        len => {
            let h = len / 2;
            merge(tree(&v[..h], empty, merge), tree(&v[h..], empty, merge))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both sweeps, on AVX-512 where the CPU has it and portable, are the scalar sums in
    /// NumPy's order, bit for bit.
    #[test]
    fn vectorised_row_sums_are_the_scalar_sums() {
        for n in [1usize, 7, 8, 9, 128, 129, 1000, 4099] {
            let x: Vec<f64> =
                (0..n).map(|i| if i % 6 == 0 { 0.0 } else { ((i as f64) * 0.731).sin().abs() * 1e3 }).collect();
            let y: Vec<f64> =
                (0..n).map(|i| if i % 5 == 0 { -0.0 } else { ((i as f64) * 0.377).cos().abs() * 7.0 }).collect();
            let m = [0.37, 501.0, 3.5];
            let want1 = sweep1(&x, &y).map(f64::to_bits);
            let want2 = sweep2(&x, &y, m).map(f64::to_bits);
            let [xx, yy, xy, sq, sx, sy] = pairwise_sums(n, &|t| {
                let (a, b) = (x[t], y[t]);
                [a * a, b * b, a * b, (a - b) * (a - b), a, b]
            });
            assert_eq!(want1, [xx, yy, xy, sq, sx, sy].map(f64::to_bits), "n = {n}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                let (g1, g2) = unsafe { (simd::sweep1(&x, &y), simd::sweep2(&x, &y, m)) };
                assert_eq!(g1.map(f64::to_bits), want1, "n = {n}");
                assert_eq!(g2.map(f64::to_bits), want2, "n = {n}");
            }
        }
    }

    #[test]
    fn merge_equals_direct_statistics() {
        let x: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin() + 2.0).collect();
        let y: Vec<f64> = (0..50).map(|i| (i as f64 * 0.11).cos() + 1.5).collect();
        let whole = PairSums::of_row(&x, &y);
        let parts = PairSums::merge(PairSums::of_row(&x[..17], &y[..17]), PairSums::of_row(&x[17..], &y[17..]));
        for (a, b) in [
            (whole.scaled_residual, parts.scaled_residual),
            (whole.m2_x, parts.m2_x),
            (whole.m2_y, parts.m2_y),
            (whole.co_moment, parts.co_moment),
            (whole.mean_x, parts.mean_x),
            (whole.sum_xy, parts.sum_xy),
        ] {
            assert!((a - b).abs() <= 1e-13 * a.abs().max(1.0), "{a} {b}");
        }
    }
}
