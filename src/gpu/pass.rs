//! The GPU counterpart of [`crate::resources::row_pass`]: the same resources, bit for bit,
//! built from certified kernels and host refinement.

use std::ops::Range;

use serde::Serialize;

use super::GpuError;
use super::context::Gpu;
use super::knn_candidates::{KnnStats, certified_knn};
use super::prepare::Space;
use super::prepare::prepare_checked;
use super::rank_counts::{RankStats, certified_ranks};
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
    fn add_knn(&mut self, s: &KnnStats) {
        self.knn.rows += s.rows;
        self.knn.candidates += s.candidates;
        self.knn.rows_recomputed += s.rows_recomputed;
        self.knn.rows_incomplete += s.rows_incomplete;
        self.knn.unresolved += s.unresolved;
        self.knn.rows_per_dispatch = self.knn.rows_per_dispatch.max(s.rows_per_dispatch);
    }
    fn add_ranks(&mut self, s: &RankStats) {
        self.ranks.queries += s.queries;
        self.ranks.overlaps += s.overlaps;
        self.ranks.rows_recomputed += s.rows_recomputed;
        self.ranks.rows_incomplete += s.rows_incomplete;
        self.ranks.rows_per_dispatch = self.ranks.rows_per_dispatch.max(s.rows_per_dispatch);
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
    let need_high_space = kc > 0 || (kh > 0 && cached.is_none());
    let high_space: Option<Space> =
        if need_high_space { Some(gpu.upload(prepare_checked(high)?, &mut tally)?) } else { None };
    let fresh_high = match (cached, &high_space) {
        (None, Some(space)) if kh > 0 => {
            let (nb, s) = certified_knn(gpu, space, high, kh, rows.clone(), numerics, &mut tally).await?;
            stats.add_knn(&s);
            Some(nb)
        }
        _ => None,
    };
    // The original space's lists of the rows: all n rows when cached, the block's when fresh.
    let high_nb = match (cached, &fresh_high) {
        (Some(c), _) => Some((c, rows.clone())),
        (None, Some(f)) => Some((f, 0..rows.len())),
        (None, None) => None,
    };
    let own = 0..rows.len();
    let mut out_lows = Vec::with_capacity(lows.len());
    for low in lows {
        if kl == 0 {
            out_lows.push(ProjectionResources::default());
            continue;
        }
        let space = gpu.upload(prepare_checked(low)?, &mut tally)?;
        let (knn, s) = certified_knn(gpu, &space, low, kl, rows.clone(), numerics, &mut tally).await?;
        stats.add_knn(&s);
        let cross = if kc > 0 {
            let hs = high_space.as_ref().expect("uploaded when cross ranks are needed");
            let (hn, h_rows) = high_nb.clone().expect("original kNN exists when cross ranks are needed");
            let q_hl = prefix(&knn, kc, own.clone());
            let q_lh = prefix(hn, kc, h_rows);
            let (r_hl, d_hl, s1) =
                certified_ranks(gpu, hs, high, &q_hl, kc, rows.clone(), numerics, &mut tally).await?;
            let (r_lh, d_lh, s2) =
                certified_ranks(gpu, &space, low, &q_lh, kc, rows.clone(), numerics, &mut tally).await?;
            stats.add_ranks(&s1);
            stats.add_ranks(&s2);
            Some(CrossRanks {
                k: kc,
                rank_high_of_low: r_hl,
                rank_low_of_high: r_lh,
                dist_high_of_low: d_hl,
                dist_low_of_high: d_lh,
            })
        } else {
            None
        };
        out_lows.push(ProjectionResources { knn: Some(knn), cross });
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
    };
    Ok((out, stats))
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
