//! Host side of certified rank counting: dispatch `rank_counts` in row blocks, then decide each
//! row's overlaps with the reference's f64 keys (Exact) or take the f32 count (Fast).

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use super::GpuError;
use super::batch::{Bindings, Submitted};
use super::bound::{Params, strided_trips};
use super::context::Gpu;
use super::distances::{Recorded, block_rows, certified_params, record_distances};
use super::prepare::Space;
use super::shaders::{KQ_MAX, Kernel, RANK_TILE, WG};
use super::tally::Tally;
use crate::Numerics;
use crate::data::Points;
use crate::reference::{RankScratch, count_ranks, distance_pair, distance_row, key};

/// Points l per dispatch on a software adapter: 24 tiles of 256, so an invocation makes at most
/// about 24 · (4 + 2 + 2 · 256) loop trips, far inside driver loop budgets such as Mesa's 65535.
pub const POINT_CHUNK: usize = 96 * WG;

/// Points l per dispatch: [`POINT_CHUNK`] on software adapters (Mesa's loop-trip budget), all n
/// on a hardware GPU, whose drivers have no such budget, so a row block costs one dispatch, not
/// one per range (the H200 receipt: 1292 dispatches of 1.3 ms for n = 100 000). A driver that
/// cut the loop anyway is caught by the witness. `GpuRequest::rank_chunk` overrides (tests).
pub fn point_chunk(gpu: &Gpu, n: usize) -> usize {
    let chunk = match gpu.request.rank_chunk {
        Some(c) => c as usize,
        None if gpu.report.hardware => n,
        None => POINT_CHUNK,
    };
    chunk.clamp(1, n.max(1))
}

/// Tallies of certified rank counting.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RankStats {
    pub queries: u64,
    /// Comparisons too close for f32, decided in f64 on the host (Exact) or left to f32 (Fast).
    pub overlaps: u64,
    /// Rows whose overlap list overflowed, or that the device did not finish, recomputed
    /// whole on the CPU.
    pub rows_recomputed: u64,
    /// Of those, rows whose completeness witness came back short (the device skipped work).
    pub rows_incomplete: u64,
    pub rows_per_dispatch: u32,
}

fn cap(kq: usize) -> usize {
    8 * kq + 256
}

/// Ranks (and exact distances) in `points` of the `kq` queries per row of the points `rows`,
/// in `queries` (`rows.len()`×kq, row `rows.start` first; all rows for `0..n`).
#[allow(clippy::too_many_arguments)]
pub async fn certified_ranks(
    gpu: &Gpu,
    space: &Space,
    points: &Points,
    queries: &[u32],
    kq: usize,
    rows: Range<usize>,
    numerics: Numerics,
    tally: &mut Tally,
) -> Result<(Vec<u32>, Vec<f64>, RankStats), GpuError> {
    let n = points.n();
    let (m, first, end) = (rows.len(), rows.start, rows.end);
    let mut stats = RankStats { queries: (m * kq) as u64, ..Default::default() };
    let mut ranks = vec![0u32; m * kq];
    let dists: Vec<f64> =
        (0..m * kq).into_par_iter().map(|t| distance_pair(points, first + t / kq, queries[t] as usize)).collect();
    if kq > KQ_MAX {
        ranks
            .par_chunks_mut(kq)
            .enumerate()
            .for_each(|(r, out)| cpu_row(points, first + r, &queries[r * kq..(r + 1) * kq], out));
        stats.rows_recomputed = m as u64;
        return Ok((ranks, dists, stats));
    }
    let cap = cap(kq);
    let per_row_bytes = (cap * 8).max(kq * 4).max(WG * 16) as u64;
    let per = block_rows(gpu, n, per_row_bytes);
    stats.rows_per_dispatch = per as u32;
    let mut params = certified_params(gpu, &space.prep)?;
    params.k = kq as u32;
    params.cap = cap as u32;
    // Each block is one batch, submitted before the previous block is read back and refined.
    let mut pending: Option<Started> = None;
    let mut next_row = first;
    while next_row < end || pending.is_some() {
        let next = if next_row < end {
            let rows = per.min(end - next_row);
            params.row0 = next_row as u32;
            let at = next_row - first;
            let q_block: &[u8] = bytemuck::cast_slice(&queries[at * kq..(at + rows) * kq]);
            let started = start_block(gpu, space, &params, q_block, rows, numerics, tally).await?;
            next_row += rows;
            Some(started)
        } else {
            None
        };
        let Some(started) = pending.take() else {
            pending = next;
            continue;
        };
        pending = next;
        let (row0, rows) = (started.row0, started.rows);
        let counted = finish_block(gpu, started, numerics, tally).await?;
        let at = row0 - first;
        let results: Vec<(u64, u64, u64)> = ranks[at * kq..(at + rows) * kq]
            .par_chunks_mut(kq)
            .enumerate()
            .map(|(r, out)| {
                let (i, t) = (row0 + r, at + r);
                let qs = &queries[t * kq..(t + 1) * kq];
                let ov = &counted.overlaps[r];
                if counted.short[r] || counted.ocount[r] as usize > cap {
                    cpu_row(points, i, qs, out);
                    return (0, 1, u64::from(counted.short[r]));
                }
                for q in 0..kq {
                    out[q] = 1 + counted.certain[r * kq + q];
                }
                match numerics {
                    Numerics::Exact => {
                        let qkeys: Vec<u128> = (0..kq).map(|q| key(dists[t * kq + q], qs[q] as usize)).collect();
                        for &[q, l] in ov {
                            if key(distance_pair(points, i, l as usize), l as usize) < qkeys[q as usize] {
                                out[q as usize] += 1;
                            }
                        }
                    }
                    Numerics::Fast => {
                        for q in 0..kq {
                            out[q] += counted.fast[r * kq + q];
                        }
                    }
                }
                (ov.len() as u64, 0, 0)
            })
            .collect();
        for (c, rec, short) in results {
            stats.overlaps += c;
            stats.rows_recomputed += rec;
            stats.rows_incomplete += short;
        }
    }
    Ok((ranks, dists, stats))
}

/// One row block's counts over every l, summed over its point ranges (`point_chunk`).
struct Counted {
    certain: Vec<u32>,
    fast: Vec<u32>,
    /// Per row, the overlaps the device found (more than `cap` means overflow: not all kept).
    ocount: Vec<u32>,
    /// Per row, its kept overlaps (q, l).
    overlaps: Vec<Vec<[u32; 2]>>,
    /// Rows whose completeness witness came back short.
    short: Vec<bool>,
}

/// A block submitted to the device: its distances, then `rank_counts` over every point range.
struct Started {
    row0: usize,
    rows: usize,
    kq: usize,
    cap: usize,
    /// Overlap slots per row read back with the counts (the rest only when a row needs them).
    slots: usize,
    n: usize,
    sub: Submitted,
    dist: Recorded,
    dist_buf: wgpu::Buffer,
    overlaps: wgpu::Buffer,
}

/// Overlap slots per row read back at first: a few times the queries (a row with more has its
/// remaining slots read in a second step).
fn first_slots(kq: usize, cap: usize) -> usize {
    (2 * kq + 32).min(cap)
}

/// Records and submits a block's distances and its `rank_counts` ranges, in one batch.
async fn start_block(
    gpu: &Gpu,
    space: &Space,
    params: &Params,
    q_block: &[u8],
    rows: usize,
    numerics: Numerics,
    tally: &mut Tally,
) -> Result<Started, GpuError> {
    let (n, kq, cap) = (space.prep.n, params.k as usize, params.cap as usize);
    let row0 = params.row0 as usize;
    let dist_buf = gpu.scratch((rows * n * 4) as u64, tally);
    let mut batch = gpu.batch();
    let dist = record_distances(gpu, &mut batch, space, params, row0, rows, &dist_buf, tally).await?;
    let q = gpu.input(q_block, tally);
    let sizes = [(rows * kq * 4) as u64, (rows * kq * 4) as u64, (rows * 4) as u64, (rows * WG * 16) as u64];
    let outs: Vec<wgpu::Buffer> = sizes.iter().map(|&s| gpu.output(&mut batch, s, tally)).collect();
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let overlaps = gpu.pooled(usage, (rows * cap * 8) as u64, "overlaps", tally);
    outs.iter().for_each(|o| batch.clear(o));
    let mut p = *params;
    p.rows = rows as u32;
    let chunk = point_chunk(gpu, n);
    for lo in (0..n).step_by(chunk) {
        (p.lo, p.hi) = (lo as u32, (lo + chunk).min(n) as u32);
        let outputs = [&outs[0], &outs[1], &overlaps, &outs[2], &outs[3]];
        let bindings = Bindings { resident: &[&dist_buf], inputs: &[&q], outputs: &outputs };
        batch.dispatch(Kernel::RankCounts, &p, space, bindings, (rows as u32, 1), tally).await?;
    }
    // Read back: certain, (fast only for the Fast posture), ocount, trips, the first slots.
    for (b, &size) in outs.iter().zip(&sizes) {
        if b != &outs[1] || numerics == Numerics::Fast {
            batch.read(b, size, tally);
        }
    }
    let slots = first_slots(kq, cap);
    batch.read(&overlaps, (slots * rows * 8) as u64, tally);
    let sub = batch.submit(tally).await?;
    Ok(Started { row0, rows, kq, cap, slots, n, sub, dist, dist_buf, overlaps })
}

/// Waits for a started block and collects its counts, overlaps and witness.
async fn finish_block(gpu: &Gpu, s: Started, numerics: Numerics, tally: &mut Tally) -> Result<Counted, GpuError> {
    let (rows, kq, cap) = (s.rows, s.kq, s.cap);
    let out = s.sub.wait(gpu, tally).await;
    gpu.give_back(s.dist_buf);
    let out = out.inspect_err(|_| gpu.give_back(s.overlaps.clone()))?;
    let fast_read = usize::from(numerics == Numerics::Fast);
    let base = out.len() - 4 - fast_read;
    let certain: Vec<u32> = bytemuck::cast_slice(&out[base]).to_vec();
    let fast: Vec<u32> = if fast_read == 1 { bytemuck::cast_slice(&out[base + 1]).to_vec() } else { Vec::new() };
    let ocount: Vec<u32> = bytemuck::cast_slice(&out[base + 1 + fast_read]).to_vec();
    let trips: &[[u32; 4]] = bytemuck::cast_slice(&out[base + 2 + fast_read]);
    let first: &[[u32; 2]] = bytemuck::cast_slice(&out[base + 3 + fast_read]);
    let chunk = point_chunk(gpu, s.n);
    let lens: Vec<usize> = (0..s.n).step_by(chunk).map(|lo| (lo + chunk).min(s.n) - lo).collect();
    let mut short = s.dist.short(&out);
    for (r, sh) in short.iter_mut().enumerate() {
        *sh |= !rank_witness_complete(&lens, kq, &trips[r * WG..(r + 1) * WG]);
    }
    // Rows with more overlaps than the first slots (but not overflowing): read all slots.
    let more = ocount.iter().any(|&c| c as usize > s.slots && c as usize <= cap);
    let all = if more {
        let mut batch = gpu.batch();
        batch.read(&s.overlaps, (rows * cap * 8) as u64, tally);
        batch.submit(tally).await?.wait(gpu, tally).await?.pop()
    } else {
        None
    };
    gpu.give_back(s.overlaps);
    let slots: &[[u32; 2]] = all.as_deref().map_or(first, bytemuck::cast_slice);
    let overlaps = (0..rows)
        .map(|r| {
            let c = ocount[r] as usize;
            if c > cap { Vec::new() } else { (0..c).map(|p| slots[p * rows + r]).collect() }
        })
        .collect();
    Ok(Counted { certain, fast, ocount, overlaps, short })
}

/// The completeness witness of one row of `rank_counts` over ranges of `lens` points (summed
/// over the ranges on the device): every invocation ran its query (load and store), tile, half
/// and inner loops in full, in every range.
fn rank_witness_complete(lens: &[usize], kq: usize, trips: &[[u32; 4]]) -> bool {
    let tiles: u64 = lens.iter().map(|l| l.div_ceil(RANK_TILE) as u64).sum();
    let ranges = lens.len() as u64;
    let (kw, lanes) = (kq.min(WG), (WG / kq).max(1));
    trips.iter().enumerate().all(|(tid, &[q, t, h, x])| {
        let (g, q0) = (tid / kw, tid % kw);
        let active = (0..2).filter(|h| g < lanes && q0 + h * WG < kq).count() as u64;
        u64::from(q) == 2 * ranges * u64::from(strided_trips(kq, tid, WG))
            && u64::from(t) == tiles
            && u64::from(h) == 2 * tiles
            && u64::from(x) == tiles * (RANK_TILE - g).div_ceil(lanes) as u64 * active
    })
}

fn cpu_row(points: &Points, i: usize, qs: &[u32], out: &mut [u32]) {
    let mut d = vec![0.0; points.n()];
    distance_row(points, i, &mut d);
    count_ranks(&d, i, qs, out, &mut RankScratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_witness_checks_every_loop() {
        // Two ranges; k = 100 (two halves, one lane), 20 (three lanes) and 1 (64 lanes).
        let lens = [600usize, 70];
        let tiles: u32 = lens.iter().map(|l| l.div_ceil(RANK_TILE) as u32).sum();
        for kq in [100usize, 20, 1] {
            let (kw, lanes) = (kq.min(WG), (WG / kq).max(1));
            let full: Vec<[u32; 4]> = (0..WG)
                .map(|t| {
                    let (g, q0) = (t / kw, t % kw);
                    let active = (0..2).filter(|h| g < lanes && q0 + h * WG < kq).count() as u32;
                    let x = (RANK_TILE - g).div_ceil(lanes) as u32 * active;
                    [2 * 2 * strided_trips(kq, t, WG), tiles, 2 * tiles, tiles * x]
                })
                .collect();
            assert!(rank_witness_complete(&lens, kq, &full), "k = {kq}");
            for (tid, part) in [(0, 0), (40, 1), (63, 2), (10, 3), (50, 3), (19, 3)] {
                let mut cut = full.clone();
                if cut[tid][part] == 0 {
                    continue;
                }
                cut[tid][part] -= 1;
                assert!(!rank_witness_complete(&lens, kq, &cut), "k = {kq}: a short loop of thread {tid} goes unseen");
            }
        }
    }
}
