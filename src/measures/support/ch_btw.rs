//! ZADU's `ch_btw` cluster validation measure for one pair of classes (used by `l_tnc`):
//! the "shift" score `s = (Σ_c n_c e^{‖μ_c - μ‖/σ}) (n - 2) / Σ_i e^{‖x_i - μ_{c(i)}‖/σ}`
//! (μ the overall centroid, σ the standard deviation of the distances to it), mapped by
//! `f(s) = 1 / (1 + 1/s)` and normalised against the mean score of 20 label shuffles:
//! `(f(s) - f(s̄)) / (1 - f(s̄))` (0 when `f(s̄) = 1`).
//!
//! The shuffles come from [`Mt19937`]: with the same seed they are NumPy's
//! `np.random.seed(seed)` shuffles, so the score equals ZADU's after `np.random.seed(seed)`.

use super::numpy::{mean_rows, pairwise_sum_by, sq_dist};
use super::rng::Mt19937;
use crate::data::Points;

const SHUFFLES: usize = 20;

/// The shift score of `rows` (in ZADU's order: class 0 first) with 0/1 `labels`; `None` when it
/// is not finite.
fn shift(points: &Points, rows: &[usize], labels: &[u8]) -> Option<f64> {
    let n = rows.len();
    let dim = points.dim();
    let global = mean_rows(points, rows);
    let to_global: Vec<f64> = rows.iter().map(|&r| sq_dist(points.row(r), &global).sqrt()).collect();
    let mu = pairwise_sum_by(n, &|i| to_global[i]) / n as f64;
    let std = (pairwise_sum_by(n, &|i| {
        let d = to_global[i] - mu;
        d * d
    }) / n as f64)
        .sqrt();
    // np.bincount(labels, weights=X[:, j]): sequential sums per label.
    let mut sums = [vec![0.0; dim], vec![0.0; dim]];
    let mut counts = [0usize; 2];
    for (&r, &l) in rows.iter().zip(labels) {
        counts[l as usize] += 1;
        for (s, &x) in sums[l as usize].iter_mut().zip(points.row(r)) {
            *s += x;
        }
    }
    let cents: Vec<Vec<f64>> = (0..2).map(|c| sums[c].iter().map(|s| s / counts[c] as f64).collect()).collect();
    let compact =
        pairwise_sum_by(n, &|i| (sq_dist(points.row(rows[i]), &cents[labels[i] as usize]).sqrt() / std).exp());
    let separ = pairwise_sum_by(2, &|c| (sq_dist(&cents[c], &global).sqrt() / std).exp() * counts[c] as f64);
    let result = separ * (n as f64 - 2.0) / compact;
    result.is_finite().then_some(result)
}

/// ZADU's `ch_btw` of classes 0 and 1 (`codes`) among `rows`, drawing the shuffles from `rng`.
/// `None` when ZADU would raise (a non-finite or zero shift score).
pub(in crate::measures) fn score(points: &Points, rows: &[usize], codes: &[u32], rng: &mut Mt19937) -> Option<f64> {
    // ZADU concatenates the indices of class 0, then class 1.
    let ordered: Vec<usize> =
        (0..2u32).flat_map(|c| rows.iter().zip(codes).filter(move |&(_, &k)| k == c).map(|(&r, _)| r)).collect();
    let n0 = codes.iter().filter(|&&c| c == 0).count();
    let mut labels: Vec<u8> = (0..ordered.len()).map(|i| u8::from(i >= n0)).collect();
    let f = |s: f64| 1.0 / (1.0 + 1.0 / s);
    let orig = shift(points, &ordered, &labels)?;
    if orig == 0.0 {
        return None; // Python: 0.0 ** -1 raises ZeroDivisionError
    }
    let mut sum = 0.0;
    for _ in 0..SHUFFLES {
        rng.shuffle(&mut labels);
        sum += shift(points, &ordered, &labels)?;
    }
    let e = sum / SHUFFLES as f64;
    if e == 0.0 {
        return None;
    }
    let (fo, fe) = (f(orig), f(e));
    Some(if fe == 1.0 { 0.0 } else { (fo - fe) / (1.0 - fe) })
}
