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
use super::density::{groups, DensitySums, Group, KernelScratch};
use super::pair_buckets::Writer;
use super::scratch_pool::Pool;
use crate::reference::distance_row_from;
use crate::sum::pairwise_sums;

/// Smallest and largest distance over the pairs i < j of one space.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Extent {
    pub min: f64,
    pub max: f64,
}

impl Extent {
    pub(crate) const EMPTY: Extent = Extent { min: f64::INFINITY, max: f64::NEG_INFINITY };
    pub(crate) fn join(self, o: Extent) -> Extent {
        Extent { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
    pub(crate) fn of(v: &[f64]) -> Extent {
        v.iter().fold(Extent::EMPTY, |e, &d| Extent { min: e.min.min(d), max: e.max.max(d) })
    }
    /// Of a whole distance row `d(i, ·)` without the diagonal.
    pub(crate) fn of_row(d: &[f64], i: usize) -> Extent {
        Extent::of(&d[..i]).join(Extent::of(&d[i + 1..]))
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
    /// 0, or e when the statistics of d^Y (`sum_yy`, `sum_xy`, `mean_y`, `m2_y`, `co_moment`)
    /// are those of 2^e·d^Y: a projection whose distances are so large or small that their
    /// squares and products leave f64's range is measured rescaled (see
    /// [`super::pairwise::rescaled_sums`]). `sum_sq_diff` is always in original units and
    /// `scaled_residual` does not depend on the scale of d^Y.
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
    fn of_row(x: &[f64], y: &[f64]) -> PairSums {
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
            [(a - alpha * b) * (a - alpha * b), (a - mean_x) * (a - mean_x), (b - mean_y) * (b - mean_y), (a - mean_x) * (b - mean_y)]
        });
        let scaled_residual = if sum_yy > 0.0 { residual } else { sum_xx };
        PairSums { count: c as u64, sum_sq_diff, sum_xx, sum_yy, sum_xy, scaled_residual, mean_x, mean_y, m2_x, m2_y, co_moment, y_scale_exp: 0 }
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
    /// With records: each block's X-chunk starts within its region ([`Writer::block`]).
    pub(super) record_starts: Vec<Vec<u32>>,
    /// With densities: the original space's, per σ of the job (when asked for).
    pub(super) high_densities: Option<Vec<Vec<f64>>>,
    /// With densities: per projection, per σ (`None` where the job had no maximum).
    pub(super) low_densities: Vec<Option<Vec<Vec<f64>>>>,
}

/// What one [`pair_pass`] computes besides the extents of the projections.
pub(super) struct PairJob<'a> {
    /// The original space's extent.
    pub high_extent: bool,
    /// The [`PairSums`] of each projection.
    pub sums: bool,
    /// One projection only: every pair's pair-order record, each block's records in the
    /// block's region grouped by the [`Writer`]'s X-chunks (sparing the pair order a sweep).
    pub records: Option<(&'a mut [u128], &'a Writer)>,
    /// Densities from the same distance rows, the maxima being known (the blocks are then
    /// the densities' fixed row groups, whatever `block_rows` says).
    pub densities: Option<DensityJob<'a>>,
}

/// Densities to compute in a [`pair_pass`].
pub(super) struct DensityJob<'a> {
    /// The original space's largest distance and the σs wanted there, if any.
    pub high: Option<(f64, &'a [f64])>,
    /// Per projection: its largest distance (`None`: no densities, all distances zero).
    pub lows: Vec<Option<f64>>,
    pub low_sigmas: &'a [f64],
}

#[derive(Clone, Copy)]
struct RowOut {
    high: Extent,
    low: Extent,
    sums: PairSums,
}

/// Rows per block of [`pair_pass`].
pub(super) fn pass_blocks(n: usize, block_rows: usize) -> Vec<Rows<usize>> {
    let block_rows = block_rows.max(1);
    (0..n).step_by(block_rows).map(|s| s..(s + block_rows).min(n)).collect()
}

/// What one block of rows found.
struct BlockOut {
    rows: Vec<Vec<RowOut>>,
    starts: Vec<u32>,
}

/// One sweep over the rows: the extent of each projection's pair distances, and what `job`
/// asks for. Only the pairs j > i of a row are measured.
pub(super) fn pair_pass(high: &Points, lows: &[&Points], job: PairJob, block_rows: usize, ctl: &Control) -> Result<PairPassOutput> {
    let PairJob { high_extent, sums, records, densities: dens } = job;
    let n = high.n();
    let with_records = records.is_some();
    assert!(!with_records || lows.len() == 1, "records are written for one projection");
    let dens_high = dens.as_ref().and_then(|d| d.high);
    let need_dx = high_extent || sums || with_records || dens_high.is_some();
    let high_sums = dens_high.map(|(max, sigmas)| DensitySums::new(n, max, sigmas));
    let low_sums: Vec<Option<DensitySums>> = match &dens {
        Some(d) => d.lows.iter().map(|l| l.map(|max| DensitySums::new(n, max, d.low_sigmas))).collect(),
        None => (0..lows.len()).map(|_| None).collect(),
    };
    // Density sums need their fixed row groups as blocks (see `density`).
    let blocks = if dens.is_some() { groups(n) } else { pass_blocks(n, block_rows) };
    let mut slices: Vec<&mut [u128]> = Vec::with_capacity(blocks.len());
    let writer = records.as_ref().map(|r| r.1);
    if let Some((recs, _)) = records {
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
    let pool: Pool<(Vec<f64>, Vec<f64>, KernelScratch, Vec<u128>)> = Pool::new();
    let per_block: Vec<BlockOut> = blocks
        .par_iter()
        .zip(slices.into_par_iter())
        .map(|(rows, recs)| pool.with(|(dx, dy, kernel, staged)| {
            ctl.check()?;
            dx.resize(if need_dx { n } else { 0 }, 0.0);
            dy.resize(n, 0.0);
            staged.clear();
            let mut b = BlockOut { rows: vec![Vec::with_capacity(rows.len()); lows.len().max(1)], starts: Vec::new() };
            let mut high_group = high_sums.as_ref().map(|s| s.group(rows.start));
            let mut low_groups: Vec<Option<Group>> = low_sums.iter().map(|s| s.as_ref().map(|s| s.group(rows.start))).collect();
            for i in rows.clone() {
                let m = n - 1 - i;
                let hx = if need_dx {
                    distance_row_from(high, i, i + 1, &mut dx[..m]);
                    if let (Some(s), Some(g)) = (&high_sums, &mut high_group) {
                        s.row(g, i, &dx[..m], kernel);
                    }
                    Extent::of(&dx[..m])
                } else {
                    Extent::EMPTY
                };
                if lows.is_empty() {
                    b.rows[0].push(RowOut { high: hx, low: Extent::EMPTY, sums: PairSums::default() });
                }
                for (p, low) in lows.iter().enumerate() {
                    distance_row_from(low, i, i + 1, &mut dy[..m]);
                    if let (Some(s), Some(g)) = (&low_sums[p], &mut low_groups[p]) {
                        s.row(g, i, &dy[..m], kernel);
                    }
                    let (tx, ty) = (&dx[..m.min(dx.len())], &dy[..m]);
                    if with_records {
                        let at = staged.len();
                        staged.resize(at + m, 0);
                        super::pair_order::write_records(tx, ty, &mut staged[at..]);
                    }
                    let s = if sums { PairSums::of_row(tx, ty) } else { PairSums::default() };
                    b.rows[p].push(RowOut { high: hx, low: Extent::of(ty), sums: s });
                }
            }
            if let (Some(s), Some(g)) = (&high_sums, high_group) {
                s.finish_group(g);
            }
            for (s, g) in low_sums.iter().zip(low_groups) {
                if let (Some(s), Some(g)) = (s, g) {
                    s.finish_group(g);
                }
            }
            b.starts = writer.map(|w| w.block(staged, recs)).unwrap_or_default();
            let d = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
            ctl.report("pair sums", d, n as u64);
            Ok(b)
        }))
        .collect::<Result<_>>()?;
    let rows_of = |p: usize| per_block.iter().flat_map(|b| b.rows[p].iter().copied()).collect::<Vec<RowOut>>();
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
    let high_densities = high_sums.map(DensitySums::finish);
    let low_densities = low_sums.into_iter().map(|s| s.map(DensitySums::finish)).collect();
    let record_starts = if with_records { per_block.into_iter().map(|b| b.starts).collect() } else { Vec::new() };
    Ok(PairPassOutput { high: high_out, lows: lows_out, record_starts, high_densities, low_densities })
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
