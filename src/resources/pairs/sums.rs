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
    /// sum is NumPy's pairwise sum of its terms, bit for bit).
    pub(super) fn of_row(x: &[f64], y: &[f64]) -> PairSums {
        let c = x.len();
        if c == 0 {
            return PairSums::default();
        }
        let [sum_xx, sum_yy, sum_xy, sum_sq_diff, sum_x, sum_y] = pairwise_sums(c, &|t| {
            let (a, b) = (x[t], y[t]);
            [a * a, b * b, a * b, (a - b) * (a - b), a, b]
        });
        let (mean_x, mean_y) = (sum_x / c as f64, sum_y / c as f64);
        let alpha = if sum_yy > 0.0 { sum_xy / sum_yy } else { 0.0 };
        let [residual, m2_x, m2_y, co_moment] = pairwise_sums(c, &|t| {
            let (a, b) = (x[t], y[t]);
            [
                (a - alpha * b) * (a - alpha * b),
                (a - mean_x) * (a - mean_x),
                (b - mean_y) * (b - mean_y),
                (a - mean_x) * (b - mean_y),
            ]
        });
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
