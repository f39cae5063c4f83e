//! The GPU counterpart of [`crate::resources::row_pass`]: the same resources, bit for bit,
//! built from certified kernels and host refinement.

pub mod streamed;

use std::ops::Range;

use serde::Serialize;

use super::GpuError;
use super::bound::Params;
use super::context::{Gpu, Refine};
use super::distances::{Recorded, block_rows, certified_params, record_distances};
use super::exact_sqdist;
use super::knn_candidates::{
    KnnBlock, KnnRecorded, KnnStats, collect_knn, cpu_rows, on_device as on_device_knn, record_knn, refine_knn,
    with_knn,
};
use super::prepare::Space;
use super::prepare::prepare_checked;
use super::rank_counts::{
    RankRecorded, RankStats, block_query_distances, collect_ranks, cpu_ranks, on_device as on_device_ranks,
    query_distances, record_ranks, refine_ranks,
};
use super::shaders::Kernel;
use super::tally::Tally;
use crate::Numerics;
use crate::data::Points;
use crate::resources::{CrossRanks, LowIndexReport, Needs, Neighbours, PassOutput, PassStats, ProjectionResources};

/// What the GPU did, for the run report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GpuStats {
    /// The squared-distance kernel that served, and its tile sizes (tiled only).
    pub kernel_set: super::KernelSet,
    pub tiles: Option<super::Tiles>,
    pub knn: KnnStats,
    pub ranks: RankStats,
    pub transfers: Tally,
    /// Host refinement and CPU recomputation, seconds.
    pub refine_s: f64,
    /// The streamed plan's shape, when a pass streamed (row blocks × point tiles).
    pub streamed: Option<streamed::Tiling>,
    /// Where the pairs f32 left undecided got their f64 distances (`GpuRequest::refine`):
    /// `device` when every space of the pass was refined there.
    pub refine: Refine,
    /// Why a space was refined on the host although the device was asked for.
    pub refine_reason: Option<String>,
}

impl GpuStats {
    /// Empty stats naming `gpu`'s kernel set and tiles.
    pub fn for_gpu(gpu: &Gpu) -> Self {
        let kernel_set = gpu.request.kernels;
        GpuStats {
            kernel_set,
            tiles: (kernel_set == super::KernelSet::Tiled).then_some(gpu.tiles),
            ..Default::default()
        }
    }
}

/// First `kc` neighbours of the rows `rows` of `nb`, as a query list (`rows.len()`×kc).
fn prefix(nb: &Neighbours, kc: usize, rows: Range<usize>) -> Vec<u32> {
    rows.flat_map(|i| nb.row(i, kc).iter().copied()).collect()
}

/// Builds the resources of `needs` on the GPU (see [`crate::resources::row_pass`]).
pub async fn gpu_row_pass_async(
    gpu: &Gpu,
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    numerics: Numerics,
) -> Result<(PassOutput, GpuStats), GpuError> {
    gpu_row_pass_rows_async(gpu, high, cached_high, lows, needs, numerics, 0..high.n()).await
}

/// [`gpu_row_pass_async`] over the rows `rows` only (a row shard, as
/// [`crate::resources::row_pass_rows`]): rows `rows` are queried against all n points, the
/// lists hold `rows.len()` rows, row `rows.start` first, each row the same bits as in a full
/// pass. `cached_high` holds all n rows.
///
/// One pass over the row blocks per projection (`blocks::run`): each block's distances are
/// computed once per space and stay resident while both spaces' kNN and then the cross ranks
/// in both directions are taken from them.
pub async fn gpu_row_pass_rows_async(
    gpu: &Gpu,
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    numerics: Numerics,
    rows: Range<usize>,
) -> Result<(PassOutput, GpuStats), GpuError> {
    let t0 = web_time::Instant::now();
    // The device builds cross ranks in both directions; the projection-only ones are among them.
    let needs = needs.cross_both();
    let ks = needs.pass_ks(lows.len());
    let (kh, kl, kc) = (ks.kh, ks.kl, ks.kc);
    let cached = ks.usable(cached_high);
    let mut stats = GpuStats::for_gpu(gpu);
    let mut tally = Tally::default();
    let fresh_wanted = kh > 0 && cached.is_none();
    let need_high_space = kc > 0 || fresh_wanted;
    stats.refine = gpu.request.refine;
    let entries = super::knn_candidates::cap(kh.max(kl)).max(super::rank_counts::cap(kc));
    let high_space =
        if need_high_space { Some(On::upload(gpu, high, entries, numerics, &mut stats, &mut tally)?) } else { None };
    let mut fresh_high: Option<Neighbours> = None;
    let mut out_lows = Vec::with_capacity(lows.len());
    if kl == 0 {
        if fresh_wanted {
            let plan = Plan { x: high_space.as_ref(), y: None, kx: kh, ky: 0, kc: 0, cached_x: None };
            fresh_high = run(gpu, &plan, rows.clone(), numerics, &mut stats, &mut tally).await?.knn_x;
        }
        out_lows.resize_with(lows.len(), ProjectionResources::default);
    } else {
        for low in lows {
            let low_space = On::upload(gpu, low, entries, numerics, &mut stats, &mut tally)?;
            let kx = if fresh_wanted && fresh_high.is_none() { kh } else { 0 };
            // The original space's lists for the queries ranked in the projection: all n rows
            // when cached, this shard's when built by an earlier projection's pass.
            let cached_x = match (cached, &fresh_high) {
                (Some(c), _) => Some((c, rows.start)),
                (None, Some(f)) => Some((f, 0)),
                (None, None) => None,
            };
            let x = (kc > 0 || kx > 0).then_some(()).and(high_space.as_ref());
            let plan = Plan { x, y: Some(&low_space), kx, ky: kl, kc, cached_x };
            let out = run(gpu, &plan, rows.clone(), numerics, &mut stats, &mut tally).await?;
            if kx > 0 {
                fresh_high = out.knn_x;
            }
            out_lows.push(ProjectionResources { knn: out.knn_y, cross: out.cross });
        }
    }
    stats.transfers = tally;
    stats.refine_s =
        (t0.elapsed().as_secs_f64() - stats.transfers.upload_s - stats.transfers.kernel_and_readback_s).max(0.0);
    let pass = PassStats {
        block_rows: stats.knn.rows_per_dispatch as usize,
        blocks: stats.transfers.dispatches as usize,
        distance_rows: 0,
        ranks_from_knn: 0,
        ranks_counted: stats.ranks.queries,
        rank_scans: stats.ranks.rows_recomputed,
        ranks_from_table: 0,
        ..PassStats::default()
    };
    let low_index = lows
        .iter()
        .filter(|_| kl > 0)
        .map(|_| LowIndexReport { path: "rows", reason: "the GPU serves the projection's rows".into() })
        .collect();
    let out = PassOutput {
        high: fresh_high,
        lows: out_lows,
        stats: pass,
        extents: Default::default(),
        low_index,
        coranking: Vec::new(),
        high_rows: None,
    };
    Ok((out, stats))
}

/// A space of the pass: its points, resident on the device, and its bound's constants.
struct On<'a> {
    points: &'a Points,
    space: Space,
    params: Params,
    /// Whether its undecided pairs are refined on the device, and its f64 coordinates there
    /// (uploaded when a row plan first needs them; a streamed plan refines on the host).
    on_device: bool,
    x64: std::sync::OnceLock<wgpu::Buffer>,
}

impl<'a> On<'a> {
    /// `entries`: the most pairs one row may hand the device's refinement (its kernels' caps).
    fn upload(
        gpu: &Gpu,
        points: &'a Points,
        entries: usize,
        numerics: Numerics,
        stats: &mut GpuStats,
        tally: &mut Tally,
    ) -> Result<Self, GpuError> {
        let space = gpu.upload(prepare_checked(points)?, tally)?;
        // The prepared space's bound: a cosine or correlation space's extra term included.
        let params = certified_params(gpu, &space.prep)?;
        let why = match (gpu.request.refine, numerics) {
            (Refine::Host, _) => None,
            (Refine::Device, Numerics::Fast) => Some("the Fast posture refines nothing in f64".to_string()),
            (Refine::Device, Numerics::Exact) => exact_sqdist::unserved(gpu, points, entries),
        };
        if let Some(why) = why {
            stats.refine = Refine::Host;
            stats.refine_reason.get_or_insert(why);
        }
        let on_device = gpu.request.refine == Refine::Device && stats.refine == Refine::Device;
        Ok(On { points, space, params, on_device, x64: std::sync::OnceLock::new() })
    }

    /// The device's refinement of this space in a row plan, when it serves: its coordinates
    /// (uploaded on first use) and dimension.
    fn exact(&self, gpu: &Gpu, tally: &mut Tally) -> Option<(&wgpu::Buffer, usize)> {
        if !self.on_device {
            return None;
        }
        let x64 = self.x64.get_or_init(|| exact_sqdist::upload(gpu, self.points, tally));
        Some((x64, self.points.dim()))
    }
}

/// What one pass over the row blocks computes: the kNN of the original space `x` (kx, 0: none)
/// and of the projection `y` (ky), and the cross ranks of kc queries per row in both
/// directions (the projection's neighbours ranked in x, the original's in y).
struct Plan<'p, 'a> {
    x: Option<&'p On<'a>>,
    y: Option<&'p On<'a>>,
    kx: usize,
    ky: usize,
    kc: usize,
    /// The original space's lists when this pass does not build them, and the list row of the
    /// pass's first row.
    cached_x: Option<(&'p Neighbours, usize)>,
}

/// What a pass built.
struct Built {
    knn_x: Option<Neighbours>,
    knn_y: Option<Neighbours>,
    cross: Option<CrossRanks>,
}

/// A pass's tables for m rows while it fills them: both spaces' lists (indices, distances),
/// then the cross ranks and their distances in x and in y.
struct Tables {
    x: (Vec<u32>, Vec<f64>),
    y: (Vec<u32>, Vec<f64>),
    ranks: [Vec<u32>; 2],
    dists: [Vec<f64>; 2],
}

impl Tables {
    fn new(m: usize, plan: &Plan<'_, '_>) -> Tables {
        let (kx, ky, kc) = (plan.kx, plan.ky, plan.kc);
        Tables {
            x: (vec![0; m * kx], vec![0.0; m * kx]),
            y: (vec![0; m * ky], vec![0.0; m * ky]),
            ranks: [vec![0; m * kc], vec![0; m * kc]],
            dists: [vec![0.0; m * kc], vec![0.0; m * kc]],
        }
    }

    fn built(self, plan: &Plan<'_, '_>) -> Built {
        let (kx, ky, kc) = (plan.kx, plan.ky, plan.kc);
        let [rank_high_of_low, rank_low_of_high] = self.ranks;
        let [dist_high_of_low, dist_low_of_high] = self.dists;
        Built {
            knn_x: (kx > 0).then_some(Neighbours { k: kx, idx: self.x.0, dist: self.x.1 }),
            knn_y: (ky > 0).then_some(Neighbours { k: ky, idx: self.y.0, dist: self.y.1 }),
            cross: (kc > 0).then_some(CrossRanks {
                k: kc,
                rank_high_of_low,
                rank_low_of_high,
                dist_high_of_low,
                dist_low_of_high,
            }),
        }
    }
}

/// Distance buffers resident at a time per space (two blocks in flight).
const SETS: usize = 2;

/// One space's part of a block in flight.
struct Side {
    dist: wgpu::Buffer,
    rec: Recorded,
    knn: Option<KnnRecorded>,
    /// Rows whose distances came back short (after stage 1).
    short: Vec<bool>,
    ranks: Option<RankRecorded>,
}

/// A row block in flight: stage 1 (distances, kNN candidates) or stage 2 (rank counts).
struct InFlight {
    row0: usize,
    rows: usize,
    x: Option<Side>,
    y: Option<Side>,
    sub: Option<super::batch::Submitted>,
    stage2: bool,
    /// Stage 2: the queries ranked in x (the projection's neighbours) and in y.
    q_x: Vec<u32>,
    q_y: Vec<u32>,
}

/// Candidates and overlaps read back with each batch: the last block's count per row, plus a
/// quarter, plus a margin (a block that holds more reads the rest in a second step).
fn guess(total: usize, rows_before: usize, rows: usize, start: usize) -> usize {
    if rows_before == 0 {
        return rows * start;
    }
    (total * 5 / 4).div_ceil(rows_before) * rows + 64
}

/// Runs `plan` over the rows `rows` in row blocks: stage 1 computes each needed space's
/// distances (the projection's first, its kNN first) and kNN candidates in one batch; the host
/// refines the kNN; stage 2 ranks each row's queries in both spaces from the same resident
/// distances. Two blocks' distances are resident at a time, and a new block's stage 1 is
/// submitted as soon as one is free, so the device works while the host refines.
async fn run(
    gpu: &Gpu,
    plan: &Plan<'_, '_>,
    rows: Range<usize>,
    numerics: Numerics,
    stats: &mut GpuStats,
    tally: &mut Tally,
) -> Result<Built, GpuError> {
    let m = rows.len();
    let n = plan.x.or(plan.y).map_or(0, |s| s.points.n());
    let spaces = usize::from(plan.x.is_some()) + usize::from(plan.y.is_some());
    let (kx, ky, kc) = (plan.kx, plan.ky, plan.kc);
    let Tables { x: mut lists_x, y: mut lists_y, mut ranks, mut dists } = Tables::new(m, plan);
    let per_row = [
        super::knn_candidates::bytes_per_row(kx),
        super::knn_candidates::bytes_per_row(ky),
        super::rank_counts::bytes_per_row(kc),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let resident = gpu.request.resident_bytes.unwrap_or(super::context::RESIDENT_BYTES);
    let resident_rows = (resident / (SETS * spaces.max(1) * n.max(1) * 4) as u64).max(1) as usize;
    let per = block_rows(gpu, n, per_row).min(resident_rows).max(1);
    let shape = streamed::tiling(gpu, n, per_row, per, kx.max(ky).max(kc), resident);
    let per = shape.map_or(per, |s| s.rows);
    for (k, on) in [(kx, plan.x), (ky, plan.y)] {
        if k > 0 && on.is_some() {
            stats.knn.rows += m as u64;
            stats.knn.rows_per_dispatch = stats.knn.rows_per_dispatch.max(per as u32);
        }
    }
    if kc > 0 {
        stats.ranks.queries += 2 * (m * kc) as u64;
        stats.ranks.rows_per_dispatch = stats.ranks.rows_per_dispatch.max(per as u32);
    }
    if let Some(shape) = shape {
        stats.streamed = Some(shape);
        if stats.refine == Refine::Device {
            stats.refine = Refine::Host;
            stats.refine_reason.get_or_insert_with(|| "the streamed plan refines on the host".into());
        }
        return streamed::run(gpu, plan, rows, numerics, shape, stats, tally).await;
    }
    let (mut knn_seen, mut rank_seen) = ((0usize, 0usize), (0usize, 0usize));
    let mut ahead = Ahead { queue: Default::default(), live: 0, next: rows.start, end: rows.end, per };
    loop {
        ahead.fill(gpu, plan, knn_seen, tally).await?;
        let Some(mut b) = ahead.queue.pop_front() else { break };
        let out = b.sub.take().expect("submitted").wait(gpu, tally).await?;
        let at = b.row0 - rows.start;
        if !b.stage2 {
            // Stage 1 done: collect both spaces' kNN candidates.
            // Per space: no kNN wanted (None), the CPU serves (Some(None)), or the device's
            // candidates (Some(Some)).
            let mut blocks: [Option<Option<KnnBlock>>; 2] = [None, None];
            for (slot, side, k) in [(0, &mut b.y, ky), (1, &mut b.x, kx)] {
                let Some(side) = side.as_mut() else { continue };
                side.short = side.rec.short(&out);
                if k == 0 {
                    continue;
                }
                blocks[slot] = Some(match side.knn.take() {
                    Some(rec) => {
                        let block = collect_knn(gpu, rec, &out, &side.short, n, tally).await?;
                        knn_seen = (knn_seen.0 + block.total, knn_seen.1 + b.rows);
                        Some(block)
                    }
                    None => None,
                });
            }
            // Nothing more reads this block's distances when no ranks are wanted: the set takes
            // the next block while the host refines.
            let (row0, count) = (b.row0, b.rows);
            let kept = if kc == 0 {
                ahead.release(gpu, b);
                ahead.fill(gpu, plan, knn_seen, tally).await?;
                None
            } else {
                Some(b)
            };
            let [block_y, block_x] = blocks;
            for (block, on, k, lists) in [(block_y, plan.y, ky, &mut lists_y), (block_x, plan.x, kx, &mut lists_x)] {
                let (Some(done), Some(on)) = (block, on) else { continue };
                let lists = (&mut lists.0[at * k..(at + count) * k], &mut lists.1[at * k..(at + count) * k]);
                fill_knn(on, k, done, row0..row0 + count, lists, numerics, stats, tally);
            }
            let Some(mut b) = kept else { continue };
            // Stage 2: the projection's neighbours ranked in x, the original's in y.
            let (x, y) = (plan.x.expect("cross ranks need both spaces"), plan.y.expect("cross ranks need both spaces"));
            (b.q_x, b.q_y) = (queries_x(plan, &lists_y.0, at, b.rows), queries_y(plan, &lists_x.0, at, b.rows));
            if !on_device_ranks(kc) {
                for (t, on, q) in [(0, x, &b.q_x), (1, y, &b.q_y)] {
                    let range = at * kc..(at + b.rows) * kc;
                    cpu_ranks(on.points, b.row0, kc, q, &mut ranks[t][range.clone()], tally);
                    dists[t][range].copy_from_slice(&query_distances(on.points, b.row0, kc, q, tally));
                    stats.ranks.rows_recomputed += b.rows as u64;
                }
                ahead.release(gpu, b);
                continue;
            }
            let guess_r = guess(rank_seen.0, rank_seen.1, b.rows, 4);
            let mut batch = gpu.batch();
            for (side, on, q) in [(&mut b.x, x, &b.q_x), (&mut b.y, y, &b.q_y)] {
                let side = side.as_mut().expect("both spaces resident");
                let mut p = on.params;
                p.row0 = b.row0 as u32;
                side.ranks = Some(
                    record_ranks(
                        gpu,
                        &mut batch,
                        &on.space,
                        &p,
                        &side.dist,
                        q,
                        b.rows,
                        guess_r,
                        numerics,
                        on.exact(gpu, tally),
                        tally,
                    )
                    .await?,
                );
            }
            b.sub = Some(batch.submit(tally).await?);
            b.stage2 = true;
            ahead.queue.push_back(b);
            continue;
        }
        // Stage 2 done: collect, free the block's distances (and start the next block), refine.
        let mut collected = Vec::with_capacity(2);
        for side in [&mut b.x, &mut b.y] {
            let side = side.as_mut().expect("both spaces resident");
            let rec = side.ranks.take().expect("recorded");
            let block = collect_ranks(gpu, rec, &out, &side.short, tally).await?;
            rank_seen = (rank_seen.0 + block.total, rank_seen.1 + b.rows);
            collected.push(block);
        }
        let (row0, count) = (b.row0, b.rows);
        let (q_x, q_y) = (std::mem::take(&mut b.q_x), std::mem::take(&mut b.q_y));
        ahead.release(gpu, b);
        // The freed set takes the next block before the host refines this one, so the device
        // works while the host does (the H200 receipt of 2026-12-04: refinement and the wait
        // for the device added up, 0.55 + 0.95 s of a 1.58 s evaluation).
        ahead.fill(gpu, plan, knn_seen, tally).await?;
        let (x, y) = (plan.x.expect("both spaces"), plan.y.expect("both spaces"));
        for (t, (block, on, q)) in collected.iter().zip([(x, &q_x), (y, &q_y)]).map(|(b, (o, q))| (b, o, q)).enumerate()
        {
            let range = at * kc..(at + count) * kc;
            let d = block_query_distances(block, on.points, row0, kc, q, tally);
            refine_ranks(
                on.points,
                block,
                row0,
                kc,
                q,
                &d,
                numerics,
                &mut ranks[t][range.clone()],
                &mut stats.ranks,
                tally,
            );
            dists[t][range].copy_from_slice(&d);
        }
    }
    Ok(Tables { x: lists_x, y: lists_y, ranks, dists }.built(plan))
}

/// The kNN in `on` of the rows `rows` into `lists` (rows × k): refined from the device's
/// candidates (`done`), or computed on the CPU reference where the kernel could not serve.
#[allow(clippy::too_many_arguments)]
fn fill_knn(
    on: &On<'_>,
    k: usize,
    done: Option<KnnBlock>,
    rows: Range<usize>,
    lists: (&mut [u32], &mut [f64]),
    numerics: Numerics,
    stats: &mut GpuStats,
    tally: &mut Tally,
) {
    let (idx, dist) = lists;
    match done {
        Some(block) => {
            let (params, prep) = (with_knn(on.params, k), &on.space.prep);
            refine_knn(on.points, prep, &params, &block, rows.start, numerics, idx, dist, &mut stats.knn, tally);
        }
        None => {
            let count = rows.len() as u64;
            cpu_rows(on.points, k, rows, idx, dist);
            stats.knn.rows_recomputed += count;
            let e = tally.kernel(Kernel::KnnCandidates.name());
            e.host_rows_recomputed += count;
            e.host_f64_distances += count * on.points.n() as u64;
        }
    }
}

/// The queries ranked in x of the `rows` rows from list row `at` on: the projection's first kc
/// neighbours (`lists_y`).
fn queries_x(plan: &Plan<'_, '_>, lists_y: &[u32], at: usize, rows: usize) -> Vec<u32> {
    let (ky, kc) = (plan.ky, plan.kc);
    (0..rows).flat_map(|r| lists_y[(at + r) * ky..(at + r) * ky + kc].iter().copied()).collect()
}

/// The queries ranked in y of the same rows: the original space's first kc neighbours (cached,
/// or this pass's `lists_x`).
fn queries_y(plan: &Plan<'_, '_>, lists_x: &[u32], at: usize, rows: usize) -> Vec<u32> {
    let (kx, kc) = (plan.kx, plan.kc);
    match plan.cached_x {
        Some((c, first)) => prefix(c, kc, first + at..first + at + rows),
        None => (0..rows).flat_map(|r| lists_x[(at + r) * kx..(at + r) * kx + kc].iter().copied()).collect(),
    }
}

/// Records one space's stage 1 of the block at `row0`: its distances into a resident buffer
/// and, when its kNN is wanted (k > 0) and within the kernel's reach, `knn_candidates`.
#[allow(clippy::too_many_arguments)]
async fn start_side(
    gpu: &Gpu,
    batch: &mut super::batch::Batch<'_>,
    on: Option<&On<'_>>,
    k: usize,
    row0: usize,
    rows: usize,
    guess: usize,
    tally: &mut Tally,
) -> Result<Option<Side>, GpuError> {
    let Some(on) = on else { return Ok(None) };
    let n = on.points.n();
    let mut p = on.params;
    p.row0 = row0 as u32;
    let dist = gpu.scratch((rows * n * 4) as u64, tally);
    let rec = record_distances(gpu, batch, &on.space, &p, row0, rows, &dist, tally).await?;
    let knn = if k > 0 && on_device_knn(k) {
        let mut kp = with_knn(on.params, k);
        kp.row0 = row0 as u32;
        Some(
            record_knn(
                gpu,
                batch,
                &on.space,
                &kp,
                &dist,
                rec.minima.as_ref(),
                rec.tiles,
                rows,
                guess,
                None,
                on.exact(gpu, tally),
                tally,
            )
            .await?,
        )
    } else {
        None
    };
    Ok(Some(Side { dist, rec, knn, short: Vec::new(), ranks: None }))
}

/// The blocks in flight, in submission order, and the rows not yet started.
struct Ahead {
    queue: std::collections::VecDeque<InFlight>,
    /// Blocks holding a set of resident distance buffers.
    live: usize,
    next: usize,
    end: usize,
    /// Rows per block.
    per: usize,
}

impl Ahead {
    /// Starts the next blocks (stage 1: distances and kNN candidates, the projection's first,
    /// whose kNN gives the queries ranked in the original space) while sets are free.
    async fn fill(
        &mut self,
        gpu: &Gpu,
        plan: &Plan<'_, '_>,
        knn_seen: (usize, usize),
        tally: &mut Tally,
    ) -> Result<(), GpuError> {
        while self.live < SETS && self.next < self.end {
            let (next, count) = (self.next, self.per.min(self.end - self.next));
            let guess_k = guess(knn_seen.0, knn_seen.1, count, plan.kx.max(plan.ky) + 8);
            let mut batch = gpu.batch();
            let y = start_side(gpu, &mut batch, plan.y, plan.ky, next, count, guess_k, tally).await?;
            let x = start_side(gpu, &mut batch, plan.x, plan.kx, next, count, guess_k, tally).await?;
            let sub = batch.submit(tally).await?;
            self.queue.push_back(InFlight {
                row0: next,
                rows: count,
                x,
                y,
                sub: Some(sub),
                stage2: false,
                q_x: Vec::new(),
                q_y: Vec::new(),
            });
            self.live += 1;
            self.next += count;
        }
        Ok(())
    }

    /// Hands a finished block's distance buffers back to the pool, freeing its set.
    fn release(&mut self, gpu: &Gpu, b: InFlight) {
        for side in [b.x, b.y].into_iter().flatten() {
            gpu.give_back(side.dist);
        }
        self.live -= 1;
    }
}

/// [`gpu_row_pass_async`], blocking: [`gpu_row_pass_rows`] over all n rows.
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu_row_pass(
    gpu: &Gpu,
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    numerics: Numerics,
) -> Result<(PassOutput, GpuStats), GpuError> {
    gpu_row_pass_rows(gpu, high, cached_high, lows, needs, numerics, 0..high.n())
}

/// [`gpu_row_pass_rows_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu_row_pass_rows(
    gpu: &Gpu,
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    numerics: Numerics,
    rows: Range<usize>,
) -> Result<(PassOutput, GpuStats), GpuError> {
    super::block_on(gpu_row_pass_rows_async(gpu, high, cached_high, lows, needs, numerics, rows))
}
