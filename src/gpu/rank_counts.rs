//! Host side of certified rank counting: dispatch `rank_counts` in row blocks, then decide each
//! row's overlaps with the reference's f64 keys (Exact) or take the f32 count (Fast).

use rayon::prelude::*;
use serde::Serialize;

use super::GpuError;
use super::bound::{Params, strided_trips};
use super::context::Gpu;
use super::dispatch::{Space, Tally};
use super::distances::{block_rows, certified_params, distances_block};
use super::shaders::{KQ_MAX, Kernel, WG};
use crate::Numerics;
use crate::data::Points;
use crate::reference::{RankScratch, count_ranks, distance_pair, distance_row, key};

/// Points l per dispatch: 96 tiles of 64, so an invocation makes about 96 · 131 loop trips,
/// far inside driver loop budgets such as Mesa's 65535.
pub const POINT_CHUNK: usize = 96 * WG;

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

/// Ranks (and exact distances) in `points` of the `kq` queries per row in `queries` (n×kq).
pub async fn certified_ranks(
    gpu: &Gpu,
    space: &Space,
    points: &Points,
    queries: &[u32],
    kq: usize,
    numerics: Numerics,
    tally: &mut Tally,
) -> Result<(Vec<u32>, Vec<f64>, RankStats), GpuError> {
    let n = points.n();
    let mut stats = RankStats { queries: (n * kq) as u64, ..Default::default() };
    let mut ranks = vec![0u32; n * kq];
    let dists: Vec<f64> =
        (0..n * kq).into_par_iter().map(|t| distance_pair(points, t / kq, queries[t] as usize)).collect();
    if kq > KQ_MAX {
        ranks
            .par_chunks_mut(kq)
            .enumerate()
            .for_each(|(i, out)| cpu_row(points, i, &queries[i * kq..(i + 1) * kq], out));
        stats.rows_recomputed = n as u64;
        return Ok((ranks, dists, stats));
    }
    let cap = cap(kq);
    let per_row_bytes = (cap * 8).max(kq * 4).max(WG * 16) as u64;
    let per = block_rows(gpu, n, per_row_bytes);
    stats.rows_per_dispatch = per as u32;
    let mut params = certified_params(gpu, n, points.dim())?;
    params.k = kq as u32;
    params.cap = cap as u32;
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let q_block: &[u8] = bytemuck::cast_slice(&queries[row0 * kq..(row0 + rows) * kq]);
        let block = distances_block(gpu, space, &params, row0, rows, tally).await?;
        let counted = count_block(gpu, space, &params, &block.buf, q_block, rows, tally).await;
        gpu.give_back(block.buf);
        let mut counted = counted?;
        for (s, &b) in counted.short.iter_mut().zip(&block.short) {
            *s |= b;
        }
        let results: Vec<(u64, u64, u64)> = ranks[row0 * kq..(row0 + rows) * kq]
            .par_chunks_mut(kq)
            .enumerate()
            .map(|(r, out)| {
                let i = row0 + r;
                let qs = &queries[i * kq..(i + 1) * kq];
                let ov = &counted.overlaps[r];
                if counted.short[r] || ov.len() > cap {
                    cpu_row(points, i, qs, out);
                    return (0, 1, u64::from(counted.short[r]));
                }
                for q in 0..kq {
                    out[q] = 1 + counted.certain[r * kq + q];
                }
                match numerics {
                    Numerics::Exact => {
                        let qkeys: Vec<u128> = (0..kq).map(|q| key(dists[i * kq + q], qs[q] as usize)).collect();
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

/// One row block's counts over every l, summed over the point ranges of `POINT_CHUNK`.
struct Counted {
    certain: Vec<u32>,
    fast: Vec<u32>,
    /// Per row, its overlaps (q, l); more than `cap` means overflow (the rest not kept).
    overlaps: Vec<Vec<[u32; 2]>>,
    /// Rows whose completeness witness came back short.
    short: Vec<bool>,
}

/// Runs `rank_counts` over the point ranges of a block whose distances are in `dist_buf`.
async fn count_block(
    gpu: &Gpu,
    space: &Space,
    params: &Params,
    dist_buf: &wgpu::Buffer,
    q_block: &[u8],
    rows: usize,
    tally: &mut Tally,
) -> Result<Counted, GpuError> {
    let (n, kq, cap) = (space.prep.n, params.k as usize, params.cap as usize);
    let mut c = Counted {
        certain: vec![0; rows * kq],
        fast: vec![0; rows * kq],
        overlaps: vec![Vec::new(); rows],
        short: vec![false; rows],
    };
    let mut p = *params;
    for lo in (0..n).step_by(POINT_CHUNK) {
        let hi = (lo + POINT_CHUNK).min(n);
        (p.lo, p.hi) = (lo as u32, hi as u32);
        let sizes = [
            (rows * kq * 4) as u64,
            (rows * kq * 4) as u64,
            (rows * cap * 8) as u64,
            (rows * 4) as u64,
            (rows * WG * 16) as u64,
        ];
        let out =
            gpu.run(Kernel::RankCounts, &p, space, &[dist_buf], &[q_block], &sizes, (rows as u32, 1), tally).await?;
        let certain: &[u32] = bytemuck::cast_slice(&out[0]);
        let fast: &[u32] = bytemuck::cast_slice(&out[1]);
        let overlaps: &[[u32; 2]] = bytemuck::cast_slice(&out[2]);
        let ocount: &[u32] = bytemuck::cast_slice(&out[3]);
        let trips: &[[u32; 4]] = bytemuck::cast_slice(&out[4]);
        for (a, b) in c.certain.iter_mut().zip(certain) {
            *a += b;
        }
        for (a, b) in c.fast.iter_mut().zip(fast) {
            *a += b;
        }
        for r in 0..rows {
            let ov = &mut c.overlaps[r];
            let got = ocount[r] as usize;
            if ov.len() + got > cap {
                ov.resize(cap + 1, [0, 0]); // overflow: the row goes to the CPU
            } else {
                ov.extend_from_slice(&overlaps[r * cap..r * cap + got]);
            }
            c.short[r] |= !rank_witness_complete(hi - lo, kq, &trips[r * WG..(r + 1) * WG]);
        }
    }
    Ok(c)
}

/// The completeness witness of one row of `rank_counts` over a range of `len` points: every
/// invocation ran its query, tile, half and inner loops in full.
fn rank_witness_complete(len: usize, kq: usize, trips: &[[u32; 4]]) -> bool {
    let tiles = len.div_ceil(WG) as u64;
    trips.iter().enumerate().all(|(tid, &[q, t, h, x])| {
        let halves = (0..2).filter(|h| tid + h * WG < kq).count() as u64;
        q == strided_trips(kq, tid, WG)
            && u64::from(t) == tiles
            && u64::from(h) == 2 * tiles
            && u64::from(x) == tiles * WG as u64 * halves
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
        let (len, kq): (usize, usize) = (150, 100);
        let tiles = len.div_ceil(WG) as u32;
        let full: Vec<[u32; 4]> = (0..WG)
            .map(|t| [strided_trips(kq, t, WG), tiles, 2 * tiles, tiles * 64 * if t + WG < kq { 2 } else { 1 }])
            .collect();
        assert!(rank_witness_complete(len, kq, &full));
        for (tid, part) in [(0, 0), (40, 1), (63, 2), (10, 3), (50, 3)] {
            let mut cut = full.clone();
            cut[tid][part] -= 1;
            assert!(!rank_witness_complete(len, kq, &cut), "a short loop of thread {tid} goes unseen");
        }
    }
}
