//! [`pair_pass`]: one sweep over the rows that measures every pair i < j once, for the extents,
//! the [`PairSums`], the densities and the pair order's records.

use std::ops::Range as Rows;

use rayon::prelude::*;

use super::super::density::{DensitySums, Group, KernelScratch, groups};
use super::super::scratch_pool::Pool;
use super::bucketed::Writer;
use super::extent::Extent;
use super::record::{pairs_in, write_records};
use super::sums::{PairSums, tree};
use crate::control::Control;
use crate::data::{Kernel, Points};
use crate::error::Result;
use crate::reference::{distance_row_from, squared_row_from};

/// What [`pair_pass`] found.
#[derive(Debug, Clone)]
pub struct PairPassOutput {
    /// The original space's extent, when it was asked for.
    pub high: Option<Extent>,
    /// Per projection: its extent, and the pair sums when asked for.
    pub lows: Vec<(Extent, Option<PairSums>)>,
    /// With records: each block's X-chunk starts within its region ([`Writer::block`]).
    pub(crate) record_starts: Vec<Vec<u32>>,
    /// With densities: the original space's, per σ of the job (when asked for).
    pub(crate) high_densities: Option<Vec<Vec<f64>>>,
    /// With densities: per projection, per σ (`None` where the job had no maximum).
    pub(crate) low_densities: Vec<Option<Vec<Vec<f64>>>>,
}

/// What one [`pair_pass`] computes besides the extents of the projections.
pub(crate) struct PairJob<'a> {
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
pub(crate) struct DensityJob<'a> {
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
pub(crate) fn pair_pass(
    high: &Points,
    lows: &[&Points],
    job: PairJob,
    block_rows: usize,
    ctl: &Control,
) -> Result<PairPassOutput> {
    let PairJob { high_extent, sums, records, densities: dens } = job;
    let n = high.n();
    let with_records = records.is_some();
    assert!(!with_records || lows.len() == 1, "records are written for one projection");
    let dens_high = dens.as_ref().and_then(|d| d.high);
    let need_dx = high_extent || sums || with_records || dens_high.is_some();
    // Only extents asked: a Euclidean space's rows as sums of squares, their extent's roots at
    // the end (`squared_row_from`: the same bits, one root per row instead of one per pair).
    let extents_only = !sums && !with_records && dens.is_none();
    let squares = |p: &Points| extents_only && matches!(p.metric().kernel(), Kernel::Euclidean);
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
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(pairs_in(n, b.clone()));
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
        .map(|(rows, recs)| {
            pool.with(|(dx, dy, kernel, staged)| {
                ctl.check()?;
                dx.resize(if need_dx { n } else { 0 }, 0.0);
                dy.resize(n, 0.0);
                staged.clear();
                let mut b =
                    BlockOut { rows: vec![Vec::with_capacity(rows.len()); lows.len().max(1)], starts: Vec::new() };
                let mut high_group = high_sums.as_ref().map(|s| s.group(rows.start));
                let mut low_groups: Vec<Option<Group>> =
                    low_sums.iter().map(|s| s.as_ref().map(|s| s.group(rows.start))).collect();
                for i in rows.clone() {
                    let m = n - 1 - i;
                    let hx = if need_dx && squares(high) {
                        squared_row_from(high, i, i + 1, &mut dx[..m]);
                        Extent::of_squares(&dx[..m])
                    } else if need_dx {
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
                        if squares(low) {
                            squared_row_from(low, i, i + 1, &mut dy[..m]);
                            let low = Extent::of_squares(&dy[..m]);
                            b.rows[p].push(RowOut { high: hx, low, sums: PairSums::default() });
                            continue;
                        }
                        distance_row_from(low, i, i + 1, &mut dy[..m]);
                        if let (Some(s), Some(g)) = (&low_sums[p], &mut low_groups[p]) {
                            s.row(g, i, &dy[..m], kernel);
                        }
                        let (tx, ty) = (&dx[..m.min(dx.len())], &dy[..m]);
                        if with_records {
                            let at = staged.len();
                            staged.resize(at + m, 0);
                            write_records(tx, ty, &mut staged[at..]);
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
            })
        })
        .collect::<Result<_>>()?;
    let rows_of = |p: usize| per_block.iter().flat_map(|b| b.rows[p].iter().copied()).collect::<Vec<RowOut>>();
    let first = rows_of(0);
    let high_out = high_extent.then(|| first.iter().fold(Extent::EMPTY, |e, r| e.join(r.high)));
    let lows_out = (0..lows.len())
        .map(|p| {
            let rows = if p == 0 { first.clone() } else { rows_of(p) };
            let extent = rows.iter().fold(Extent::EMPTY, |e, r| e.join(r.low));
            let s = sums
                .then(|| tree(&rows.iter().map(|r| r.sums).collect::<Vec<_>>(), PairSums::default(), &PairSums::merge));
            (extent, s)
        })
        .collect();
    let high_densities = high_sums.map(DensitySums::finish);
    let low_densities = low_sums.into_iter().map(|s| s.map(DensitySums::finish)).collect();
    let record_starts = if with_records { per_block.into_iter().map(|b| b.starts).collect() } else { Vec::new() };
    Ok(PairPassOutput { high: high_out, lows: lows_out, record_starts, high_densities, low_densities })
}
