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
use super::super::knn_candidates::{KnnBlock, collect_knn, on_device as on_device_knn, record_knn, with_knn};
use super::super::rank_counts::{
    RankBlock, RankRun, collect_ranks, cpu_ranks, on_device as on_device_ranks, query_distances, refine_ranks,
};
use super::super::tally::Tally;
use super::super::twin::sqdist;
use super::{Built, GpuStats, On, Plan, Tables, fill_knn, queries_x, queries_y};
use crate::Numerics;

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
    let rows = block_rows(gpu, width, per_row).min((budget / (width as u64 * 4)).max(1) as usize).min(n).max(1);
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

/// [`super::run`] as a streamed plan. Per row block, three sweeps over the tiles: the
/// projection's (its kNN, whose lists are the queries ranked in the original space), the
/// original space's (its kNN and those ranks, from the same tiles), and the projection's
/// again (the ranks of the original space's neighbours, known only now; low-dimensional,
/// so the cheap one to compute twice).
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
    let Tables { x: mut lists_x, y: mut lists_y, mut ranks, mut dists } = Tables::new(m, plan);
    let mut row0 = rows.start;
    while row0 < rows.end {
        let count = shape.rows.min(rows.end - row0);
        let at = row0 - rows.start;
        let block = Block { row0, rows: count, tiles: &tiles, numerics };
        // The projection's kNN.
        if let Some(y) = plan.y.filter(|_| ky > 0) {
            let (done, _) = block.sweep(gpu, y, ky, None, tally).await?;
            let lists = (&mut lists_y.0[at * ky..(at + count) * ky], &mut lists_y.1[at * ky..(at + count) * ky]);
            fill_knn(y, ky, done, row0..row0 + count, lists, numerics, stats, tally);
        }
        // The original space's kNN, and the projection's neighbours ranked in it.
        let q_x = queries_x(plan, &lists_y.0, at, count);
        if let Some(x) = plan.x {
            let ranked = (kc > 0).then_some(&q_x[..]);
            let (done, counted) = block.sweep(gpu, x, kx, ranked, tally).await?;
            if kx > 0 {
                let lists = (&mut lists_x.0[at * kx..(at + count) * kx], &mut lists_x.1[at * kx..(at + count) * kx]);
                fill_knn(x, kx, done, row0..row0 + count, lists, numerics, stats, tally);
            }
            if kc > 0 {
                let range = at * kc..(at + count) * kc;
                block.ranks(x, kc, &q_x, counted, &mut ranks[0][range.clone()], &mut dists[0][range], stats, tally);
            }
        }
        // The original space's neighbours ranked in the projection.
        if kc > 0 {
            let y = plan.y.expect("cross ranks need both spaces");
            let q_y = queries_y(plan, &lists_x.0, at, count);
            let (_, counted) = block.sweep(gpu, y, 0, Some(&q_y), tally).await?;
            let range = at * kc..(at + count) * kc;
            block.ranks(y, kc, &q_y, counted, &mut ranks[1][range.clone()], &mut dists[1][range], stats, tally);
        }
        row0 += count;
    }
    Ok(Tables { x: lists_x, y: lists_y, ranks, dists }.built(plan))
}

/// One row block of a streamed plan.
struct Block<'t> {
    row0: usize,
    rows: usize,
    tiles: &'t [Range<usize>],
    numerics: Numerics,
}

impl Block<'_> {
    /// One sweep over the tiles of `on` in one batch (the tiles take turns in one buffer): per
    /// tile its distances, its kNN candidates (k > 0, within the kernel's reach) and the rank
    /// counts of `ranked` (rows × kq queries, within the kernel's reach), accumulated over the
    /// tiles. The queries' s̃ go with them (their columns lie in any tile): the kernels'
    /// sequential f32 sum on the host, one valid evaluation of the bound (docs/exactness.md,
    /// Step 3). Returns the tiles' candidates united and the counts, for what was swept.
    async fn sweep(
        &self,
        gpu: &Gpu,
        on: &On<'_>,
        k: usize,
        ranked: Option<&[u32]>,
        tally: &mut Tally,
    ) -> Result<(Option<KnnBlock>, Option<RankBlock>), GpuError> {
        let (row0, rows, tiles) = (self.row0, self.rows, self.tiles);
        let k = if k > 0 && on_device_knn(k) { k } else { 0 };
        let ranked = ranked.filter(|q| on_device_ranks(q.len() / rows.max(1)));
        if k == 0 && ranked.is_none() {
            return Ok((None, None));
        }
        let width = tiles.iter().map(|t| t.len()).max().unwrap_or(0);
        let dist = gpu.scratch((rows * width * 4) as u64, tally);
        let mut batch = gpu.batch();
        let mut p = on.params;
        p.row0 = row0 as u32;
        let mut run = ranked.map(|q| {
            let kq = q.len() / rows;
            let mut words = q.to_vec();
            words.extend(
                q.iter().enumerate().map(|(t, &j)| sqdist(&on.space.prep, row0 + t / kq, j as usize).to_bits()),
            );
            let mut rp = p;
            rp.streamed = 1;
            RankRun::begin(gpu, &mut batch, &rp, &words, rows, kq, tally)
        });
        // The rows' k smallest U carried from tile to tile (cleared: none yet).
        let carried = (k > 0).then(|| gpu.output(&mut batch, (rows * k * 4) as u64, tally));
        if let Some(c) = carried.as_ref() {
            batch.clear(c);
        }
        let mut recorded = Vec::with_capacity(tiles.len());
        for (t, cols) in tiles.iter().enumerate() {
            let rec =
                record_distances_to(gpu, &mut batch, &on.space, &p, row0, rows, cols.clone(), &dist, tally).await?;
            let knn = if k > 0 {
                let mut kp = with_knn(on.params, k);
                (kp.row0, kp.col0, kp.n) = (row0 as u32, cols.start as u32, cols.len() as u32);
                // Tile t adds about k/(t + 1) per row under the carried values (the rest, if
                // more, in a second read).
                let (minima, guess) = (rec.minima.as_ref(), rows * (k / (t + 1) + 8));
                let carried = carried.as_ref();
                Some(
                    record_knn(
                        gpu, &mut batch, &on.space, &kp, &dist, minima, rec.tiles, rows, guess, carried, None, tally,
                    )
                    .await?,
                )
            } else {
                None
            };
            if let Some(run) = run.as_mut() {
                run.tile(gpu, &mut batch, &on.space, &dist, cols.clone(), t + 1 < tiles.len(), tally).await?;
            }
            recorded.push((rec, knn, cols.len()));
        }
        let ranks = run.map(|run| run.finish(&mut batch, rows * 4, self.numerics, tally));
        let out = match batch.submit(tally).await {
            Ok(sub) => sub.wait(gpu, tally).await,
            Err(e) => Err(e),
        };
        gpu.give_back(dist);
        let out = out?;
        let mut short = vec![false; rows];
        let mut blocks = Vec::with_capacity(recorded.len());
        for (rec, knn, w) in recorded {
            let tile_short = rec.short(&out);
            for (s, &x) in short.iter_mut().zip(&tile_short) {
                *s |= x;
            }
            if let Some(knn) = knn {
                blocks.push(collect_knn(gpu, knn, &out, &tile_short, w, tally).await?);
            }
        }
        let counted = match ranks {
            Some(rec) => Some(collect_ranks(gpu, rec, &out, &short, tally).await?),
            None => None,
        };
        Ok(((k > 0).then(|| KnnBlock::unite(blocks)), counted))
    }

    /// Refines the block's ranks of the queries `q` in `on` from their counts (`counted`), or
    /// computes them on the CPU reference, into `ranks` and the queries' distances `dists`.
    #[allow(clippy::too_many_arguments)]
    fn ranks(
        &self,
        on: &On<'_>,
        kq: usize,
        q: &[u32],
        counted: Option<RankBlock>,
        ranks: &mut [u32],
        dists: &mut [f64],
        stats: &mut GpuStats,
        tally: &mut Tally,
    ) {
        let d = query_distances(on.points, self.row0, kq, q, tally);
        match counted {
            Some(block) => {
                refine_ranks(on.points, &block, self.row0, kq, q, &d, self.numerics, ranks, &mut stats.ranks, tally)
            }
            None => {
                cpu_ranks(on.points, self.row0, kq, q, ranks, tally);
                stats.ranks.rows_recomputed += self.rows as u64;
            }
        }
        dists.copy_from_slice(&d);
    }
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

    /// The streamed plan's premises on the kernels' twins, without a GPU: on data built to tie
    /// (a lattice with duplicates, 1e-9 jitter) and every tile split, the union of the tiles'
    /// candidates holds the row's true k neighbours, and the tiles' certain counts plus their
    /// overlaps decided by the reference's keys add up to the reference's ranks.
    #[test]
    fn the_tiles_twins_unite_to_the_whole_rows() {
        use crate::gpu::bound::Params;
        use crate::gpu::knn_candidates::with_knn;
        use crate::gpu::prepare::prepare;
        use crate::gpu::twin;
        use crate::reference::{distance_pair, distance_row, key};
        let mut rng = crate::splitmix::SplitMix64(17);
        let n = 130;
        let lattice: Vec<f64> = (0..n * 3).map(|e| ((e * 7 / 3) % 4) as f64).collect();
        let jittered: Vec<f64> = (0..n * 5).map(|e| (e % 3) as f64 + 1e-9 * (rng.uniform() - 0.5)).collect();
        for (name, dim, data) in [("lattice", 3, lattice), ("jitter", 5, jittered)] {
            let points = crate::Points::from_vec(name, n, dim, data).unwrap();
            let prep = prepare(&points);
            for (k, width) in [(1, 4), (5, 12), (5, 45), (20, 42)] {
                let tiles = point_tiles(n, width);
                for i in [0, 1, 64, n - 1] {
                    let mut d = vec![0.0; n];
                    distance_row(&points, i, &mut d);
                    let mut keys: Vec<u128> = (0..n).filter(|&j| j != i).map(|j| key(d[j], j)).collect();
                    keys.sort_unstable();
                    let truth: Vec<u32> = keys[..k].iter().map(|kk| (kk & 0xFFFF_FFFF) as u32).collect();
                    // The queries ranked: the true neighbours; the reference's rank of each.
                    let rank = |j: u32| 1 + keys.iter().take_while(|&&kk| kk < key(d[j as usize], j as usize)).count();
                    let (mut united, mut alone) = (Vec::new(), 0);
                    let mut ranks = vec![1u32; k];
                    let mut carried = Vec::new();
                    for cols in &tiles {
                        let mut p = with_knn(Params::new_form(n, dim, prep.form), k);
                        (p.col0, p.n) = (cols.start as u32, cols.len() as u32);
                        alone += twin::knn_candidates(&p, &prep, i, &[]).count;
                        let (row, next) = twin::knn_candidates_carried(&p, &prep, i, &[], &carried);
                        assert_eq!(next.len(), k.min(cols.end - usize::from(i < cols.end)), "{name}: k carried");
                        carried = next;
                        united.extend(row.candidates.iter().map(|&(j, _)| j));
                        p.cap = u32::MAX;
                        let counted = twin::rank_counts(&p, &prep, i, &truth);
                        for (q, &j) in truth.iter().enumerate() {
                            let qk = key(d[j as usize], j as usize);
                            let decided = counted
                                .overlaps
                                .iter()
                                .filter(|&&(s, l)| {
                                    s as usize == q && key(distance_pair(&points, i, l as usize), l as usize) < qk
                                })
                                .count();
                            ranks[q] += counted.certain[q] + decided as u32;
                        }
                    }
                    for j in &truth {
                        assert!(united.contains(j), "{name} k={k} w={width} row {i}: the union misses {j}");
                    }
                    // The carried bound only ever removes candidates (each tile alone has ≥ k).
                    assert!(united.len() as u32 <= alone && alone as usize >= k * tiles.len(), "{name}");
                    let want: Vec<u32> = truth.iter().map(|&j| rank(j) as u32).collect();
                    assert_eq!(ranks, want, "{name} k={k} w={width} row {i}: ranks over the tiles");
                }
            }
        }
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
