//! Host side of certified kNN: dispatch `knn_candidates` in row blocks, then refine each row's
//! candidates with the reference's f64 keys (Exact) or take the f32 order (Fast).

use rayon::prelude::*;
use serde::Serialize;

use super::bound::Params;
use super::context::Gpu;
use super::dispatch::{Space, Tally};
use super::shaders::Kernel;
use super::GpuError;
use crate::data::Points;
use crate::reference::{distance_pair, distance_row, key, select_knn};
use crate::resources::Neighbours;
use crate::Numerics;

/// Threads per workgroup and the per-thread list length the kernel supports.
const WG: usize = 64;
const KT_MAX: usize = 8;

/// Tallies of certified kNN.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KnnStats {
    pub rows: u64,
    /// Candidates returned by the device (k per row at least).
    pub candidates: u64,
    /// Rows whose candidates overflowed their buffer, recomputed whole on the CPU.
    pub rows_recomputed: u64,
    /// Fast posture: candidates beyond k that f32 alone had to order (0 means certainly exact).
    pub unresolved: u64,
    pub rows_per_dispatch: u32,
}

/// Candidate slots per row.
fn cap(k: usize) -> usize {
    2 * k + 64
}

/// The exact kNN of every point of `points` (already resident as `space`).
pub async fn certified_knn(gpu: &Gpu, space: &Space, points: &Points, k: usize, numerics: Numerics, tally: &mut Tally) -> Result<(Neighbours, KnnStats), GpuError> {
    let n = points.n();
    let mut stats = KnnStats { rows: n as u64, ..Default::default() };
    let mut idx = vec![0u32; n * k];
    let mut dist = vec![0.0f64; n * k];
    if k.div_ceil(WG) > KT_MAX {
        cpu_rows(points, k, 0..n, &mut idx, &mut dist);
        stats.rows_recomputed = n as u64;
        return Ok((Neighbours { k, idx, dist }, stats));
    }
    let cap = cap(k);
    stats.rows_per_dispatch = for_each_block(gpu, space, k, tally, |row0, rows, counts, cands| {
        let block_idx = &mut idx[row0 * k..(row0 + rows) * k];
        let block_dist = &mut dist[row0 * k..(row0 + rows) * k];
        let results: Vec<(u64, u64, u64)> = block_idx
            .par_chunks_mut(k)
            .zip(block_dist.par_chunks_mut(k))
            .enumerate()
            .map(|(r, (ir, dr))| {
                let i = row0 + r;
                let c = counts[r] as usize;
                if c > cap || c < k {
                    cpu_rows(points, k, i..i + 1, ir, dr);
                    return (c.min(cap) as u64, 1, 0);
                }
                let row = &cands[r * cap..r * cap + c];
                match numerics {
                    Numerics::Exact => {
                        let mut keys: Vec<u128> = row.iter().map(|&[j, _]| key(distance_pair(points, i, j as usize), j as usize)).collect();
                        keys.sort_unstable();
                        for (slot, kk) in keys.iter().take(k).enumerate() {
                            let j = (kk & 0xFFFF_FFFF) as usize;
                            ir[slot] = j as u32;
                            dr[slot] = f64::from_bits((kk >> 32) as u64);
                        }
                    }
                    Numerics::Fast => {
                        let mut keys: Vec<(u32, u32)> = row.iter().map(|&[j, s]| (s, j)).collect();
                        keys.sort_unstable();
                        for (slot, &(s, j)) in keys.iter().take(k).enumerate() {
                            ir[slot] = j;
                            dr[slot] = f64::from(f32::from_bits(s)).sqrt() / space.prep.scale;
                        }
                    }
                }
                (c as u64, 0, (c - k) as u64)
            })
            .collect();
        for (c, rec, unres) in results {
            stats.candidates += c;
            stats.rows_recomputed += rec;
            if numerics == Numerics::Fast {
                stats.unresolved += unres;
            }
        }
    })
    .await?;
    Ok((Neighbours { k, idx, dist }, stats))
}

/// Runs `knn_candidates` over all rows in blocks that fit the adapter's limits, handing each
/// block's (first row, rows, counts, candidates) to `f`; returns the rows per dispatch.
async fn for_each_block(gpu: &Gpu, space: &Space, k: usize, tally: &mut Tally, mut f: impl FnMut(usize, usize, &[u32], &[[u32; 2]])) -> Result<u32, GpuError> {
    let (n, cap) = (space.prep.n, cap(k));
    let per = (gpu.max_rows() as u64).min((gpu.max_output_bytes() / (cap as u64 * 8)).max(1)) as usize;
    let mut params = Params::new(n, space.prep.dim);
    params.k = k as u32;
    params.kt = k.div_ceil(WG) as u32;
    params.cap = cap as u32;
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let out = gpu.run(Kernel::KnnCandidates, &params, space, &[], &[rows as u64 * 4, (rows * cap) as u64 * 8], rows as u32, tally).await?;
        f(row0, rows, bytemuck::cast_slice(&out[0]), bytemuck::cast_slice(&out[1]));
    }
    Ok(per as u32)
}

/// The raw output of `knn_candidates` for every row: (count, the stored (j, s̃) pairs), for
/// parity tests against [`super::twin::knn_candidates`]. Needs k ≤ 512.
pub async fn raw_candidates_async(gpu: &Gpu, points: &Points, k: usize) -> Result<Vec<(u32, Vec<(u32, f32)>)>, GpuError> {
    let mut tally = Tally::default();
    let space = gpu.upload(super::prepare::prepare(points), &mut tally)?;
    let cap = cap(k);
    let mut rows_out = Vec::with_capacity(points.n());
    for_each_block(gpu, &space, k, &mut tally, |_, rows, counts, cands| {
        for r in 0..rows {
            let c = counts[r] as usize;
            rows_out.push((counts[r], cands[r * cap..r * cap + c.min(cap)].iter().map(|&[j, s]| (j, f32::from_bits(s))).collect()));
        }
    })
    .await?;
    Ok(rows_out)
}

/// [`raw_candidates_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn raw_candidates(gpu: &Gpu, points: &Points, k: usize) -> Result<Vec<(u32, Vec<(u32, f32)>)>, GpuError> {
    super::block_on(raw_candidates_async(gpu, points, k))
}

/// The kernel parameters `certified_knn` uses (for the twin).
pub fn knn_params(n: usize, dim: usize, k: usize) -> Params {
    let mut params = Params::new(n, dim);
    params.k = k as u32;
    params.kt = k.div_ceil(WG) as u32;
    params.cap = cap(k) as u32;
    params
}

/// Whole rows on the CPU reference (overflow, or k beyond the kernel's reach).
fn cpu_rows(points: &Points, k: usize, rows: std::ops::Range<usize>, idx: &mut [u32], dist: &mut [f64]) {
    let n = points.n();
    let mut d = vec![0.0; n];
    let mut scratch = Vec::new();
    for (r, i) in rows.enumerate() {
        distance_row(points, i, &mut d);
        select_knn(&d, i, k, &mut scratch, &mut idx[r * k..(r + 1) * k], &mut dist[r * k..(r + 1) * k]);
    }
}
