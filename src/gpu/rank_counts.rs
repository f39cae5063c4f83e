//! Host side of certified rank counting: record `rank_counts` for a row block over every point
//! range (the row pass, `pass.rs`, runs the blocks), collect its counts and compacted overlaps,
//! then decide each row's overlaps with the reference's f64 keys (Exact) or take the f32 count
//! (Fast).

use rayon::prelude::*;
use serde::Serialize;

use super::GpuError;
use super::batch::{Batch, Bindings};
use super::bound::Params;
use super::context::Gpu;
use super::exact_sqdist::{self, Entries, ExactRecorded};
use super::prepare::Space;
use super::shaders::{KQ_MAX, Kernel, RANK_INFO, RANK_WG, RANK_WITNESS};
use super::tally::Tally;
use crate::Numerics;
use crate::data::Points;
use crate::reference::{RankScratch, count_ranks, distance_pair, distance_row, key};

/// Points l per dispatch on a software adapter: 24 per invocation of `rank_counts.wgsl`
/// (`RANK_WG` of them), each at most 1 + 2·8 search trips and a walk of at most k ≤ 128
/// positions, so an invocation makes at most about 24 · 145 + 2·128 + 4·128 ≈ 4 300 loop trips,
/// inside driver loop budgets such as Mesa's 65 535.
pub const POINT_CHUNK: usize = 24 * RANK_WG;

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

pub(super) fn cap(kq: usize) -> usize {
    8 * kq + 256
}

/// Bytes per row of the kernel's largest output (the overlap slots, and the dense list that may
/// hold as many), for block planning.
pub(super) fn bytes_per_row(kq: usize) -> u64 {
    (cap(kq) * 8).max(2 * kq * 4).max(RANK_INFO * 4) as u64
}

/// Whether kq queries per row fit the kernel's workgroup memory; beyond it the CPU serves.
pub(super) fn on_device(kq: usize) -> bool {
    kq <= KQ_MAX
}

/// A block's `rank_counts` dispatches (every point range), recorded in a batch: where its
/// readbacks are, and the dense overlap list (read again if it held more than was read).
pub(super) struct RankRecorded {
    rows: usize,
    kq: usize,
    lens: Vec<usize>,
    counts: usize,
    info: usize,
    dense_n: usize,
    dense_read: usize,
    guess: usize,
    dense: wgpu::Buffer,
    fast: bool,
    /// The device's f64 sums (`exact_sqdist`) of the overlaps and of the queries, and the
    /// dimension.
    exact: Option<(ExactRecorded, ExactRecorded, usize)>,
}

/// Records `rank_counts` for the block's `rows` rows (its distances resident in `dist`, its
/// queries `q_block`: rows × kq) over every point range, and the readback of the certain
/// counts (and the Fast counts for the Fast posture), each row's info and the first `guess`
/// overlaps of the dense list. `exact`: the space's f64 coordinates and dimension, when the
/// overlaps' and queries' distances are computed on the device (`exact_sqdist`, same batch).
#[allow(clippy::too_many_arguments)]
pub(super) async fn record_ranks(
    gpu: &Gpu,
    batch: &mut Batch<'_>,
    space: &Space,
    params: &Params,
    dist: &wgpu::Buffer,
    q_block: &[u32],
    rows: usize,
    guess: usize,
    numerics: Numerics,
    exact: Option<(&wgpu::Buffer, usize)>,
    tally: &mut Tally,
) -> Result<RankRecorded, GpuError> {
    let kq = q_block.len() / rows.max(1);
    let mut run = RankRun::begin(gpu, batch, params, q_block, rows, kq, tally);
    run.tile(gpu, batch, space, dist, 0..space.prep.n, false, tally).await?;
    let sums = match exact {
        Some((x64, dim)) => {
            let (row0, guess) = (params.row0 as usize, guess.min(rows * cap(kq)));
            let (info, dense) = (Some(&run.info), &run.dense);
            let overlaps = exact_sqdist::record(
                gpu,
                batch,
                space,
                x64,
                dim,
                Entries::Overlaps,
                info,
                dense,
                row0,
                rows,
                cap(kq),
                guess,
                tally,
            )
            .await?;
            let queries = exact_sqdist::record(
                gpu,
                batch,
                space,
                x64,
                dim,
                Entries::Queries,
                None,
                &run.q,
                row0,
                rows,
                kq,
                rows * kq,
                tally,
            )
            .await?;
            Some((overlaps, queries, dim))
        }
        None => None,
    };
    let mut rec = run.finish(batch, guess, numerics, tally);
    rec.exact = sums;
    Ok(rec)
}

/// A block's `rank_counts` dispatches being recorded: its queries and outputs, which the
/// dispatches of every point range (and, in a streamed plan, of every point tile) accumulate
/// into.
pub(super) struct RankRun {
    p: Params,
    rows: usize,
    kq: usize,
    lens: Vec<usize>,
    q: wgpu::Buffer,
    counts: wgpu::Buffer,
    slots: wgpu::Buffer,
    info: wgpu::Buffer,
    dense_n: wgpu::Buffer,
    dense: wgpu::Buffer,
}

impl RankRun {
    /// The outputs of a block of `rows` rows and `kq` queries each, cleared; `queries` holds
    /// the rows × kq indices and, in a streamed plan (`params.streamed`), then their s̃ bits.
    pub(super) fn begin(
        gpu: &Gpu,
        batch: &mut Batch<'_>,
        params: &Params,
        queries: &[u32],
        rows: usize,
        kq: usize,
        tally: &mut Tally,
    ) -> RankRun {
        let cap = cap(kq);
        let q = gpu.input(bytemuck::cast_slice(queries), tally);
        let counts = gpu.output(batch, (2 * rows * kq * 4) as u64, tally);
        let slots = gpu.output(batch, (rows * cap * 8) as u64, tally);
        let info = gpu.output(batch, (rows * RANK_INFO * 4) as u64, tally);
        let dense_n = gpu.output(batch, 4, tally);
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let dense = gpu.pooled(usage, (rows * cap * 8) as u64, "overlaps", tally);
        for b in [&counts, &info, &dense_n] {
            batch.clear(b);
        }
        let mut p = *params;
        p.k = kq as u32;
        p.cap = cap as u32;
        p.rows = rows as u32;
        RankRun { p, rows, kq, lens: Vec::new(), q, counts, slots, info, dense_n, dense }
    }

    /// Records the dispatches of the points `cols` (every point range of them), whose
    /// distances `dist` holds (rows × `cols.len()`); `more`: tiles follow.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn tile(
        &mut self,
        gpu: &Gpu,
        batch: &mut Batch<'_>,
        space: &Space,
        dist: &wgpu::Buffer,
        cols: std::ops::Range<usize>,
        more: bool,
        tally: &mut Tally,
    ) -> Result<(), GpuError> {
        let n = cols.len();
        let mut p = self.p;
        p.col0 = cols.start as u32;
        p.n = n as u32;
        p.more = u32::from(more);
        let chunk = point_chunk(gpu, n);
        for lo in (0..n).step_by(chunk) {
            (p.lo, p.hi) = (lo as u32, (lo + chunk).min(n) as u32);
            self.lens.push((p.hi - p.lo) as usize);
            let outputs = [&self.counts, &self.slots, &self.info, &self.dense, &self.dense_n];
            let bindings = Bindings { resident: &[dist], inputs: &[&self.q], outputs: &outputs };
            batch.dispatch(Kernel::RankCounts, &p, space, bindings, (self.rows as u32, 1), tally).await?;
        }
        Ok(())
    }

    /// The readbacks of the counts (and the Fast counts for the Fast posture), each row's
    /// info and the first `guess` overlaps of the dense list.
    pub(super) fn finish(
        self,
        batch: &mut Batch<'_>,
        guess: usize,
        numerics: Numerics,
        tally: &mut Tally,
    ) -> RankRecorded {
        let (rows, kq) = (self.rows, self.kq);
        let name = Kernel::RankCounts.name();
        let fast = numerics == Numerics::Fast;
        let count_bytes = if fast { 2 * rows * kq * 4 } else { rows * kq * 4 };
        let guess = guess.min(rows * cap(kq));
        RankRecorded {
            rows,
            kq,
            counts: batch.read(&self.counts, count_bytes as u64, name, tally),
            info: batch.read(&self.info, (rows * RANK_INFO * 4) as u64, name, tally),
            dense_n: batch.read(&self.dense_n, 4, name, tally),
            dense_read: batch.read(&self.dense, (guess * 8) as u64, name, tally),
            lens: self.lens,
            guess,
            dense: self.dense,
            fast,
            exact: None,
        }
    }
}

/// One row block's counts over every l, summed over its point ranges (`point_chunk`).
pub(super) struct RankBlock {
    certain: Vec<u32>,
    fast: Vec<u32>,
    /// Per row, the overlaps the device found (more than `cap` means overflow: not all kept).
    ocount: Vec<u32>,
    /// Per row, its overlaps (q, l).
    overlaps: Vec<Vec<[u32; 2]>>,
    /// Rows whose completeness witness (or their distances') came back short.
    short: Vec<bool>,
    /// Overlaps the device copied to the dense list (what the next block's readback guesses).
    pub total: usize,
    /// Per row, the device's f64 sums of its overlaps, in their order, and of its kq queries;
    /// `None` where the host computes them (not asked, or a witness came back short).
    sums: Vec<Option<Vec<[u32; 2]>>>,
    query_sums: Vec<Option<Vec<[u32; 2]>>>,
}

/// Collects a recorded block from its batch's readbacks `out` (a second read when the dense
/// list held more overlaps than were read), checking each row's witness.
pub(super) async fn collect_ranks(
    gpu: &Gpu,
    rec: RankRecorded,
    out: &[Vec<u8>],
    dist_short: &[bool],
    tally: &mut Tally,
) -> Result<RankBlock, GpuError> {
    let name = Kernel::RankCounts.name();
    let (rows, kq) = (rec.rows, rec.kq);
    let cap = cap(kq);
    let counts: &[u32] = bytemuck::cast_slice(&out[rec.counts]);
    let info: &[[u32; RANK_INFO]] = bytemuck::cast_slice(&out[rec.info]);
    let total = bytemuck::cast_slice::<u8, u32>(&out[rec.dense_n])[0] as usize;
    let first: &[[u32; 2]] = bytemuck::cast_slice(&out[rec.dense_read]);
    // Past the guess: the rest of the overlaps, and of their device sums (same entries).
    let mut more = Vec::new();
    if total > rec.guess {
        let mut batch = gpu.batch();
        let rest = (total.min(rows * cap) - rec.guess) as u64 * 8;
        batch.read_at(&rec.dense, rec.guess as u64 * 8, rest, name, tally);
        if let Some((e, _, _)) = &rec.exact {
            batch.read_at(&e.sums, e.guess as u64 * 8, rest, Kernel::ExactSqDist.name(), tally);
        }
        more = batch.submit(tally).await?.wait(gpu, tally).await?;
    }
    gpu.give_back(rec.dense.clone());
    let rest: &[[u32; 2]] = more.first().map_or(&[], |v| bytemuck::cast_slice(v));
    let sums = rec.exact.as_ref().map(|(e, q, dim)| {
        let overlaps = exact_sqdist::Sums {
            first: bytemuck::cast_slice(&out[e.first]),
            rest: more.get(1).map_or(&[], |v| bytemuck::cast_slice(v)),
            trips: bytemuck::cast_slice(&out[e.trips]),
            dim: *dim,
        };
        let queries = exact_sqdist::Sums {
            first: bytemuck::cast_slice(&out[q.first]),
            rest: &[],
            trips: bytemuck::cast_slice(&out[q.trips]),
            dim: *dim,
        };
        (overlaps, queries)
    });
    let held = first.len() + rest.len();
    let entry = |e: usize| if e < first.len() { first[e] } else { rest[e - first.len()] };
    let t = tally.kernel(name);
    t.pairs += (rows * rec.lens.iter().sum::<usize>()) as u64;
    let mut block = RankBlock {
        certain: counts[..rows * kq].to_vec(),
        fast: if rec.fast { counts[rows * kq..].to_vec() } else { Vec::new() },
        ocount: Vec::with_capacity(rows),
        overlaps: Vec::with_capacity(rows),
        short: Vec::with_capacity(rows),
        total,
        sums: Vec::new(),
        query_sums: Vec::new(),
    };
    for (r, w) in info.iter().enumerate() {
        let witness: &[u32; RANK_WITNESS] = w[..RANK_WITNESS].try_into().expect("witness words");
        t.comparisons += comparisons(witness, w[RANK_WITNESS]);
        let (c, base) = (w[RANK_WITNESS + 1] as usize, w[RANK_WITNESS + 2] as usize);
        let complete = rank_witness_complete(&rec.lens, kq, witness, c as u32, cap);
        let kept = if c <= cap { c } else { 0 };
        let fits = base + kept <= total.min(held);
        block.short.push(dist_short[r] || !complete || !fits);
        block.ocount.push(c as u32);
        block.overlaps.push(if complete && fits { (base..base + kept).map(entry).collect() } else { Vec::new() });
        if let Some((overlaps, queries)) = &sums {
            block.sums.push(if complete && fits { overlaps.row(r, base, kept) } else { None });
            block.query_sums.push(queries.row(r, r * kq, kq));
        }
    }
    if let Some((e, q, _)) = rec.exact {
        gpu.give_back(e.sums);
        gpu.give_back(q.sums);
    }
    Ok(block)
}

/// Refines one collected block into `ranks` (the block's rows × kq, rows `row0..`): the exact
/// rank is 1, plus the certain count, plus the overlaps the reference's f64 key puts before the
/// query (Exact) or the f32 count (Fast); rows that overflowed or whose witness came back short
/// are recomputed on the CPU reference. `queries` and `dists` are the block's (rows × kq): the
/// queries and their exact distances.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine_ranks(
    points: &Points,
    block: &RankBlock,
    row0: usize,
    kq: usize,
    queries: &[u32],
    dists: &[f64],
    numerics: Numerics,
    ranks: &mut [u32],
    stats: &mut RankStats,
    tally: &mut Tally,
) {
    let (n, cap) = (points.n(), cap(kq));
    // Per row: overlaps, recomputed, short, overlaps decided from the device's sums.
    let results: Vec<(u64, u64, u64, u64)> = ranks
        .par_chunks_mut(kq)
        .enumerate()
        .map(|(r, out)| {
            let i = row0 + r;
            let qs = &queries[r * kq..(r + 1) * kq];
            let ov = &block.overlaps[r];
            if block.short[r] || block.ocount[r] as usize > cap {
                cpu_row(points, i, qs, out);
                return (0, 1, u64::from(block.short[r]), 0);
            }
            for q in 0..kq {
                out[q] = 1 + block.certain[r * kq + q];
            }
            match numerics {
                Numerics::Exact => {
                    let qkeys: Vec<u128> = (0..kq).map(|q| key(dists[r * kq + q], qs[q] as usize)).collect();
                    // The device's sums when it computed them (their roots are the reference's
                    // distances), else the host's own.
                    let device = block.sums.get(r).and_then(Option::as_ref);
                    for (t, &[q, l]) in ov.iter().enumerate() {
                        let d = match device {
                            Some(s) => exact_sqdist::root(s[t]),
                            None => distance_pair(points, i, l as usize),
                        };
                        if key(d, l as usize) < qkeys[q as usize] {
                            out[q as usize] += 1;
                        }
                    }
                    if device.is_some() {
                        return (ov.len() as u64, 0, 0, ov.len() as u64);
                    }
                }
                Numerics::Fast => {
                    for q in 0..kq {
                        out[q] += block.fast[r * kq + q];
                    }
                }
            }
            (ov.len() as u64, 0, 0, 0)
        })
        .collect();
    let entry = tally.kernel(Kernel::RankCounts.name());
    let mut on_device = 0;
    for (c, rec, short, device) in results {
        stats.overlaps += c;
        stats.rows_recomputed += rec;
        stats.rows_incomplete += short;
        entry.host_rows_recomputed += rec;
        entry.host_f64_distances += rec * n as u64;
        if numerics == Numerics::Exact {
            entry.host_f64_distances += c - device;
        }
        on_device += device;
    }
    if on_device > 0 {
        tally.kernel(Kernel::ExactSqDist.name()).pairs += on_device;
    }
}

/// Ranks of `queries` (rows × kq) on the CPU reference, for rows `row0..` (kq beyond the
/// kernel's workgroup memory).
pub(super) fn cpu_ranks(
    points: &Points,
    row0: usize,
    kq: usize,
    queries: &[u32],
    ranks: &mut [u32],
    tally: &mut Tally,
) {
    ranks
        .par_chunks_mut(kq)
        .enumerate()
        .for_each(|(r, out)| cpu_row(points, row0 + r, &queries[r * kq..(r + 1) * kq], out));
    let rows = (ranks.len() / kq.max(1)) as u64;
    let entry = tally.kernel(Kernel::RankCounts.name());
    entry.host_rows_recomputed += rows;
    entry.host_f64_distances += rows * points.n() as u64;
}

/// The exact distances of the queries (rows × kq, rows `row0..`), on the host in f64.
pub(super) fn query_distances(points: &Points, row0: usize, kq: usize, queries: &[u32], tally: &mut Tally) -> Vec<f64> {
    tally.kernel(Kernel::RankCounts.name()).host_f64_distances += queries.len() as u64;
    (0..queries.len()).into_par_iter().map(|t| distance_pair(points, row0 + t / kq, queries[t] as usize)).collect()
}

/// [`query_distances`] of a collected block: the roots of the device's sums for the rows it
/// computed them for (`exact_sqdist`), the host's own distances for the others.
pub(super) fn block_query_distances(
    block: &RankBlock,
    points: &Points,
    row0: usize,
    kq: usize,
    queries: &[u32],
    tally: &mut Tally,
) -> Vec<f64> {
    let rows = queries.len() / kq.max(1);
    let device = |r: usize| block.query_sums.get(r).and_then(Option::as_ref);
    let host = (0..rows).filter(|&r| device(r).is_none()).count() * kq;
    tally.kernel(Kernel::RankCounts.name()).host_f64_distances += host as u64;
    if host < queries.len() {
        tally.kernel(Kernel::ExactSqDist.name()).pairs += (queries.len() - host) as u64;
    }
    (0..queries.len())
        .into_par_iter()
        .map(|t| {
            let r = t / kq;
            match device(r) {
                Some(s) => exact_sqdist::root(s[t % kq]),
                None => distance_pair(points, row0 + r, queries[t] as usize),
            }
        })
        .collect()
}

/// The completeness witness of one row of `rank_counts` over ranges of `lens` points (the
/// workgroup's sums of its invocations' loop trips, summed over the ranges on the device):
/// the query loads, the sort's rank loop and the stores (k + k² + k per range), thread 0's two
/// prefix loops (2k per range), the l loop (every point of every range), the binary searches
/// (S trips per search started, S the bit length of k), the overlap walks (every position
/// the walks were to visit), and the copy of the `count` overlaps to the dense list (when they
/// fit the row's `cap` slots). Each loop's trips are only ever short, never over, so a sum that
/// matches means every invocation ran every loop in full.
pub(crate) fn rank_witness_complete(
    lens: &[usize],
    kq: usize,
    w: &[u32; RANK_WITNESS],
    count: u32,
    cap: usize,
) -> bool {
    let ranges = lens.len() as u64;
    let k = kq as u64;
    let points: u64 = lens.iter().map(|&l| l as u64).sum();
    let steps = u64::from(super::twin::search_steps(kq));
    let copied = if count as usize <= cap { u64::from(count) } else { 0 };
    let w: [u64; RANK_WITNESS] = w.map(u64::from);
    w[0] == ranges * (2 * k + k * k)
        && w[1] == ranges * 2 * k
        && w[2] == points
        && w[3] == steps * w[4]
        && w[5] == w[6]
        && w[7] == copied
}

/// The comparisons of point intervals a row's `rank_counts` info records: the binary search
/// steps and the overlap walks (witness words) and the end tests and probes (`straight`).
fn comparisons(w: &[u32; RANK_WITNESS], straight: u32) -> u64 {
    u64::from(w[3]) + u64::from(w[5]) + u64::from(straight)
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
        // Two ranges of 600 and 70 points, k = 20: a complete witness, then each loop one trip short.
        let (lens, k) = ([600usize, 70], 20u32);
        let steps = super::super::twin::search_steps(20);
        let (count, cap) = (12u32, 416);
        let full = [2 * (2 * k + k * k), 2 * 2 * k, 670, steps * 37, 37, 55, 55, count];
        assert!(rank_witness_complete(&lens, 20, &full, count, cap));
        for part in 0..8 {
            let mut cut = full;
            cut[part] -= 1;
            assert!(!rank_witness_complete(&lens, 20, &cut, count, cap), "a short loop ({part}) goes unseen");
        }
        // A search cut to one trip (Mesa's budget exhausted): its sum falls below S per search.
        let mut cut = full;
        cut[3] -= steps - 1;
        assert!(!rank_witness_complete(&lens, 20, &cut, count, cap));
        // An overflowing row copies nothing.
        let mut over = full;
        over[7] = 0;
        assert!(rank_witness_complete(&lens, 20, &over, cap as u32 + 1, cap));
    }
}
