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

use std::ops::Range as Rows;

use rayon::prelude::*;

use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row;
use crate::sum::pairwise_sum;

/// Smallest and largest distance over the pairs i < j of one space.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Extent {
    pub min: f64,
    pub max: f64,
}

impl Extent {
    const EMPTY: Extent = Extent { min: f64::INFINITY, max: f64::NEG_INFINITY };
    fn join(self, o: Extent) -> Extent {
        Extent { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
    fn of(v: &[f64]) -> Extent {
        v.iter().fold(Extent::EMPTY, |e, &d| Extent { min: e.min.min(d), max: e.max.max(d) })
    }
}

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
        }
    }

    /// The statistics of one row's pairs: `x[j]`, `y[j]` for the j > i.
    fn of_row(x: &[f64], y: &[f64], t: &mut Vec<f64>) -> PairSums {
        let c = x.len();
        if c == 0 {
            return PairSums::default();
        }
        let mut sum = |f: &dyn Fn(usize) -> f64| {
            t.clear();
            t.extend((0..c).map(f));
            pairwise_sum(t)
        };
        let sum_xx = sum(&|j| x[j] * x[j]);
        let sum_yy = sum(&|j| y[j] * y[j]);
        let sum_xy = sum(&|j| x[j] * y[j]);
        let sum_sq_diff = sum(&|j| (x[j] - y[j]) * (x[j] - y[j]));
        let scaled_residual = if sum_yy > 0.0 {
            let alpha = sum_xy / sum_yy;
            sum(&|j| (x[j] - alpha * y[j]) * (x[j] - alpha * y[j]))
        } else {
            sum_xx
        };
        let mean_x = sum(&|j| x[j]) / c as f64;
        let mean_y = sum(&|j| y[j]) / c as f64;
        let m2_x = sum(&|j| (x[j] - mean_x) * (x[j] - mean_x));
        let m2_y = sum(&|j| (y[j] - mean_y) * (y[j] - mean_y));
        let co_moment = sum(&|j| (x[j] - mean_x) * (y[j] - mean_y));
        PairSums { count: c as u64, sum_sq_diff, sum_xx, sum_yy, sum_xy, scaled_residual, mean_x, mean_y, m2_x, m2_y, co_moment }
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

/// What [`pair_pass`] found.
#[derive(Debug, Clone)]
pub struct PairPassOutput {
    /// The original space's extent, when it was asked for.
    pub high: Option<Extent>,
    /// Per projection: its extent, and the pair sums when asked for.
    pub lows: Vec<(Extent, Option<PairSums>)>,
}

#[derive(Clone, Copy)]
struct RowOut {
    high: Extent,
    low: Extent,
    sums: PairSums,
}

/// One sweep over the rows: the extent of each space's pair distances (the original space's
/// only when `high_extent`) and, when `sums`, the [`PairSums`] of each projection. With
/// `records` (one projection only), it also writes the pair-order records of every pair
/// (`pair_order::fill`'s layout), sparing the pair order its own sweep.
pub fn pair_pass(
    high: &Points,
    lows: &[&Points],
    high_extent: bool,
    sums: bool,
    block_rows: usize,
    ctl: &Control,
    records: Option<&mut [u128]>,
) -> Result<PairPassOutput> {
    let n = high.n();
    let with_records = records.is_some();
    assert!(!with_records || lows.len() == 1, "records are written for one projection");
    let need_dx = high_extent || sums || with_records;
    let block_rows = block_rows.max(1);
    let blocks: Vec<Rows<usize>> = (0..n).step_by(block_rows).map(|s| s..(s + block_rows).min(n)).collect();
    let mut slices: Vec<&mut [u128]> = Vec::with_capacity(blocks.len());
    if let Some(recs) = records {
        let mut rest = recs;
        for b in &blocks {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(super::pair_order::pairs_in(n, b.clone()));
            slices.push(head);
            rest = tail;
        }
    } else {
        slices.resize_with(blocks.len(), Default::default);
    }
    let done = std::sync::atomic::AtomicU64::new(0);
    let per_block: Vec<Vec<Vec<RowOut>>> = blocks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(rows, recs)| {
            ctl.check()?;
            let mut o = 0;
            let mut dx = vec![0.0; if need_dx { n } else { 0 }];
            let mut dy = vec![0.0; n];
            let mut t = Vec::with_capacity(n);
            let mut out: Vec<Vec<RowOut>> = vec![Vec::with_capacity(rows.len()); lows.len().max(1)];
            for i in rows.clone() {
                let hx = if need_dx {
                    distance_row(high, i, &mut dx);
                    Extent::of(&dx[i + 1..])
                } else {
                    Extent::EMPTY
                };
                if lows.is_empty() {
                    out[0].push(RowOut { high: hx, low: Extent::EMPTY, sums: PairSums::default() });
                }
                for (p, low) in lows.iter().enumerate() {
                    distance_row(low, i, &mut dy);
                    if with_records {
                        let m = n - 1 - i;
                        super::pair_order::write_records(&dx[i + 1..], &dy[i + 1..], &mut recs[o..o + m]);
                        o += m;
                    }
                    let s = if sums { PairSums::of_row(&dx[i + 1..], &dy[i + 1..], &mut t) } else { PairSums::default() };
                    out[p].push(RowOut { high: hx, low: Extent::of(&dy[i + 1..]), sums: s });
                }
            }
            let d = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
            ctl.report("pair sums", d, n as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let rows_of = |p: usize| per_block.iter().flat_map(|b| b[p].iter().copied()).collect::<Vec<RowOut>>();
    let first = rows_of(0);
    let high_out = high_extent.then(|| first.iter().fold(Extent::EMPTY, |e, r| e.join(r.high)));
    let lows_out = (0..lows.len())
        .map(|p| {
            let rows = if p == 0 { first.clone() } else { rows_of(p) };
            let extent = rows.iter().fold(Extent::EMPTY, |e, r| e.join(r.low));
            let s = sums.then(|| tree(&rows.iter().map(|r| r.sums).collect::<Vec<_>>(), PairSums::default(), &PairSums::merge));
            (extent, s)
        })
        .collect();
    Ok(PairPassOutput { high: high_out, lows: lows_out })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_direct_statistics() {
        let x: Vec<f64> = (0..50).map(|i| (i as f64 * 0.37).sin() + 2.0).collect();
        let y: Vec<f64> = (0..50).map(|i| (i as f64 * 0.11).cos() + 1.5).collect();
        let mut t = Vec::new();
        let whole = PairSums::of_row(&x, &y, &mut t);
        let parts = PairSums::merge(PairSums::of_row(&x[..17], &y[..17], &mut t), PairSums::of_row(&x[17..], &y[17..], &mut t));
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
