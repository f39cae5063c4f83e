//! Host side of certified kNN: dispatch `knn_candidates` in row blocks, then refine each row's
//! candidates with the reference's f64 keys (Exact) or take the f32 order (Fast).

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use super::GpuError;
use super::batch::{Bindings, Submitted};
use super::bound::{Params, strided_trips};
use super::context::Gpu;
use super::distances::{Recorded, block_rows, certified_params, record_distances};
use super::prepare::Space;
use super::shaders::{KT_MAX, Kernel, POOL, WG};
use super::tally::Tally;
use crate::Numerics;
use crate::data::Points;
use crate::reference::{distance_pair, distance_row, key, select_knn};
use crate::resources::Neighbours;

/// Tallies of certified kNN.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KnnStats {
    pub rows: u64,
    /// Candidates returned by the device (k per row at least).
    pub candidates: u64,
    /// Rows whose candidates overflowed their buffer, or that the device did not finish,
    /// recomputed whole on the CPU.
    pub rows_recomputed: u64,
    /// Of those, rows whose completeness witness came back short (the device skipped work).
    pub rows_incomplete: u64,
    /// Fast posture: candidates whose f32 interval [s̃ − ε, s̃ + ε] overlaps another
    /// candidate's, so f32 alone ordered them (0 means the neighbour order is the reference's).
    pub unresolved: u64,
    pub rows_per_dispatch: u32,
}

/// Candidate slots per row.
fn cap(k: usize) -> usize {
    2 * k + 64
}

/// The exact kNN of the points `rows` of `points` (already resident as `space`) among all n:
/// a list of `rows.len()` rows, row `rows.start` first (all rows for `0..n`).
pub async fn certified_knn(
    gpu: &Gpu,
    space: &Space,
    points: &Points,
    k: usize,
    rows: Range<usize>,
    numerics: Numerics,
    tally: &mut Tally,
) -> Result<(Neighbours, KnnStats), GpuError> {
    let m = rows.len();
    let first = rows.start;
    let mut stats = KnnStats { rows: m as u64, ..Default::default() };
    let mut idx = vec![0u32; m * k];
    let mut dist = vec![0.0f64; m * k];
    if k.div_ceil(WG) > KT_MAX {
        cpu_rows(points, k, rows, &mut idx, &mut dist);
        stats.rows_recomputed = m as u64;
        return Ok((Neighbours { k, idx, dist }, stats));
    }
    let cap = cap(k);
    let prep = &space.prep;
    let params = with_knn(Params::new(prep.n, prep.dim).with_extra(prep.abs_extra), k);
    stats.rows_per_dispatch = for_each_block(gpu, space, k, rows, tally, |row0, rows, counts, cands, short| {
        let at = row0 - first;
        let block_idx = &mut idx[at * k..(at + rows) * k];
        let block_dist = &mut dist[at * k..(at + rows) * k];
        let results: Vec<(u64, u64, u64, u64)> = block_idx
            .par_chunks_mut(k)
            .zip(block_dist.par_chunks_mut(k))
            .enumerate()
            .map(|(r, (ir, dr))| {
                let i = row0 + r;
                let c = counts[r][0] as usize;
                if short[r] {
                    cpu_rows(points, k, i..i + 1, ir, dr);
                    return (0, 1, 1, 0);
                }
                if c > cap || c < k {
                    cpu_rows(points, k, i..i + 1, ir, dr);
                    return (c.min(cap) as u64, 1, 0, 0);
                }
                let row = &cands[r * cap..r * cap + c];
                match numerics {
                    Numerics::Exact => {
                        let mut keys: Vec<u128> =
                            row.iter().map(|&[j, _]| key(distance_pair(points, i, j as usize), j as usize)).collect();
                        keys.sort_unstable();
                        for (slot, kk) in keys.iter().take(k).enumerate() {
                            let j = (kk & 0xFFFF_FFFF) as usize;
                            ir[slot] = j as u32;
                            dr[slot] = f64::from_bits((kk >> 32) as u64);
                        }
                        (c as u64, 0, 0, 0)
                    }
                    Numerics::Fast => {
                        let mut keys: Vec<(u32, u32)> = row.iter().map(|&[j, s]| (s, j)).collect();
                        keys.sort_unstable();
                        for (slot, &(s, j)) in keys.iter().take(k).enumerate() {
                            ir[slot] = j;
                            dr[slot] = f64::from(f32::from_bits(s)).sqrt() / prep.scale;
                        }
                        let eps = |s: f32, j: u32| params.eps_of(s, prep.norms[i], prep.norms[j as usize]);
                        (c as u64, 0, 0, overlapping(&keys, eps))
                    }
                }
            })
            .collect();
        for (c, rec, short, unres) in results {
            stats.candidates += c;
            stats.rows_recomputed += rec;
            stats.rows_incomplete += short;
            stats.unresolved += unres;
        }
    })
    .await?;
    Ok((Neighbours { k, idx, dist }, stats))
}

/// Runs `distances` and `knn_candidates` over the rows `rows` in blocks that fit the adapter's
/// limits, handing each block's (first row, rows, (count, pool size) per row, candidates, rows
/// whose witness came back short) to `f`; returns the rows per dispatch. Each block is one
/// batch, submitted before the previous block's results are read and refined (`f`), so the
/// device works on block b + 1 while the host handles block b.
async fn for_each_block(
    gpu: &Gpu,
    space: &Space,
    k: usize,
    rows: Range<usize>,
    tally: &mut Tally,
    mut f: impl FnMut(usize, usize, &[[u32; 2]], &[[u32; 2]], &[bool]),
) -> Result<u32, GpuError> {
    let (n, cap) = (space.prep.n, cap(k));
    let per = block_rows(gpu, n, cap as u64 * 8);
    let mut params = with_knn(certified_params(gpu, &space.prep)?, k);
    let mut pending: Option<(usize, usize, Submitted, Recorded, wgpu::Buffer)> = None;
    let (mut row0, end) = (rows.start, rows.end);
    while row0 < end || pending.is_some() {
        let next = if row0 < end {
            let rows = per.min(end - row0);
            params.row0 = row0 as u32;
            let dist = gpu.scratch((rows * n * 4) as u64, tally);
            let mut batch = gpu.batch();
            let rec = record_distances(gpu, &mut batch, space, &params, row0, rows, &dist, tally).await?;
            let sizes = [rows as u64 * 8, (rows * cap) as u64 * 8, (rows * WG) as u64 * 8];
            let outs: Vec<wgpu::Buffer> = sizes.iter().map(|&s| gpu.output(&mut batch, s, tally)).collect();
            outs.iter().for_each(|o| batch.clear(o));
            let bindings = Bindings { resident: &[&dist], inputs: &[], outputs: &[&outs[0], &outs[1], &outs[2]] };
            batch.dispatch(Kernel::KnnCandidates, &params, space, bindings, (rows as u32, 1), tally).await?;
            for (o, &s) in outs.iter().zip(&sizes) {
                batch.read(o, s, tally);
            }
            let sub = batch.submit(tally).await?;
            let started = (row0, rows, sub, rec, dist);
            row0 += rows;
            Some(started)
        } else {
            None
        };
        if let Some((b0, rows, sub, rec, dist)) = pending.take() {
            let out = sub.wait(gpu, tally).await?;
            gpu.give_back(dist);
            let base = out.len() - 3;
            let counts: &[[u32; 2]] = bytemuck::cast_slice(&out[base]);
            let trips: &[[u32; 2]] = bytemuck::cast_slice(&out[base + 2]);
            let mut short = rec.short(&out);
            for (r, s) in short.iter_mut().enumerate() {
                *s |= !knn_witness_complete(n, counts[r][1] as usize, &trips[r * WG..(r + 1) * WG]);
            }
            f(b0, rows, counts, bytemuck::cast_slice(&out[base + 1]), &short);
        }
        pending = next;
    }
    Ok(per as u32)
}

/// The completeness witness of one row of `knn_candidates`: every invocation ran its three
/// strided j loops in full, and (when the pool held the m values) its pool ranking loop.
fn knn_witness_complete(n: usize, m: usize, trips: &[[u32; 2]]) -> bool {
    trips.iter().enumerate().all(|(tid, &[j, pool])| {
        let want_pool = if m <= POOL { strided_trips(m, tid, WG) as u64 * m as u64 } else { 0 };
        u64::from(j) == 3 * u64::from(strided_trips(n, tid, WG)) && u64::from(pool) == want_pool
    })
}

/// Fast posture: how many of the (s̃, j)-sorted candidates have an f32 interval
/// [s̃ − ε, s̃ + ε] that meets another candidate's. When none does, every pair among them is
/// decided by the bound (with the margin that makes f64 square roots keep the order), and every
/// non-candidate is certainly after them, so the f32 order is the reference's.
fn overlapping(sorted: &[(u32, u32)], eps: impl Fn(f32, u32) -> f32) -> u64 {
    let iv: Vec<(f32, f32)> = sorted
        .iter()
        .map(|&(s, j)| {
            let s = f32::from_bits(s);
            let e = eps(s, j);
            (s - e, s + e)
        })
        .collect();
    // Sorted by s̃, L and U need not be sorted; compare each with the largest U before it and
    // the smallest L after it.
    let mut min_l_after = vec![f32::INFINITY; iv.len() + 1];
    for p in (0..iv.len()).rev() {
        min_l_after[p] = min_l_after[p + 1].min(iv[p].0);
    }
    let mut max_u_before = f32::NEG_INFINITY;
    let mut count = 0;
    for (p, &(l, u)) in iv.iter().enumerate() {
        // Decided only if U_before < L and U < L_after (NaN: undecided).
        if !(max_u_before < l && u < min_l_after[p + 1]) {
            count += 1;
        }
        max_u_before = max_u_before.max(u);
    }
    count
}

/// The raw output of `knn_candidates` for every row: (count, the stored (j, s̃) pairs), for
/// parity tests against [`super::twin::knn_candidates`]. Needs k ≤ 512.
pub async fn raw_candidates_async(
    gpu: &Gpu,
    points: &Points,
    k: usize,
) -> Result<Vec<(u32, Vec<(u32, f32)>)>, GpuError> {
    let mut tally = Tally::default();
    let space = gpu.upload(super::prepare::prepare_checked(points)?, &mut tally)?;
    let cap = cap(k);
    let mut rows_out = Vec::with_capacity(points.n());
    for_each_block(gpu, &space, k, 0..points.n(), &mut tally, |_, rows, counts, cands, _| {
        for r in 0..rows {
            let c = counts[r][0] as usize;
            rows_out.push((
                counts[r][0],
                cands[r * cap..r * cap + c.min(cap)].iter().map(|&[j, s]| (j, f32::from_bits(s))).collect(),
            ));
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
    with_knn(Params::new(n, dim), k)
}

/// `params` with the kNN fields for k neighbours.
fn with_knn(mut params: Params, k: usize) -> Params {
    params.k = k as u32;
    params.kt = k.div_ceil(WG) as u32;
    params.cap = cap(k) as u32;
    params
}

/// Whole rows on the CPU reference (overflow, or k beyond the kernel's reach).
fn cpu_rows(points: &Points, k: usize, rows: Range<usize>, idx: &mut [u32], dist: &mut [f64]) {
    let n = points.n();
    let mut d = vec![0.0; n];
    let mut scratch = Vec::new();
    for (r, i) in rows.enumerate() {
        distance_row(points, i, &mut d);
        select_knn(&d, i, k, &mut scratch, &mut idx[r * k..(r + 1) * k], &mut dist[r * k..(r + 1) * k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knn_witness_checks_every_loop() {
        let (n, m) = (130, 70);
        let full: Vec<[u32; 2]> =
            (0..WG).map(|t| [3 * strided_trips(n, t, WG), strided_trips(m, t, WG) * m as u32]).collect();
        assert!(knn_witness_complete(n, m, &full));
        for (tid, part) in [(0, 0), (63, 0), (5, 1)] {
            let mut cut = full.clone();
            cut[tid][part] -= 1;
            assert!(!knn_witness_complete(n, m, &cut), "a short loop of thread {tid} goes unseen");
        }
        // A pool that overflowed is not ranked: 0 trips expected.
        let over: Vec<[u32; 2]> = full.iter().map(|&[j, _]| [j, 0]).collect();
        assert!(knn_witness_complete(n, POOL + 1, &over));
    }

    #[test]
    fn overlapping_counts_every_candidate_an_interval_meets() {
        let eps = |_: f32, _: u32| 0.1f32;
        let key = |s: f32, j: u32| (s.to_bits(), j);
        assert_eq!(overlapping(&[key(1.0, 0), key(2.0, 1), key(3.0, 2)], eps), 0);
        assert_eq!(overlapping(&[key(1.0, 0), key(1.1, 1), key(3.0, 2)], eps), 2);
        assert_eq!(overlapping(&[key(1.0, 0), key(2.0, 1)], |_, _| f32::NAN), 2, "NaN is undecided");
    }
}
