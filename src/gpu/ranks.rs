//! Host side of certified rank counting: dispatch `rank_counts` in row blocks, then decide each
//! row's overlaps with the reference's f64 keys (Exact) or take the f32 count (Fast).

use rayon::prelude::*;
use serde::Serialize;

use super::bound::Params;
use super::context::Gpu;
use super::dispatch::{Space, Tally};
use super::shaders::Kernel;
use super::GpuError;
use crate::data::Points;
use crate::reference::{count_ranks, distance_pair, distance_row, key, RankScratch};
use crate::Numerics;

/// Most queries per row the kernel holds in workgroup memory.
pub const KQ_MAX: usize = 128;

/// Tallies of certified rank counting.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RankStats {
    pub queries: u64,
    /// Comparisons too close for f32, decided in f64 on the host (Exact) or left to f32 (Fast).
    pub overlaps: u64,
    /// Rows whose overlap list overflowed, recomputed whole on the CPU.
    pub rows_recomputed: u64,
    pub rows_per_dispatch: u32,
}

fn cap(kq: usize) -> usize {
    8 * kq + 256
}

/// Ranks (and exact distances) in `points` of the `kq` queries per row in `queries` (n×kq).
pub async fn certified_ranks(gpu: &Gpu, space: &Space, points: &Points, queries: &[u32], kq: usize, numerics: Numerics, tally: &mut Tally) -> Result<(Vec<u32>, Vec<f64>, RankStats), GpuError> {
    let n = points.n();
    let mut stats = RankStats { queries: (n * kq) as u64, ..Default::default() };
    let mut ranks = vec![0u32; n * kq];
    let dists: Vec<f64> = (0..n * kq).into_par_iter().map(|t| distance_pair(points, t / kq, queries[t] as usize)).collect();
    if kq > KQ_MAX {
        ranks.par_chunks_mut(kq).enumerate().for_each(|(i, out)| cpu_row(points, i, &queries[i * kq..(i + 1) * kq], out));
        stats.rows_recomputed = n as u64;
        return Ok((ranks, dists, stats));
    }
    let cap = cap(kq);
    let per_row_bytes = (cap * 8).max(kq * 4) as u64;
    let per = (gpu.max_rows() as u64).min((gpu.max_output_bytes() / per_row_bytes).max(1)) as usize;
    stats.rows_per_dispatch = per as u32;
    let mut params = Params::new(n, points.dim());
    params.k = kq as u32;
    params.cap = cap as u32;
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let q_block: &[u8] = bytemuck::cast_slice(&queries[row0 * kq..(row0 + rows) * kq]);
        let sizes = [(rows * kq * 4) as u64, (rows * kq * 4) as u64, (rows * cap * 8) as u64, (rows * 4) as u64];
        let out = gpu.run(Kernel::RankCounts, &params, space, &[q_block], &sizes, rows as u32, tally).await?;
        let certain: &[u32] = bytemuck::cast_slice(&out[0]);
        let fast: &[u32] = bytemuck::cast_slice(&out[1]);
        let overlaps: &[[u32; 2]] = bytemuck::cast_slice(&out[2]);
        let ocount: &[u32] = bytemuck::cast_slice(&out[3]);
        let results: Vec<(u64, u64)> = ranks[row0 * kq..(row0 + rows) * kq]
            .par_chunks_mut(kq)
            .enumerate()
            .map(|(r, out)| {
                let i = row0 + r;
                let qs = &queries[i * kq..(i + 1) * kq];
                let c = ocount[r] as usize;
                if c > cap {
                    cpu_row(points, i, qs, out);
                    return (0, 1);
                }
                for q in 0..kq {
                    out[q] = 1 + certain[r * kq + q];
                }
                match numerics {
                    Numerics::Exact => {
                        let qkeys: Vec<u128> = (0..kq).map(|q| key(dists[i * kq + q], qs[q] as usize)).collect();
                        for &[q, l] in &overlaps[r * cap..r * cap + c] {
                            if key(distance_pair(points, i, l as usize), l as usize) < qkeys[q as usize] {
                                out[q as usize] += 1;
                            }
                        }
                    }
                    Numerics::Fast => {
                        for q in 0..kq {
                            out[q] += fast[r * kq + q];
                        }
                    }
                }
                (c as u64, 0)
            })
            .collect();
        for (c, rec) in results {
            stats.overlaps += c;
            stats.rows_recomputed += rec;
        }
    }
    Ok((ranks, dists, stats))
}

fn cpu_row(points: &Points, i: usize, qs: &[u32], out: &mut [u32]) {
    let mut d = vec![0.0; points.n()];
    distance_row(points, i, &mut d);
    count_ranks(&d, i, qs, out, &mut RankScratch::default());
}
