//! The streamed plan (issue 30, item 5): row blocks × point tiles, for n whose whole rows would
//! leave blocks of few rows (n = 10⁶: a row of s̃ is 4 MB). A block's distances are computed
//! one tile of points at a time into one buffer of rows × tile width; `knn_candidates` selects
//! each tile's candidates (their union holds every candidate of the whole row: a point within
//! the row's bound is within the tile's) and `rank_counts` accumulates its counts, witness and
//! overlaps over the tiles as over point ranges. Host memory stays O(n·k); device memory is one
//! block's tile per space at a time.
//!
//! The price: a space's distances are computed once for its kNN and once more for the ranks
//! counted in it (the queries come from the other space's kNN), where the row plan keeps them
//! resident for both.

use std::ops::Range;

use serde::Serialize;

use super::super::GpuError;
use super::super::context::Gpu;
use super::super::distances::{block_rows, record_distances_to};
use super::super::knn_candidates::{
    KnnBlock, collect_knn, cpu_rows, on_device as on_device_knn, record_knn, refine_knn, with_knn,
};
use super::super::rank_counts::{
    RankBlock, RankRun, collect_ranks, cpu_ranks, on_device as on_device_ranks, query_distances, refine_ranks,
};
use super::super::shaders::Kernel;
use super::super::tally::Tally;
use super::super::twin::sqdist;
use super::{Built, GpuStats, On, Plan, queries};
use crate::Numerics;
use crate::resources::{CrossRanks, Neighbours};

/// Rows per block below which the planner streams: fewer would leave most of a large GPU idle
/// in `knn_candidates` and `rank_counts` (one workgroup per row; the H200 has 132
/// multiprocessors), as whole rows at n = 10⁶ did (134-row blocks, unfinished in 110 s).
pub const MIN_BLOCK_ROWS: usize = 1024;

/// A streamed plan's shape, for the run report.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tiling {
    /// Rows per block.
    pub rows: usize,
    /// Points per tile (the widest; ⌈n / width⌉ tiles of balanced widths).
    pub width: usize,
    pub tiles: usize,
    /// Why the plan streams.
    pub reason: &'static str,
}

/// The points `0..n` in ⌈n / width⌉ tiles of balanced widths (each within one of the others).
pub fn point_tiles(n: usize, width: usize) -> Vec<Range<usize>> {
    let count = n.div_ceil(width.max(1)).max(1);
    (0..count).map(|t| t * n / count..(t + 1) * n / count).collect()
}

/// Points per tile below which the planner does not stream on its own: a small memory budget
/// (`--gpu-resident 64K`) is served by small row blocks, not by tiles of a few points.
pub const MIN_TILE_POINTS: usize = 16_384;

/// Whether a pass over n points streams, and its shape: forced by `GpuRequest::point_tile`,
/// or when whole rows give blocks of fewer than [`MIN_BLOCK_ROWS`] rows (`per`) and tiles of
/// [`MIN_BLOCK_ROWS`] rows within one buffer and the resident budget hold at least
/// [`MIN_TILE_POINTS`]. A tile holds at least 2k + 2 points (`k` the largest list or query
/// count; balanced tiles then hold k + 1), so that every tile, the row's own point left out,
/// has k candidates; a plan of one tile is the row plan.
pub(super) fn tiling(gpu: &Gpu, n: usize, per_row: u64, per: usize, k: usize, resident: u64) -> Option<Tiling> {
    // One space's tile resident at a time, in one buffer.
    let budget = resident.min(gpu.max_output_bytes());
    let (width, tiles, reason) = tile_width(gpu.request.point_tile, n, per, k, budget)?;
    let rows = block_rows(gpu, width, per_row).min((budget / (width as u64 * 4)).max(1) as usize).max(1);
    Some(Tiling { rows, width, tiles, reason })
}

/// [`tiling`]'s choice of tiles: (widest tile, tiles, reason), or None for whole rows.
fn tile_width(
    requested: Option<u32>,
    n: usize,
    per: usize,
    k: usize,
    budget: u64,
) -> Option<(usize, usize, &'static str)> {
    let floor = 2 * k + 2;
    let (width, reason) = match requested {
        Some(w) => ((w as usize).max(floor), "point tile requested"),
        None if per >= MIN_BLOCK_ROWS.min(n) => return None,
        None => {
            let w = (budget / (MIN_BLOCK_ROWS as u64 * 4)) as usize;
            if w < MIN_TILE_POINTS.max(floor) {
                return None;
            }
            (w, "whole rows would give blocks of fewer than 1 024 rows")
        }
    };
    let tiles = point_tiles(n, width);
    let widest = tiles.iter().map(|t| t.len()).max().unwrap_or(0);
    (tiles.len() >= 2).then_some((widest, tiles.len(), reason))
}

/// [`super::run`] as a streamed plan: per row block, each space's kNN over the tiles (the
/// projection's first: its lists are the queries ranked in the original space), then the
/// cross ranks in both spaces over the tiles, each space's distances computed again.
pub(super) async fn run(
    gpu: &Gpu,
    plan: &Plan<'_, '_>,
    rows: Range<usize>,
    numerics: Numerics,
    shape: Tiling,
    stats: &mut GpuStats,
    tally: &mut Tally,
) -> Result<Built, GpuError> {
    let m = rows.len();
    let n = plan.x.or(plan.y).map_or(0, |s| s.points.n());
    let (kx, ky, kc) = (plan.kx, plan.ky, plan.kc);
    let tiles = point_tiles(n, shape.width);
    let mut lists_x = (vec![0u32; m * kx], vec![0f64; m * kx]);
    let mut lists_y = (vec![0u32; m * ky], vec![0f64; m * ky]);
    let mut ranks = [vec![0u32; m * kc], vec![0u32; m * kc]];
    let mut dists = [vec![0f64; m * kc], vec![0f64; m * kc]];
    let mut row0 = rows.start;
    while row0 < rows.end {
        let count = shape.rows.min(rows.end - row0);
        let at = row0 - rows.start;
        for (on, k, lists) in [(plan.y, ky, &mut lists_y), (plan.x, kx, &mut lists_x)] {
            let Some(on) = on.filter(|_| k > 0) else { continue };
            let (idx, dist) = (&mut lists.0[at * k..(at + count) * k], &mut lists.1[at * k..(at + count) * k]);
            if !on_device_knn(k) {
                cpu_rows(on.points, k, row0..row0 + count, idx, dist);
                stats.knn.rows_recomputed += count as u64;
                let e = tally.kernel(Kernel::KnnCandidates.name());
                e.host_rows_recomputed += count as u64;
                e.host_f64_distances += (count * n) as u64;
                continue;
            }
            let block = knn_block(gpu, on, k, row0, count, &tiles, tally).await?;
            let params = with_knn(on.params, k);
            refine_knn(on.points, &on.space.prep, &params, &block, row0, numerics, idx, dist, &mut stats.knn, tally);
        }
        if kc > 0 {
            let (x, y) = (plan.x.expect("cross ranks need both spaces"), plan.y.expect("cross ranks need both spaces"));
            let (q_x, q_y) = queries(plan, &lists_x.0, &lists_y.0, at, count);
            for (t, on, q) in [(0, x, &q_x), (1, y, &q_y)] {
                let range = at * kc..(at + count) * kc;
                let d = query_distances(on.points, row0, kc, q, tally);
                if on_device_ranks(kc) {
                    let block = rank_block(gpu, on, kc, q, row0, count, &tiles, numerics, tally).await?;
                    let out = &mut ranks[t][range.clone()];
                    refine_ranks(on.points, &block, row0, kc, q, &d, numerics, out, &mut stats.ranks, tally);
                } else {
                    cpu_ranks(on.points, row0, kc, q, &mut ranks[t][range.clone()], tally);
                    stats.ranks.rows_recomputed += count as u64;
                }
                dists[t][range].copy_from_slice(&d);
            }
        }
        row0 += count;
    }
    let [rank_high_of_low, rank_low_of_high] = ranks;
    let [dist_high_of_low, dist_low_of_high] = dists;
    Ok(Built {
        knn_x: (kx > 0).then_some(Neighbours { k: kx, idx: lists_x.0, dist: lists_x.1 }),
        knn_y: (ky > 0).then_some(Neighbours { k: ky, idx: lists_y.0, dist: lists_y.1 }),
        cross: (kc > 0).then_some(CrossRanks {
            k: kc,
            rank_high_of_low,
            rank_low_of_high,
            dist_high_of_low,
            dist_low_of_high,
        }),
    })
}

/// One block's kNN candidates in `on`, over every tile, in one batch (the tiles take turns in
/// one buffer), united.
async fn knn_block(
    gpu: &Gpu,
    on: &On<'_>,
    k: usize,
    row0: usize,
    rows: usize,
    tiles: &[Range<usize>],
    tally: &mut Tally,
) -> Result<KnnBlock, GpuError> {
    let width = tiles.iter().map(|t| t.len()).max().unwrap_or(0);
    let dist = gpu.scratch((rows * width * 4) as u64, tally);
    let mut batch = gpu.batch();
    let mut recorded = Vec::with_capacity(tiles.len());
    let mut p = on.params;
    p.row0 = row0 as u32;
    for cols in tiles {
        let rec = record_distances_to(gpu, &mut batch, &on.space, &p, row0, rows, cols.clone(), &dist, tally).await?;
        let mut kp = with_knn(on.params, k);
        (kp.row0, kp.col0, kp.n) = (row0 as u32, cols.start as u32, cols.len() as u32);
        let guess = rows * (k + 8);
        let knn =
            record_knn(gpu, &mut batch, &on.space, &kp, &dist, rec.minima.as_ref(), rec.tiles, rows, guess, tally)
                .await?;
        recorded.push((rec, knn, cols.len()));
    }
    let out = match batch.submit(tally).await {
        Ok(sub) => sub.wait(gpu, tally).await,
        Err(e) => Err(e),
    };
    gpu.give_back(dist);
    let out = out?;
    let mut blocks = Vec::with_capacity(recorded.len());
    for (rec, knn, w) in recorded {
        let short = rec.short(&out);
        blocks.push(collect_knn(gpu, knn, &out, &short, w, tally).await?);
    }
    Ok(KnnBlock::unite(blocks, k))
}

/// One block's rank counts of the queries `q` (rows × kq) in `on`, over every tile in one
/// batch. The queries' s̃ go with them (their columns lie in any tile): the kernels' sequential
/// f32 sum on the host, one valid evaluation of the bound (docs/exactness.md, Step 3).
#[allow(clippy::too_many_arguments)]
async fn rank_block(
    gpu: &Gpu,
    on: &On<'_>,
    kq: usize,
    q: &[u32],
    row0: usize,
    rows: usize,
    tiles: &[Range<usize>],
    numerics: Numerics,
    tally: &mut Tally,
) -> Result<RankBlock, GpuError> {
    let prep = &on.space.prep;
    let mut words = q.to_vec();
    words.extend(q.iter().enumerate().map(|(t, &j)| sqdist(prep, row0 + t / kq, j as usize).to_bits()));
    let width = tiles.iter().map(|t| t.len()).max().unwrap_or(0);
    let dist = gpu.scratch((rows * width * 4) as u64, tally);
    let mut batch = gpu.batch();
    let mut p = on.params;
    p.row0 = row0 as u32;
    let mut rp = p;
    rp.streamed = 1;
    let mut run = RankRun::begin(gpu, &mut batch, &rp, &words, rows, kq, tally);
    let mut recorded = Vec::with_capacity(tiles.len());
    for (t, cols) in tiles.iter().enumerate() {
        let rec = record_distances_to(gpu, &mut batch, &on.space, &p, row0, rows, cols.clone(), &dist, tally).await?;
        run.tile(gpu, &mut batch, &on.space, &dist, cols.clone(), t + 1 < tiles.len(), tally).await?;
        recorded.push(rec);
    }
    let rec = run.finish(&mut batch, rows * 4, numerics, tally);
    let out = match batch.submit(tally).await {
        Ok(sub) => sub.wait(gpu, tally).await,
        Err(e) => Err(e),
    };
    gpu.give_back(dist);
    let out = out?;
    let mut short = vec![false; rows];
    for r in &recorded {
        for (s, x) in short.iter_mut().zip(r.short(&out)) {
            *s |= x;
        }
    }
    collect_ranks(gpu, rec, &out, &short, tally).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planner_streams_only_when_whole_rows_leave_small_blocks() {
        let gib = 1u64 << 30;
        // n = 10⁶ at the default budget: whole rows gave 134-row blocks (the H200 receipt);
        // four tiles of 250 000 points, 1 024-row blocks in a 1 GiB buffer.
        let (width, tiles, reason) = tile_width(None, 1_000_000, 134, 20, gib).expect("streams");
        assert_eq!((width, tiles), (250_000, 4));
        assert!(reason.contains("fewer than 1 024 rows"), "{reason}");
        // n = 100 000: 2 684-row blocks of whole rows serve.
        assert_eq!(tile_width(None, 100_000, 2684, 20, gib), None);
        // A small budget (64 KiB) is served by small row blocks, not 16-point tiles.
        assert_eq!(tile_width(None, 300, 13, 5, 64 << 10), None);
        // A browser's 128 MiB binding at n = 10⁶: tiles of 32 768 points.
        assert_eq!(tile_width(None, 1_000_000, 33, 20, 128 << 20).map(|t| t.1), Some(31));
        // Requested tiles hold at least 2k + 2 points; one tile is the row plan.
        assert_eq!(tile_width(Some(16), 61, 61, 29, gib).map(|t| (t.0, t.1)), Some((31, 2)));
        assert_eq!(tile_width(Some(100), 61, 61, 5, gib), None);
    }

    #[test]
    fn point_tiles_cover_every_point_once_in_balanced_widths() {
        for (n, w) in [(10, 3), (1000, 96), (1_000_000, 131_072), (7, 7), (7, 100), (5, 1)] {
            let t = point_tiles(n, w);
            assert_eq!(t.len(), n.div_ceil(w));
            assert_eq!(t.first().unwrap().start, 0);
            assert_eq!(t.last().unwrap().end, n);
            assert!(t.windows(2).all(|p| p[0].end == p[1].start), "{t:?}");
            let (lo, hi) = (t.iter().map(|r| r.len()).min().unwrap(), t.iter().map(|r| r.len()).max().unwrap());
            assert!(hi - lo <= 1 && hi <= w, "n={n} w={w}: {lo}..{hi}");
        }
    }
}
