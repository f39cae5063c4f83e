//! Host side of certified kNN: record `knn_candidates` for a row block (the row pass,
//! `pass.rs`, runs the blocks), collect its compacted candidates, then refine each row's
//! candidates with the reference's f64 keys (Exact) or take the f32 order (Fast).

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use super::GpuError;
use super::batch::{Batch, Bindings};
use super::bound::Params;
use super::context::Gpu;
use super::distances::{block_rows, certified_params, record_distances_to};
use super::exact_sqdist::{self, Entries, ExactRecorded};
use super::prepare::Space;
use super::shaders::{KNN_INFO, KT_MAX, Kernel, POOL, WG};
use super::tally::Tally;
use crate::Numerics;
use crate::data::Points;
use crate::reference::{distance_pair, distance_row, key, select_knn};

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
pub(super) fn cap(k: usize) -> usize {
    2 * k + 64
}

/// Bytes per row of the kernel's largest output (the candidate slots, and the dense list that
/// may hold as many), for block planning.
pub(super) fn bytes_per_row(k: usize) -> u64 {
    cap(k) as u64 * 8
}

/// Whether k is within the kernel's reach (⌈k/64⌉ ≤ KT_MAX); beyond it the CPU serves.
pub(super) fn on_device(k: usize) -> bool {
    k.div_ceil(WG) <= KT_MAX
}

/// A block's `knn_candidates` dispatch, recorded in a batch: where its readbacks are, and the
/// dense candidate list (read again if it held more than was read with the batch).
pub(super) struct KnnRecorded {
    rows: usize,
    k: usize,
    tiles: u32,
    info: usize,
    dense_n: usize,
    dense_read: usize,
    /// Candidates read back with the batch (a guess; the rest in a second read).
    guess: usize,
    dense: wgpu::Buffer,
    /// A streamed plan's tile under a carried bound: fewer than k candidates are kept.
    carry: bool,
    /// The candidates' f64 sums of squares from the device (`exact_sqdist`), and the dimension.
    exact: Option<(ExactRecorded, usize)>,
}

/// Records `knn_candidates` for the block's `rows` rows (its distances in `dist`, its tile
/// minima in `minima`, `tiles` per row) and the readback of each row's info and the first
/// `guess` candidates of the dense list. `carried`: a streamed plan's per-row bound over the
/// tiles (rows u32, cleared before the first tile), read and lowered by each tile. `exact`:
/// the space's f64 coordinates and dimension, when the candidates' distances are computed on
/// the device (the same batch, after the candidates).
#[allow(clippy::too_many_arguments)]
pub(super) async fn record_knn(
    gpu: &Gpu,
    batch: &mut Batch<'_>,
    space: &Space,
    params: &Params,
    dist: &wgpu::Buffer,
    minima: Option<&wgpu::Buffer>,
    tiles: u32,
    rows: usize,
    guess: usize,
    carried: Option<&wgpu::Buffer>,
    exact: Option<(&wgpu::Buffer, usize)>,
    tally: &mut Tally,
) -> Result<KnnRecorded, GpuError> {
    let k = params.k as usize;
    let cap = cap(k);
    let mut p = *params;
    p.tiles = if minima.is_some() { tiles } else { 0 };
    p.streamed = u32::from(carried.is_some());
    let name = Kernel::KnnCandidates.name();
    let info = gpu.output(batch, (rows * KNN_INFO * 4) as u64, tally);
    let slots = gpu.output(batch, (rows * cap * 8) as u64, tally);
    let dense_n = gpu.output(batch, 4, tally);
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let dense = gpu.pooled(usage, (rows * cap * 8) as u64, "candidates", tally);
    batch.clear(&info);
    batch.clear(&dense_n);
    // Bindings the dispatch does not read (no minima, no streamed plan) get a 4-byte stand-in.
    let spares = [minima.is_none(), carried.is_none()].map(|none| none.then(|| gpu.output(batch, 4, tally)));
    let minima = minima.or(spares[0].as_ref()).expect("a buffer or its stand-in");
    let carried = carried.or(spares[1].as_ref()).expect("a buffer or its stand-in");
    let outputs = [&info, &slots, &dense, &dense_n, carried];
    let bindings = Bindings { resident: &[dist, minima], inputs: &[], outputs: &outputs };
    batch.dispatch(Kernel::KnnCandidates, &p, space, bindings, (rows as u32, 1), tally).await?;
    let guess = guess.min(rows * cap);
    let exact = match exact {
        Some((x64, dim)) => {
            let row0 = p.row0 as usize;
            let what = Entries::Candidates;
            let rec = exact_sqdist::record(
                gpu,
                batch,
                space,
                x64,
                dim,
                what,
                Some(&info),
                &dense,
                row0,
                rows,
                cap,
                guess,
                tally,
            )
            .await?;
            Some((rec, dim))
        }
        None => None,
    };
    Ok(KnnRecorded {
        rows,
        k,
        tiles: p.tiles,
        info: batch.read(&info, (rows * KNN_INFO * 4) as u64, name, tally),
        dense_n: batch.read(&dense_n, 4, name, tally),
        dense_read: batch.read(&dense, (guess * 8) as u64, name, tally),
        guess,
        dense,
        carry: p.streamed == 1,
        exact,
    })
}

/// One block's kNN candidates, read back.
pub(super) struct KnnBlock {
    /// Per row: the count of candidates (above the cap or below k: the row is recomputed).
    pub count: Vec<u32>,
    /// Per row: its candidates (j, bits of s̃), when kept.
    pub cands: Vec<Vec<[u32; 2]>>,
    /// Rows whose completeness witness (or their distances') came back short.
    pub short: Vec<bool>,
    /// Candidates the device copied to the dense list (what the next block's readback guesses).
    pub total: usize,
    /// The most candidates a row may hold and be refined (more: recomputed on the CPU).
    pub max: usize,
    /// Per row, the device's f64 sums of squares of its candidates (`exact_sqdist`), in their
    /// order; `None` where the host computes them (not asked, or the row's witness came back
    /// short). Empty when the device refined none.
    pub sums: Vec<Option<Vec<[u32; 2]>>>,
}

impl KnnBlock {
    /// The union of one row block's tiles (a streamed plan, `tiles` in the order of the
    /// points): a row's candidates are every tile's, which hold every point within the row's
    /// bound over all n (each tile's τ, carried or its own, is ≥ the row's k-th smallest U),
    /// and a row is recomputed when any tile's count overflowed its cap or came back short, or
    /// the union holds fewer than k (`refine_knn`).
    pub(super) fn unite(tiles: Vec<KnnBlock>) -> KnnBlock {
        let rows = tiles.first().map_or(0, |t| t.count.len());
        let over = u32::MAX as usize;
        let mut u = KnnBlock {
            count: vec![0; rows],
            cands: vec![Vec::new(); rows],
            short: vec![false; rows],
            total: 0,
            max: over - 1,
            sums: Vec::new(),
        };
        for t in tiles {
            u.total += t.total;
            for (r, (c, cands)) in t.count.into_iter().zip(t.cands).enumerate() {
                u.short[r] |= t.short[r];
                let kept = (c as usize) <= t.max;
                if !kept || u.count[r] as usize == over {
                    u.count[r] = over as u32;
                    u.cands[r] = Vec::new();
                } else {
                    u.count[r] += c;
                    u.cands[r].extend(cands);
                }
            }
        }
        u
    }
}

/// Collects a recorded block from its batch's readbacks `out` (a second read when the dense
/// list held more candidates than were read), checking each row's witness; `dist_short` are
/// the rows whose distances came back short.
pub(super) async fn collect_knn(
    gpu: &Gpu,
    rec: KnnRecorded,
    out: &[Vec<u8>],
    dist_short: &[bool],
    n: usize,
    tally: &mut Tally,
) -> Result<KnnBlock, GpuError> {
    let name = Kernel::KnnCandidates.name();
    let info: &[[u32; KNN_INFO]] = bytemuck::cast_slice(&out[rec.info]);
    let total = bytemuck::cast_slice::<u8, u32>(&out[rec.dense_n])[0] as usize;
    let first: &[[u32; 2]] = bytemuck::cast_slice(&out[rec.dense_read]);
    // Past the guess: the rest of the candidates, and of their device sums (same entries).
    let mut more = Vec::new();
    if total > rec.guess {
        let mut batch = gpu.batch();
        let rest = (total.min(rec.rows * cap(rec.k)) - rec.guess) as u64 * 8;
        batch.read_at(&rec.dense, rec.guess as u64 * 8, rest, name, tally);
        if let Some((e, _)) = &rec.exact {
            batch.read_at(&e.sums, e.guess as u64 * 8, rest, Kernel::ExactSqDist.name(), tally);
        }
        more = batch.submit(tally).await?.wait(gpu, tally).await?;
    }
    gpu.give_back(rec.dense.clone());
    let rest: &[[u32; 2]] = more.first().map_or(&[], |v| bytemuck::cast_slice(v));
    let sums = rec.exact.as_ref().map(|(e, dim)| exact_sqdist::Sums {
        first: bytemuck::cast_slice(&out[e.first]),
        rest: more.get(1).map_or(&[], |v| bytemuck::cast_slice(v)),
        trips: bytemuck::cast_slice(&out[e.trips]),
        dim: *dim,
    });
    let entry = |e: usize| if e < first.len() { first[e] } else { rest[e - first.len()] };
    let entry_t = tally.kernel(name);
    entry_t.pairs += (rec.rows * n) as u64;
    let (mut count, mut cands, mut short, mut row_sums) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (r, w) in info.iter().enumerate() {
        let [c, m, base, _, j, _, pool, copy] = w.map(|x| x as usize);
        entry_t.comparisons += (j + pool) as u64;
        let kept = if (c >= rec.k || rec.carry) && c <= cap(rec.k) { c } else { 0 };
        let loads = if rec.carry { rec.k } else { 0 };
        let complete = knn_witness_complete(n, rec.tiles as usize + loads, m, kept, w);
        let fits = base + kept <= total.min(first.len() + rest.len()) && copy == kept;
        // A row whose count, base or copy do not add up is the device's fault: recomputed.
        short.push(dist_short[r] || !complete || !fits);
        count.push(c as u32);
        cands.push(if complete && fits { (base..base + kept).map(entry).collect() } else { Vec::new() });
        if let Some(s) = &sums {
            row_sums.push(if complete && fits && kept > 0 { s.row(r, base, kept) } else { None });
        }
    }
    if let Some((e, _)) = rec.exact {
        gpu.give_back(e.sums);
    }
    Ok(KnnBlock { count, cands, short, total, max: cap(rec.k), sums: row_sums })
}

/// Refines one collected block into rows `row0..` of the lists (`idx`, `dist`: the block's
/// rows × k): each row's candidates re-keyed with the reference's f64 `(d, j)` (Exact) or
/// ordered by the device's f32 (Fast); rows that overflowed, fell short of k candidates or
/// whose witness came back short are recomputed on the CPU reference.
#[allow(clippy::too_many_arguments)]
pub(super) fn refine_knn(
    points: &Points,
    prep: &super::prepare::Prepared,
    params: &Params,
    block: &KnnBlock,
    row0: usize,
    numerics: Numerics,
    idx: &mut [u32],
    dist: &mut [f64],
    stats: &mut KnnStats,
    tally: &mut Tally,
) {
    let k = params.k as usize;
    let cap = cap(k);
    let n = points.n() as u64;
    let results: Vec<(u64, u64, u64, u64, u64, u64)> = idx
        .par_chunks_mut(k)
        .zip(dist.par_chunks_mut(k))
        .enumerate()
        .map(|(r, (ir, dr))| {
            let i = row0 + r;
            let c = block.count[r] as usize;
            if block.short[r] {
                cpu_rows(points, k, i..i + 1, ir, dr);
                return (0, 1, 1, 0, n, 0);
            }
            if c > block.max || c < k {
                cpu_rows(points, k, i..i + 1, ir, dr);
                return (c.min(cap) as u64, 1, 0, 0, n, 0);
            }
            let row = &block.cands[r];
            match numerics {
                Numerics::Exact => {
                    // The device's sums when it computed them (their roots are the reference's
                    // distances), else the host's own.
                    let device = block.sums.get(r).and_then(Option::as_ref);
                    let mut keys: Vec<u128> = match device {
                        Some(s) => {
                            row.iter().zip(s).map(|(&[j, _], &w)| key(exact_sqdist::root(w), j as usize)).collect()
                        }
                        None => {
                            row.iter().map(|&[j, _]| key(distance_pair(points, i, j as usize), j as usize)).collect()
                        }
                    };
                    keys.sort_unstable();
                    for (slot, kk) in keys.iter().take(k).enumerate() {
                        let j = (kk & 0xFFFF_FFFF) as usize;
                        ir[slot] = j as u32;
                        dr[slot] = f64::from_bits((kk >> 32) as u64);
                    }
                    let c = c as u64;
                    if device.is_some() { (c, 0, 0, 0, 0, c) } else { (c, 0, 0, 0, c, 0) }
                }
                Numerics::Fast => {
                    let mut keys: Vec<(u32, u32)> = row.iter().map(|&[j, s]| (s, j)).collect();
                    keys.sort_unstable();
                    for (slot, &(s, j)) in keys.iter().take(k).enumerate() {
                        ir[slot] = j;
                        dr[slot] = prep.distance(f32::from_bits(s));
                    }
                    let eps = |s: f32, j: u32| params.eps_of(s, prep.norms[i], prep.norms[j as usize]);
                    (c as u64, 0, 0, overlapping(&keys, eps), 0, 0)
                }
            }
        })
        .collect();
    let entry = tally.kernel(Kernel::KnnCandidates.name());
    let mut on_device = 0;
    for (c, rec, short, unres, host, device) in results {
        stats.candidates += c;
        stats.rows_recomputed += rec;
        stats.rows_incomplete += short;
        stats.unresolved += unres;
        entry.host_f64_distances += host;
        entry.host_rows_recomputed += rec;
        on_device += device;
    }
    if on_device > 0 {
        tally.kernel(Kernel::ExactSqDist.name()).pairs += on_device;
    }
}

/// The completeness witness of one row of `knn_candidates` (the workgroup's sums `w` of its
/// invocations' trips): the s̃ loops, n trips each, three of them unless τ' came from the
/// tile minima (`w[3]`), two then; the minima loop and the ranking of the threads' values for
/// τ', `tiles` + WG² trips (a streamed plan's k loads of the carried values counted among the
/// `tiles`); the pool ranking, m² trips when the pool held the m values; the
/// copy, the `kept` candidates.
fn knn_witness_complete(n: usize, tiles: usize, m: usize, kept: usize, w: &[u32; KNN_INFO]) -> bool {
    let passes = if w[3] == 1 { 2 } else { 3 };
    let pool = if m <= POOL { (m * m) as u64 } else { 0 };
    u64::from(w[4]) == passes * n as u64
        && w[5] as usize == tiles + WG * WG
        && u64::from(w[6]) == pool
        && w[7] as usize == kept
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

/// The raw output of `knn_candidates` for every row: the count, the candidates (j, s̃) the
/// device copied for the host (none for a row with fewer than k or more than the cap), and
/// whether τ' came from the tile minima; for parity tests against
/// [`super::twin::knn_candidates`]. Needs k ≤ 512.
pub async fn raw_candidates_async(gpu: &Gpu, points: &Points, k: usize) -> Result<Vec<super::twin::KnnRow>, GpuError> {
    raw_candidates_tile_async(gpu, points, k, 0..points.n()).await
}

/// [`raw_candidates_async`] over the points `cols` only (a streamed plan's point tile): each
/// row's candidates among them.
pub async fn raw_candidates_tile_async(
    gpu: &Gpu,
    points: &Points,
    k: usize,
    cols: Range<usize>,
) -> Result<Vec<super::twin::KnnRow>, GpuError> {
    let mut tally = Tally::default();
    let (n, w) = (points.n(), cols.len());
    let space = gpu.upload(super::prepare::prepare_checked(points)?, &mut tally)?;
    let mut params = with_knn(certified_params(gpu, &space.prep)?, k);
    (params.col0, params.n) = (cols.start as u32, w as u32);
    let per = block_rows(gpu, w, bytes_per_row(k));
    let mut rows_out = Vec::with_capacity(n);
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let dist = gpu.scratch((rows * w * 4) as u64, &mut tally);
        let mut batch = gpu.batch();
        let d =
            record_distances_to(gpu, &mut batch, &space, &params, row0, rows, cols.clone(), &dist, &mut tally).await?;
        let rec = record_knn(
            gpu,
            &mut batch,
            &space,
            &params,
            &dist,
            d.minima.as_ref(),
            d.tiles,
            rows,
            rows * k,
            None,
            None,
            &mut tally,
        )
        .await?;
        let out = batch.submit(&mut tally).await?.wait(gpu, &mut tally).await?;
        gpu.give_back(dist);
        let info: Vec<[u32; KNN_INFO]> = bytemuck::cast_slice(&out[rec.info]).to_vec();
        let block = collect_knn(gpu, rec, &out, &d.short(&out), w, &mut tally).await?;
        for (r, cands) in block.cands.iter().enumerate() {
            rows_out.push(super::twin::KnnRow {
                count: block.count[r],
                candidates: cands.iter().map(|&[j, s]| (j, f32::from_bits(s))).collect(),
                from_minima: info[r][3] == 1,
            });
        }
    }
    Ok(rows_out)
}

/// [`raw_candidates_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn raw_candidates(gpu: &Gpu, points: &Points, k: usize) -> Result<Vec<super::twin::KnnRow>, GpuError> {
    super::block_on(raw_candidates_async(gpu, points, k))
}

/// [`raw_candidates_tile_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn raw_candidates_tile(
    gpu: &Gpu,
    points: &Points,
    k: usize,
    cols: Range<usize>,
) -> Result<Vec<super::twin::KnnRow>, GpuError> {
    super::block_on(raw_candidates_tile_async(gpu, points, k, cols))
}

/// The kernel parameters of a kNN pass (for the twin).
pub fn knn_params(n: usize, dim: usize, k: usize) -> Params {
    with_knn(Params::new(n, dim), k)
}

/// `params` with the kNN fields for k neighbours.
pub fn with_knn(mut params: Params, k: usize) -> Params {
    params.k = k as u32;
    params.kt = k.div_ceil(WG) as u32;
    params.cap = cap(k) as u32;
    params
}

/// Whole rows on the CPU reference (overflow, or k beyond the kernel's reach).
pub(super) fn cpu_rows(points: &Points, k: usize, rows: Range<usize>, idx: &mut [u32], dist: &mut [f64]) {
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
        let (n, tiles, m, kept) = (130, 3, 70, 25);
        // Two s̃ passes (τ' from the minima), the minima loop, the pool, the copy.
        let full = [25, m as u32, 0, 1, 2 * n as u32, (tiles + WG * WG) as u32, (m * m) as u32, kept as u32];
        assert!(knn_witness_complete(n, tiles, m, kept, &full));
        for part in 4..8 {
            let mut cut = full;
            cut[part] -= 1;
            assert!(!knn_witness_complete(n, tiles, m, kept, &cut), "a short loop ({part}) goes unseen");
        }
        // τ' from a pass over s̃: three passes expected, two are short.
        let mut three = full;
        three[3] = 0;
        assert!(!knn_witness_complete(n, tiles, m, kept, &three));
        three[4] = 3 * n as u32;
        assert!(knn_witness_complete(n, tiles, m, kept, &three));
        // A pool that overflowed is not ranked: 0 trips expected.
        let mut over = full;
        over[6] = 0;
        assert!(knn_witness_complete(n, tiles, POOL + 1, kept, &over));
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
