//! The row pass: one sweep over the points that builds every resource the plan needs.
//!
//! For each point i it computes the original space's distance row once, then, for every
//! projection, that projection's row; selects both kNN lists and counts the cross-space ranks
//! from the same rows. Memory is O(n) scratch per worker plus the O(n·k) outputs. Rows are
//! independent, so the output is bit-identical for any thread count and block size.
//!
//! Given the original space's [`RankTable`], the original rows are not computed at all (when
//! its kNN is cached): the projection's neighbours get their original ranks by lookup and
//! their original distances pair by pair, and the projection's row is counted once against the
//! sorted ranks asked of it. The outputs are the same bits either way.
//!
//! A projection of dimension ≤ 3 ([`LowIndex`]) is served by an exact k-d tree
//! (`reference::KdTree`): its kNN and the projection ranks of the original neighbours come from
//! the tree, with the same keys and distance bits as its full rows (`docs/exactness.md` §4b);
//! a row whose rank count would visit too many points counts over its full row instead.

use std::ops::Range;

use rayon::prelude::*;

use super::certified_rows::{CertifiedChoice, CertifiedRows, HighRowsReport, PairScratch};
use super::rank_table::RankTable;
use super::scratch_pool::Pool;
use super::tree_knn::{TreeChoice, tree_knn};
use super::{CrossRanks, Extent, Needs, Neighbours};
use crate::data::Points;
use crate::reference::{
    INDEX_MAX_DIM, KdTree, Key, ROW_TILE, RankScratch, TreeScratch, count_by_placement, count_ranks, distance_pair,
    distance_pairs, distance_row, distance_rows, select_knn,
};

/// The resources of one projection.
#[derive(Debug, Clone, Default)]
pub struct ProjectionResources {
    pub knn: Option<Neighbours>,
    pub cross: Option<CrossRanks>,
}

/// What the pass built and how much work it did.
#[derive(Debug)]
pub struct PassOutput {
    /// The original space's kNN, when the pass had to build it (not given as cached).
    pub high: Option<Neighbours>,
    /// One entry per projection, in order.
    pub lows: Vec<ProjectionResources>,
    pub stats: PassStats,
    /// The pair distances' extents of the spaces whose full rows the pass computed (the CPU
    /// pass only), so that the all-pairs resources need no pass of their own to find them.
    pub extents: Extents,
    /// How each projection's rows were served (one per projection, in order).
    pub low_index: Vec<LowIndexReport>,
    /// The co-ranking counts of each projection, when the pass was fused with the co-ranking
    /// pass (else empty).
    pub coranking: Vec<super::CoRankCounts>,
    /// How the original space's rows were served, when the pass computed any.
    pub high_rows: Option<HighRowsReport>,
}

/// Whether a projection of dimension ≤ 3 is served by the exact spatial index (its kNN and
/// the ranks of given points from a k-d tree) or by full distance rows. Results are the same
/// bits either way; only the work differs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LowIndex {
    /// The index for a projection of dimension ≤ 3 when the pass needs no full rows of it
    /// (densities need its distance extent) and k is small next to n.
    #[default]
    Auto,
    /// Full distance rows for every projection (the brute-force reference).
    Never,
}

/// How one projection's rows were served (`run.plan.low_index`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LowIndexReport {
    /// `"kd_tree"` (the exact spatial index) or `"rows"` (full distance rows).
    pub path: &'static str,
    /// Why.
    pub reason: String,
}

/// The tree for `low` when [`LowIndex`] allows it and the pass can use it, and the report.
fn plan_low_index(choice: LowIndex, low: &Points, kl: usize, extents: bool) -> (Option<KdTree>, LowIndexReport) {
    let rows = |reason: String| (None, LowIndexReport { path: "rows", reason });
    let n = low.n();
    if choice == LowIndex::Never {
        return rows("the spatial index is off (low_index = never)".into());
    }
    if low.dim() > INDEX_MAX_DIM {
        return rows(format!("{} dimensions: the index serves projections of at most {INDEX_MAX_DIM}", low.dim()));
    }
    if extents {
        return rows("densities need the projection's pair-distance extent, found on its full rows".into());
    }
    if kl.saturating_mul(KL_PER_N) > n {
        return rows(format!("k = {kl} is large next to n = {n}: full rows select it faster"));
    }
    match KdTree::build(low) {
        Some(t) => (
            Some(t),
            LowIndexReport {
                path: "kd_tree",
                reason: format!(
                    "{} dimensions: exact k-d tree (kNN and ranks; a row whose count would compare more than n/{FALLBACK_SHARE} points counts over its full row)",
                    low.dim()
                ),
            },
        ),
        None => rows("the index could not be built".into()),
    }
}

/// The index selects k neighbours when k·`KL_PER_N` ≤ n.
const KL_PER_N: usize = 8;
/// A row's tree count gives up after comparing n / `FALLBACK_SHARE` points one by one (its full
/// row then costs n distances more: at most 1.5× the row's cost without the tree). 2 against 4:
/// T&C on a noisy 2-D projection (a fifth of its rows give up at n/4), per call in wasm, about
/// 17 % faster at n = 5000 (best of 4 alternating builds) and 7–14 % at n = 20 000 (three single
/// runs); 1 was no faster than 2.
const FALLBACK_SHARE: usize = 2;

/// Extents of pair distances found on the way.
#[derive(Debug, Clone, Default)]
pub struct Extents {
    pub high: Option<Extent>,
    /// Per projection (empty when none were found).
    pub lows: Vec<Option<Extent>>,
}

/// Work tallies of a pass, for the run report.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PassStats {
    /// Rows per block (one block is one task for a worker).
    pub block_rows: usize,
    pub blocks: usize,
    /// Distance rows computed (n per space and pass).
    pub distance_rows: u64,
    /// Cross ranks read off the other space's kNN list (no scan needed).
    pub ranks_from_knn: u64,
    /// Cross ranks found by counting over a whole row.
    pub ranks_counted: u64,
    /// Row scans done to count ranks (0 or 1 per row, space and projection).
    pub rank_scans: u64,
    /// Original-space ranks looked up in the resident rank table.
    pub ranks_from_table: u64,
    /// Projection rows whose kNN came from the spatial index (no distance row computed).
    pub low_rows_indexed: u64,
    /// Projection ranks counted in the spatial index.
    pub low_ranks_indexed: u64,
    /// Projection rows whose count in the index gave up (too many points near the thresholds)
    /// and was done over the full row.
    pub low_index_fallbacks: u64,
    /// Rows whose lists were read off the co-ranking pass's sorted rows (the passes fused).
    pub rows_fused: u64,
    /// Rows of either space that the co-ranking pass ranked by exact integer keys (an integer
    /// lattice, `resources::lattice`; counted in `distance_rows` too).
    #[serde(skip_serializing_if = "is_zero")]
    pub rows_integer_keys: u64,
    /// Original-space rows served as certified f32 rows (counted in `distance_rows` too).
    #[serde(skip_serializing_if = "is_zero")]
    pub rows_certified: u64,
    /// Bytes of f32 values a worker held at once for the certified rows (one group of blocks,
    /// `certified_group`); 0 when none served.
    #[serde(skip_serializing_if = "is_zero")]
    pub certified_group_bytes: u64,
    /// Pairs of certified rows whose comparison the f32 bound left open: computed exactly.
    #[serde(skip_serializing_if = "is_zero")]
    pub pairs_refined: u64,
    /// Original-space pairs whose distance the box tree computed (its lists served: no
    /// distance row of that space is counted).
    #[serde(skip_serializing_if = "is_zero")]
    pub pairs_tree: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl PassStats {
    fn add(&mut self, o: &PassStats) {
        self.distance_rows += o.distance_rows;
        self.ranks_from_knn += o.ranks_from_knn;
        self.ranks_counted += o.ranks_counted;
        self.rank_scans += o.rank_scans;
        self.ranks_from_table += o.ranks_from_table;
        self.low_rows_indexed += o.low_rows_indexed;
        self.low_ranks_indexed += o.low_ranks_indexed;
        self.low_index_fallbacks += o.low_index_fallbacks;
        self.rows_fused += o.rows_fused;
        self.rows_integer_keys += o.rows_integer_keys;
        self.rows_certified += o.rows_certified;
        self.pairs_refined += o.pairs_refined;
        self.pairs_tree += o.pairs_tree;
        self.certified_group_bytes = self.certified_group_bytes.max(o.certified_group_bytes);
    }
}

#[derive(Default)]
struct LowBlock {
    idx: Vec<u32>,
    dist: Vec<f64>,
    rank_hl: Vec<u32>,
    rank_lh: Vec<u32>,
    dist_hl: Vec<f64>,
    dist_lh: Vec<f64>,
}

#[derive(Default)]
struct BlockOut {
    high_idx: Vec<u32>,
    high_dist: Vec<f64>,
    lows: Vec<LowBlock>,
    stats: PassStats,
    high_extent: Option<Extent>,
    low_extents: Vec<Option<Extent>>,
}

/// Per-worker buffers, O(n).
struct Scratch {
    dx: Vec<f64>,
    dy: Vec<f64>,
    keys: Vec<Key>,
    /// Certified rows' buffers.
    pairs: PairScratch,
    cross: CrossScratch,
    tree: TreeScratch,
}

/// Buffers of [`cross_ranks`].
#[derive(Default)]
struct CrossScratch {
    pending: Vec<u32>,
    pending_slot: Vec<usize>,
    /// The pending queries' distances, and every query's (certified rows).
    pending_dist: Vec<f64>,
    query_dist: Vec<f64>,
    counted: Vec<u32>,
    rank: RankScratch,
}

/// Sizes of the pass, derived from the needs.
#[derive(Clone, Copy)]
struct Shape {
    kh: usize,
    kl: usize,
    kc: usize,
    /// The projection's ranks of the original neighbours only (when `kc` is 0).
    kcl: usize,
    need_dx: bool,
    /// Densities are planned: find each space's pair-distance extent on the way.
    extents: bool,
    /// The cross-rank pairs' distances are asked for.
    cross_dists: bool,
}

/// The original space's resident inputs of a pass.
#[derive(Clone, Copy, Default)]
pub struct Resident<'a> {
    /// Its kNN from an earlier pass, used when it holds at least the k needed.
    pub knn: Option<&'a Neighbours>,
    /// Its rank table: cross ranks by lookup instead of recomputed rows.
    pub ranks: Option<&'a RankTable>,
}

/// Builds the resources for `needs` over `lows` (all with `high.n()` rows).
///
/// `cached_high` is the original space's kNN from an earlier pass; it is used when it holds at
/// least the k needed. Every k must be in `1..n`; measures validate that before planning.
pub fn row_pass(
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    block_rows: usize,
) -> PassOutput {
    row_pass_rows(high, cached_high, lows, needs, block_rows, 0..high.n())
}

/// [`row_pass`] over the rows `rows` only (a row shard): the lists hold `rows.len()` rows, row
/// `rows.start` first. Rows are independent, so each row's output is the same bits as in a
/// full pass.
pub fn row_pass_rows(
    high: &Points,
    cached_high: Option<&Neighbours>,
    lows: &[&Points],
    needs: Needs,
    block_rows: usize,
    rows: Range<usize>,
) -> PassOutput {
    let resident = Resident { knn: cached_high, ranks: None };
    row_pass_resident(high, resident, lows, needs, block_rows, LowIndex::Auto, rows)
}

/// [`row_pass_rows`] with the original space's resident kNN and rank table, and the choice of
/// the projections' spatial index.
pub fn row_pass_resident(
    high: &Points,
    resident: Resident,
    lows: &[&Points],
    needs: Needs,
    block_rows: usize,
    low_index: LowIndex,
    rows: Range<usize>,
) -> PassOutput {
    row_pass_certified(high, resident, lows, needs, block_rows, low_index, rows, CertifiedChoice::Auto)
}

/// The f32 values one worker holds at once for the certified rows' groups of blocks.
pub(crate) const CERTIFIED_GROUP_BYTES: usize = 16 << 20;

/// Blocks per group of the certified rows: as many as fit [`CERTIFIED_GROUP_BYTES`] (rows of
/// `row_len` f32 values), at most 128 rows (more stream the packed points no faster), and
/// enough groups left for every thread four times over.
fn certified_group(blocks: usize, block_rows: usize, row_len: usize) -> usize {
    let by_bytes = CERTIFIED_GROUP_BYTES / (4 * row_len.max(1) * block_rows);
    let by_threads = blocks / (4 * rayon::current_num_threads().max(1));
    by_bytes.min(128 / block_rows).min(by_threads).max(1)
}

/// [`row_pass_resident`] with the choice of certified f32 rows for a cosine or correlation
/// space (`certified_rows`): the same bits either way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_pass_certified(
    high: &Points,
    resident: Resident,
    lows: &[&Points],
    needs: Needs,
    block_rows: usize,
    low_index: LowIndex,
    rows: Range<usize>,
    certified: CertifiedChoice,
) -> PassOutput {
    let table = resident.ranks.filter(|t| t.n() == high.n() && t.covers(&rows));
    let ks = needs.pass_ks(lows.len());
    let (kh, kl, kc, kcl) = (ks.kh, ks.kl, ks.kc, ks.kcl);
    // Only the original kNN needed of the original rows (no cross ranks counted in them, no
    // extents), for every row: the box tree's lists when its sample says it prunes enough.
    let tree_applies = certified == CertifiedChoice::Auto
        && kh > 0
        && ks.usable(resident.knn).is_none()
        && !(kc > 0 && table.is_none())
        && needs.density_sigmas.is_empty()
        && rows == (0..high.n());
    let (tree_list, tree_report, pairs_tree) = match tree_applies.then(|| tree_knn(high, kh, TreeChoice::Auto)) {
        Some(Ok(t)) => (Some(t.list), Ok(t.report), t.pairs),
        Some(Err(why)) => (None, Err(Some(why)), 0),
        None => (None, Err(None), 0),
    };
    let cached_high = ks.usable(resident.knn).or(tree_list.as_ref());
    let cached = ks.usable(cached_high);
    let shape = Shape {
        kh,
        kl,
        kc,
        kcl,
        need_dx: (kc > 0 && table.is_none()) || (kh > 0 && cached.is_none()),
        extents: !needs.density_sigmas.is_empty(),
        cross_dists: needs.cross_dists,
    };
    let block_rows = block_rows.max(1);
    let end = rows.end;
    let blocks: Vec<Range<usize>> = rows.step_by(block_rows).map(|s| s..(s + block_rows).min(end)).collect();
    let (trees, low_index): (Vec<Option<KdTree>>, Vec<LowIndexReport>) = if kl > 0 {
        lows.iter().map(|low| plan_low_index(low_index, low, kl, shape.extents)).unzip()
    } else {
        (lows.iter().map(|_| None).collect(), Vec::new())
    };
    // Certified rows serve a row only for its kNN and cross ranks: not when the pass must find
    // the pair-distance extent on it.
    let (fast, high_rows) = if !shape.need_dx {
        (None, tree_report.as_ref().ok().cloned())
    } else if shape.extents {
        let why = "densities need the exact rows' pair-distance extent".to_string();
        (None, Some(HighRowsReport { path: "exact_f64", reason: why }))
    } else {
        match CertifiedRows::plan(high, kc, certified) {
            Ok(f) => {
                let reason = format!(
                    "{}: {}, each comparison certified or refined in f64 ({} bytes)",
                    high.metric(),
                    f.describe(),
                    f.bytes()
                );
                (Some(f), Some(HighRowsReport { path: "certified_f32", reason }))
            }
            Err(reason) => (None, Some(HighRowsReport { path: "exact_f64", reason })),
        }
    };

    // The certified rows' group of f32 rows, kept across a worker's groups (faulted in once).
    let tiles: Pool<Vec<f32>> = Pool::new();
    // Nothing asked of the rows (measures that read the point sets directly): no block runs.
    let idle = kh == 0 && kl == 0 && kc == 0 && kcl == 0 && !shape.extents;
    let blocks = if idle { Vec::new() } else { blocks };
    // (Not even an empty parallel iterator: the first one starts the thread pool.)
    let mut group_bytes = 0;
    let outs: Vec<BlockOut> = if idle {
        Vec::new()
    } else {
        match fast.as_ref() {
            // The certified rows' f32 values of several blocks at once (`certified_group`): each
            // pass over the packed points then serves more rows. A row's values do not depend on
            // the rows computed with it, and each block runs on its own rows as before.
            Some(f) => {
                let per = certified_group(blocks.len(), block_rows, f.row_len());
                let groups: Vec<&[Range<usize>]> = blocks.chunks(per).collect();
                let widest = groups.iter().map(|g| g.iter().map(Range::len).sum::<usize>()).max().unwrap_or(0);
                group_bytes = (widest * f.row_len() * 4) as u64;
                let outs: Vec<Vec<BlockOut>> = groups
                    .par_iter()
                    .map(|group| {
                        tiles.with(|buf| {
                            let span = group[0].start..group[group.len() - 1].end;
                            let len = span.len() * f.row_len();
                            if buf.len() < len {
                                buf.resize(len, 0.0);
                            }
                            f.approx_rows(span.clone(), &mut buf[..len]);
                            group
                                .iter()
                                .map(|rows| {
                                    let at = (rows.start - span.start) * f.row_len();
                                    let vals = &mut buf[at..at + rows.len() * f.row_len()];
                                    run_block(high, cached, table, lows, &trees, shape, Some((f, vals)), rows.clone())
                                })
                                .collect()
                        })
                    })
                    .collect();
                outs.into_iter().flatten().collect()
            }
            None => blocks
                .par_iter()
                .map(|rows| run_block(high, cached, table, lows, &trees, shape, None, rows.clone()))
                .collect(),
        }
    };

    let mut stats = PassStats {
        block_rows,
        blocks: blocks.len(),
        pairs_tree,
        certified_group_bytes: group_bytes,
        ..Default::default()
    };
    for o in &outs {
        stats.add(&o.stats);
    }
    // The tree's lists (declined: its reason after the rows').
    let high_rows = match tree_report {
        Err(Some(why)) => {
            high_rows.map(|r| HighRowsReport { reason: format!("{}; box tree declined: {why}", r.reason), ..r })
        }
        _ => high_rows,
    };
    let high_out = (kh > 0 && cached.is_none()).then(|| Neighbours {
        k: kh,
        idx: outs.iter().flat_map(|o| o.high_idx.iter().copied()).collect(),
        dist: outs.iter().flat_map(|o| o.high_dist.iter().copied()).collect(),
    });
    let lows_out = (0..lows.len())
        .map(|p| {
            let cat_u = |f: fn(&LowBlock) -> &Vec<u32>| {
                outs.iter().flat_map(|o| f(&o.lows[p]).iter().copied()).collect::<Vec<_>>()
            };
            let cat_f = |f: fn(&LowBlock) -> &Vec<f64>| {
                outs.iter().flat_map(|o| f(&o.lows[p]).iter().copied()).collect::<Vec<_>>()
            };
            ProjectionResources {
                knn: (kl > 0).then(|| Neighbours { k: kl, idx: cat_u(|b| &b.idx), dist: cat_f(|b| &b.dist) }),
                cross: (kc > 0 || kcl > 0).then(|| CrossRanks {
                    k: kc.max(kcl),
                    rank_high_of_low: cat_u(|b| &b.rank_hl),
                    rank_low_of_high: cat_u(|b| &b.rank_lh),
                    dist_high_of_low: if shape.cross_dists { cat_f(|b| &b.dist_hl) } else { Vec::new() },
                    dist_low_of_high: if shape.cross_dists { cat_f(|b| &b.dist_lh) } else { Vec::new() },
                }),
            }
        })
        .collect();
    let join = |a: Option<Extent>, b: Option<Extent>| match (a, b) {
        (Some(a), Some(b)) => Some(a.join(b)),
        _ => None,
    };
    let all = |f: &dyn Fn(&BlockOut) -> Option<Extent>| outs.iter().map(f).reduce(join).flatten();
    let extents =
        Extents { high: all(&|o| o.high_extent), lows: (0..lows.len()).map(|p| all(&|o| o.low_extents[p])).collect() };
    PassOutput {
        high: high_out.or(tree_list),
        lows: lows_out,
        stats,
        extents,
        low_index,
        coranking: Vec::new(),
        high_rows,
    }
}

/// One block of rows, with the block's certified f32 rows when they serve.
#[allow(clippy::too_many_arguments)]
fn run_block(
    high: &Points,
    cached: Option<&Neighbours>,
    table: Option<&RankTable>,
    lows: &[&Points],
    trees: &[Option<KdTree>],
    s: Shape,
    fast: Option<(&CertifiedRows, &mut [f32])>,
    rows: Range<usize>,
) -> BlockOut {
    let (fast, gtile) = match fast {
        Some((f, g)) => (Some(f), g),
        None => (None, &mut [][..]),
    };
    let n = high.n();
    let m = rows.len();
    let any_rows = trees.iter().any(Option::is_none);
    let mut sc = Scratch {
        dx: vec![0.0; if fast.is_none() { n } else { 0 }],
        dy: vec![0.0; if any_rows || s.kc > 0 || s.kcl > 0 { n } else { 0 }],
        keys: Vec::with_capacity(if any_rows || s.need_dx { n } else { 0 }),
        pairs: PairScratch::default(),
        cross: CrossScratch::default(),
        tree: TreeScratch::default(),
    };
    let own_high = cached.is_none() && s.kh > 0;
    let mut out = BlockOut {
        high_idx: vec![0; if own_high { m * s.kh } else { 0 }],
        high_dist: vec![0.0; if own_high { m * s.kh } else { 0 }],
        lows: lows
            .iter()
            .map(|_| LowBlock {
                idx: vec![0; m * s.kl],
                dist: vec![0.0; m * s.kl],
                rank_hl: vec![0; m * s.kc],
                rank_lh: vec![0; m * s.kc.max(s.kcl)],
                dist_hl: vec![0.0; m * s.kc],
                dist_lh: vec![0.0; m * s.kc.max(s.kcl)],
            })
            .collect(),
        stats: PassStats::default(),
        high_extent: (s.extents && s.need_dx).then_some(Extent::EMPTY),
        low_extents: vec![(s.extents && s.kl > 0).then_some(Extent::EMPTY); lows.len()],
    };
    // The original space's rows ROW_TILE at a time: each block of points' coordinates is read
    // from memory once for all of them (the same bits as a row at a time).
    let mut tile = vec![0.0; if s.need_dx && fast.is_none() { ROW_TILE.min(m) * n } else { 0 }];
    // Certified rows: the whole block's f32 rows were computed at once (each block of points'
    // unit rows read once for all of them).
    let rows_end = rows.end;
    for (r, i) in rows.enumerate() {
        if let Some(f) = fast {
            // Self is never a neighbour nor nearer than anything.
            let w = f.row_len();
            f.exclude_self(&mut gtile[r * w..(r + 1) * w], i);
            out.stats.distance_rows += 1;
            out.stats.rows_certified += 1;
        } else if s.need_dx {
            let t = r % ROW_TILE;
            if t == 0 {
                let end = (i + ROW_TILE).min(rows_end);
                distance_rows(high, i..end, &mut tile[..(end - i) * n]);
            }
            sc.dx.copy_from_slice(&tile[t * n..(t + 1) * n]);
            out.stats.distance_rows += 1;
            out.high_extent = out.high_extent.map(|e| e.join(Extent::of_row(&sc.dx, i)));
        }
        let high_row = match fast {
            Some(f) => HighRow::Certified(f, &gtile[r * f.row_len()..(r + 1) * f.row_len()]),
            None => HighRow::Exact(&sc.dx),
        };
        let (hx_idx, _): (&[u32], &[f64]) = match cached {
            Some(c) => (c.row(i, c.k), c.dist_row(i, c.k)),
            None if s.kh > 0 => {
                let (a, b) = (r * s.kh, (r + 1) * s.kh);
                let (idx, dist) = (&mut out.high_idx[a..b], &mut out.high_dist[a..b]);
                match high_row {
                    HighRow::Exact(dx) => select_knn(dx, i, s.kh, &mut sc.keys, idx, dist),
                    HighRow::Certified(f, g) => {
                        out.stats.pairs_refined +=
                            f.select_knn(high, g, i, s.kh, &mut sc.pairs, &mut sc.keys, idx, dist).pairs;
                    }
                }
                (&out.high_idx[a..b], &out.high_dist[a..b])
            }
            None => (&[], &[]),
        };
        for (p, low) in lows.iter().enumerate() {
            if s.kl == 0 {
                continue;
            }
            let tree = trees[p].as_ref();
            let lb = &mut out.lows[p];
            let (a, b) = (r * s.kl, (r + 1) * s.kl);
            match tree {
                Some(t) => {
                    t.knn(low, i, s.kl, &mut sc.tree, &mut lb.idx[a..b], &mut lb.dist[a..b]);
                    out.stats.low_rows_indexed += 1;
                }
                None => {
                    distance_row(low, i, &mut sc.dy);
                    out.stats.distance_rows += 1;
                    out.low_extents[p] = out.low_extents[p].map(|e| e.join(Extent::of_row(&sc.dy, i)));
                    select_knn(&sc.dy, i, s.kl, &mut sc.keys, &mut lb.idx[a..b], &mut lb.dist[a..b]);
                }
            }
            if s.kcl > 0 {
                // The projection's ranks of the original neighbours only: no original row.
                let (c0, c1) = (r * s.kcl, (r + 1) * s.kcl);
                let (ranks, dists) = (&mut lb.rank_lh[c0..c1], &mut lb.dist_lh[c0..c1]);
                let q = &hx_idx[..s.kcl];
                let low_row = LowRow { low, tree, dy: &mut sc.dy, filled: tree.is_none() };
                let own = &lb.idx[a..b];
                let (sc_cross, sc_tree) = (&mut sc.cross, &mut sc.tree);
                low_ranks(low_row, i, q, own, ranks, dists, sc_cross, sc_tree, &mut out.stats, count_ranks);
                continue;
            }
            if s.kc == 0 {
                continue;
            }
            let (c0, c1) = (r * s.kc, (r + 1) * s.kc);
            let ly_full = &lb.idx[a..b];
            let (ranks_hl, dists_hl) = (&mut lb.rank_hl[c0..c1], &mut lb.dist_hl[c0..c1]);
            let (ranks_lh, dists_lh) = (&mut lb.rank_lh[c0..c1], &mut lb.dist_lh[c0..c1]);
            let q = &hx_idx[..s.kc];
            let low_row = LowRow { low, tree, dy: &mut sc.dy, filled: tree.is_none() };
            match table {
                // Ranks in X of the projection's neighbours by lookup, their distances pair by
                // pair (the row's bits); the converse by one count pass over the projection's
                // row (or its index) against the sorted ranks asked of it.
                Some(t) => {
                    for (s_, &j) in ly_full[..s.kc].iter().enumerate() {
                        ranks_hl[s_] = t.rank(i, j as usize);
                    }
                    if s.cross_dists {
                        distance_pairs(high, i, &ly_full[..s.kc], dists_hl);
                    }
                    out.stats.ranks_from_table += s.kc as u64;
                    let (sc_cross, sc_tree) = (&mut sc.cross, &mut sc.tree);
                    low_ranks(
                        low_row,
                        i,
                        q,
                        ly_full,
                        ranks_lh,
                        dists_lh,
                        sc_cross,
                        sc_tree,
                        &mut out.stats,
                        count_by_placement,
                    );
                }
                // Ranks in X of the projection's neighbours, and converse.
                None => {
                    let qy = &ly_full[..s.kc];
                    match high_row {
                        HighRow::Exact(dx) => cross_ranks(
                            dx,
                            i,
                            qy,
                            hx_idx,
                            ranks_hl,
                            dists_hl,
                            &mut sc.cross,
                            &mut out.stats,
                            count_ranks,
                        ),
                        HighRow::Certified(f, g) => certified_cross_ranks(
                            high,
                            f,
                            g,
                            i,
                            qy,
                            hx_idx,
                            ranks_hl,
                            dists_hl,
                            &mut sc.cross,
                            &mut sc.pairs,
                            &mut out.stats,
                        ),
                    }
                    let (sc_cross, sc_tree) = (&mut sc.cross, &mut sc.tree);
                    low_ranks(
                        low_row,
                        i,
                        q,
                        ly_full,
                        ranks_lh,
                        dists_lh,
                        sc_cross,
                        sc_tree,
                        &mut out.stats,
                        count_ranks,
                    );
                }
            }
        }
    }
    out
}

/// A projection's row i: its full distance row `dy` (computed when `filled`, or when the index
/// gives up), or its index.
struct LowRow<'a> {
    low: &'a Points,
    tree: Option<&'a KdTree>,
    dy: &'a mut Vec<f64>,
    filled: bool,
}

/// [`cross_ranks`] in a projection: from its full row, or from its index (query distances pair
/// by pair, the row's bits; pending ranks counted in the tree, or over the full row computed
/// now when the tree's count gives up).
#[allow(clippy::too_many_arguments)]
fn low_ranks(
    row: LowRow,
    i: usize,
    queries: &[u32],
    own_knn: &[u32],
    ranks: &mut [u32],
    dists: &mut [f64],
    sc: &mut CrossScratch,
    tree_scratch: &mut TreeScratch,
    stats: &mut PassStats,
    count: fn(&[f64], usize, &[u32], &mut [u32], &mut RankScratch),
) {
    let LowRow { low, tree, dy, filled } = row;
    let tree = match tree {
        Some(t) if !filled => t,
        _ => return cross_ranks(dy, i, queries, own_knn, ranks, dists, sc, stats, count),
    };
    let CrossScratch { pending, pending_slot, counted, rank, .. } = sc;
    split_by_knn(
        queries,
        own_knn,
        |_, j| distance_pair(low, i, j as usize),
        ranks,
        dists,
        pending,
        pending_slot,
        stats,
    );
    if pending.is_empty() {
        return;
    }
    counted.clear();
    counted.resize(pending.len(), 0);
    let budget = low.n() / FALLBACK_SHARE;
    if tree.count_ranks(low, i, pending, counted, tree_scratch, budget) {
        stats.low_ranks_indexed += pending.len() as u64;
    } else {
        distance_row(low, i, dy);
        stats.distance_rows += 1;
        stats.low_index_fallbacks += 1;
        count(dy, i, pending, counted, rank);
        stats.rank_scans += 1;
        stats.ranks_counted += pending.len() as u64;
    }
    for (&s, &r) in pending_slot.iter().zip(counted.iter()) {
        ranks[s] = r;
    }
}

/// Each query's distance (`dist`); a query in `own_knn` takes its rank from its position there,
/// the others go to `pending` (with their slots in `pending_slot`) to be counted.
#[allow(clippy::too_many_arguments)]
fn split_by_knn(
    queries: &[u32],
    own_knn: &[u32],
    dist: impl Fn(usize, u32) -> f64,
    ranks: &mut [u32],
    dists: &mut [f64],
    pending: &mut Vec<u32>,
    pending_slot: &mut Vec<usize>,
    stats: &mut PassStats,
) {
    pending.clear();
    pending_slot.clear();
    for (s, &j) in queries.iter().enumerate() {
        dists[s] = dist(s, j);
        match own_knn.iter().position(|&h| h == j) {
            Some(pos) => {
                ranks[s] = pos as u32 + 1;
                stats.ranks_from_knn += 1;
            }
            None => {
                pending.push(j);
                pending_slot.push(s);
            }
        }
    }
}

/// The original space's row i as the pass holds it.
#[derive(Clone, Copy)]
enum HighRow<'a> {
    /// The exact distance row.
    Exact(&'a [f64]),
    /// The certified f32 row (`g[i]` = −∞).
    Certified(&'a CertifiedRows, &'a [f32]),
}

/// [`cross_ranks`] in the original space from its certified f32 row: each query's distance is
/// the reference's pair (the row's bits), its count certified or refined (`certified_rows`).
#[allow(clippy::too_many_arguments)]
fn certified_cross_ranks(
    high: &Points,
    rows: &CertifiedRows,
    g: &[f32],
    i: usize,
    queries: &[u32],
    own_knn: &[u32],
    ranks: &mut [u32],
    dists: &mut [f64],
    sc: &mut CrossScratch,
    pairs: &mut PairScratch,
    stats: &mut PassStats,
) {
    let CrossScratch { pending, pending_slot, pending_dist, query_dist, counted, .. } = sc;
    // Every query's distance at once (four pairs at a time): the reference's bits.
    query_dist.resize(queries.len(), 0.0);
    distance_pairs(high, i, queries, query_dist);
    split_by_knn(queries, own_knn, |s, _| query_dist[s], ranks, dists, pending, pending_slot, stats);
    if pending.is_empty() {
        return;
    }
    pending_dist.clear();
    pending_dist.extend(pending_slot.iter().map(|&s| dists[s]));
    counted.clear();
    counted.resize(pending.len(), 0);
    stats.pairs_refined += rows.count_ranks(high, g, i, pending, pending_dist, pairs, counted).pairs;
    for (&s, &r) in pending_slot.iter().zip(counted.iter()) {
        ranks[s] = r;
    }
    stats.rank_scans += 1;
    stats.ranks_counted += pending.len() as u64;
}

/// Ranks and distances, in the space of `dist_row`, of the points `queries`. `own_knn` is that
/// space's kNN list of i: a query found there has rank position + 1 and needs no scan; the
/// others are counted by `count`.
#[allow(clippy::too_many_arguments)]
fn cross_ranks(
    dist_row: &[f64],
    i: usize,
    queries: &[u32],
    own_knn: &[u32],
    ranks: &mut [u32],
    dists: &mut [f64],
    sc: &mut CrossScratch,
    stats: &mut PassStats,
    count: fn(&[f64], usize, &[u32], &mut [u32], &mut RankScratch),
) {
    let CrossScratch { pending, pending_slot, counted, rank, .. } = sc;
    split_by_knn(queries, own_knn, |_, j| dist_row[j as usize], ranks, dists, pending, pending_slot, stats);
    if pending.is_empty() {
        return;
    }
    counted.clear();
    counted.resize(pending.len(), 0);
    count(dist_row, i, pending, counted, rank);
    for (&s, &r) in pending_slot.iter().zip(counted.iter()) {
        ranks[s] = r;
    }
    stats.rank_scans += 1;
    stats.ranks_counted += pending.len() as u64;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;
    use crate::splitmix::SplitMix64;

    /// Data built to break the certified rows: duplicates, rows that differ only in scale (cosine
    /// distance 0 up to rounding), near-parallel rows (distances far below the f32 bound),
    /// integer lattices (exact ties), huge and tiny scales, odd D, n not a multiple of a tile.
    fn hostile(seed: u64, n: usize, d: usize, kind: usize) -> Vec<f64> {
        let mut rng = SplitMix64(seed);
        let base: Vec<f64> = (0..d).map(|_| rng.normal()).collect();
        let mut v = Vec::with_capacity(n * d);
        for i in 0..n {
            for c in 0..d {
                let x = match kind {
                    0 => rng.normal(),
                    1 => (rng.uniform() * 5.0).floor() - 2.0 + if c == i % d { 0.5 } else { 0.0 },
                    2 => base[c] * (1.0 + (i % 7) as f64) + if i % 3 == 0 { 0.0 } else { rng.normal() * 1e-9 },
                    3 => base[c] + rng.normal() * 2f64.powi(-20 - (i % 5) as i32),
                    _ => rng.normal() * if i % 2 == 0 { 1e100 } else { 1e-100 },
                };
                v.push(x);
            }
        }
        // Duplicates of earlier rows.
        for i in (5..n).step_by(6) {
            let (src, dst) = ((i / 2) * d, i * d);
            v.copy_within(src..src + d, dst);
        }
        v
    }

    fn same(a: &PassOutput, b: &PassOutput, what: &str) {
        let (ha, hb) = (a.high.as_ref().unwrap(), b.high.as_ref().unwrap());
        assert_eq!(ha.idx, hb.idx, "{what}: high kNN");
        assert!(ha.dist.iter().zip(&hb.dist).all(|(x, y)| x.to_bits() == y.to_bits()), "{what}: high distances");
        for (la, lb) in a.lows.iter().zip(&b.lows) {
            let (ca, cb) = (la.cross.as_ref().unwrap(), lb.cross.as_ref().unwrap());
            assert_eq!(ca.rank_high_of_low, cb.rank_high_of_low, "{what}: original ranks");
            assert_eq!(ca.rank_low_of_high, cb.rank_low_of_high, "{what}: projection ranks");
            let bits = |x: &[f64], y: &[f64]| x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(bits(&ca.dist_high_of_low, &cb.dist_high_of_low), "{what}: original distances");
            assert!(bits(&ca.dist_low_of_high, &cb.dist_low_of_high), "{what}: projection distances");
            assert_eq!(la.knn.as_ref().unwrap().idx, lb.knn.as_ref().unwrap().idx, "{what}: low kNN");
        }
    }

    /// A pass that needs only the original kNN (continuity's projection ranks, the kNN of both
    /// spaces) takes the box tree's lists on clustered data (the report says so) and they are
    /// the exact rows' bits; with cross ranks in the original rows, or a range of rows, the
    /// rows serve.
    #[test]
    fn the_box_tree_serves_a_pass_that_needs_only_the_original_knn() {
        let (n, d) = (1200, 12);
        let mut rng = SplitMix64(41);
        let centres: Vec<f64> = (0..6 * d).map(|_| rng.normal() * 30.0).collect();
        let v: Vec<f64> = (0..n * d).map(|t| centres[(t / d) % 6 * d + t % d] + rng.normal()).collect();
        let high = Points::from_vec("blobs", n, d, v).unwrap();
        let low = Points::from_vec("low", n, 2, (0..n * 2).map(|_| rng.normal()).collect()).unwrap();
        for (needs, tree) in [(Needs::knn_both(15), true), (Needs::cross_low(9), true), (Needs::cross(9), false)] {
            let run = |c, rows: Range<usize>| {
                row_pass_certified(&high, Resident::default(), &[&low], needs.clone(), 64, LowIndex::Auto, rows, c)
            };
            let (auto, exact) = (run(CertifiedChoice::Auto, 0..n), run(CertifiedChoice::Never, 0..n));
            let path = auto.high_rows.as_ref().unwrap().path;
            assert_eq!(path == "box_tree_f64", tree, "{needs:?}: {path}");
            // The work report counts the tree's pairs when it served, and only then.
            let pairs = auto.stats.pairs_tree;
            assert_eq!(pairs > 0, tree, "{needs:?}: {pairs} tree pairs");
            assert!(pairs < (n * n) as u64 / 2, "{needs:?}: the tree pruned ({pairs} pairs)");
            let (ha, hb) = (auto.high.as_ref().unwrap(), exact.high.as_ref().unwrap());
            assert_eq!(ha.idx, hb.idx, "{needs:?}: high kNN");
            assert!(ha.dist.iter().zip(&hb.dist).all(|(x, y)| x.to_bits() == y.to_bits()), "{needs:?}");
            for (la, lb) in auto.lows.iter().zip(&exact.lows) {
                assert_eq!(la.knn.as_ref().map(|k| &k.idx), lb.knn.as_ref().map(|k| &k.idx), "{needs:?}: low kNN");
                let ranks = |c: &Option<CrossRanks>| c.as_ref().map(|c| c.rank_low_of_high.clone());
                assert_eq!(ranks(&la.cross), ranks(&lb.cross), "{needs:?}: projection ranks");
            }
            let part = run(CertifiedChoice::Auto, 100..300);
            assert_ne!(part.high_rows.as_ref().map(|r| r.path), Some("box_tree_f64"), "a range of rows");
        }
    }

    /// Certified f32 rows give the exact rows' kNN lists, cross ranks and distances bit for bit,
    /// under cosine and correlation (unit rows) and euclidean, sqeuclidean and minkowski p = 2
    /// (the squared form), on hostile data, for several k and block sizes.
    #[test]
    fn certified_rows_are_the_exact_rows_bits() {
        for (seed, (n, d)) in [(77usize, 17usize), (64, 40), (45, 3), (130, 33)].into_iter().enumerate() {
            for kind in 0..5 {
                let v = hostile(seed as u64 * 10 + kind as u64, n, d, kind);
                let mut rng = SplitMix64(seed as u64);
                let low_v: Vec<f64> = (0..n * 2).map(|t| if t % 5 == 0 { 1.0 } else { rng.normal() }).collect();
                let low = Points::from_vec("low", n, 2, low_v).unwrap();
                let metrics = [Metric::Cosine, Metric::Correlation, Metric::Euclidean, Metric::SqEuclidean];
                for metric in metrics.into_iter().chain(Metric::minkowski(2.0)) {
                    let Ok(high) = Points::from_vec("high", n, d, v.clone()).unwrap().with_metric(metric) else {
                        continue;
                    };
                    for (k, block) in [(1, 7), (5, 32), (12, 9)] {
                        let run = |c| {
                            let r = Resident::default();
                            row_pass_certified(
                                &high,
                                r,
                                &[&low],
                                Needs::cross_with_dists(k),
                                block,
                                LowIndex::Auto,
                                0..n,
                                c,
                            )
                        };
                        let (fast, exact) = (run(CertifiedChoice::Always), run(CertifiedChoice::Never));
                        let what = format!("{metric} n={n} d={d} kind={kind} k={k}");
                        assert_eq!(fast.high_rows.as_ref().unwrap().path, "certified_f32", "{what}");
                        assert_eq!(fast.stats.rows_certified, n as u64, "{what}");
                        assert_eq!(exact.high_rows.as_ref().unwrap().path, "exact_f64", "{what}");
                        same(&fast, &exact, &what);
                    }
                }
            }
        }
    }

    /// The certified rows computed a group of blocks at a time (`certified_group`) are the
    /// exact rows' bits, and the same for 1 and 2 threads (whose groups differ).
    #[test]
    fn certified_row_groups_are_the_exact_rows_bits() {
        let (n, d, block) = (300usize, 24usize, 5usize);
        for (kind, metric) in [(1usize, Metric::Cosine), (3, Metric::Euclidean), (4, Metric::Correlation)] {
            let v = hostile(900 + kind as u64, n, d, kind);
            let mut rng = SplitMix64(kind as u64);
            let low_v: Vec<f64> = (0..n * 2).map(|t| if t % 5 == 0 { 1.0 } else { rng.normal() }).collect();
            let low = Points::from_vec("low", n, 2, low_v).unwrap();
            let high = Points::from_vec("high", n, d, v).unwrap().with_metric(metric).unwrap();
            let run = |c, threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let r = Resident::default();
                    let out = row_pass_certified(
                        &high,
                        r,
                        &[&low],
                        Needs::cross_with_dists(6),
                        block,
                        LowIndex::Auto,
                        0..n,
                        c,
                    );
                    (out, certified_group(n.div_ceil(block), block, n))
                })
            };
            let (exact, _) = run(CertifiedChoice::Never, 2);
            for threads in [1, 2] {
                let (fast, per) = run(CertifiedChoice::Always, threads);
                let what = format!("{metric} threads={threads}");
                assert_eq!(fast.high_rows.as_ref().unwrap().path, "certified_f32", "{what}");
                // 60 blocks: groups of 7 (2 threads) or 15 (1 thread) blocks, not one.
                assert_eq!(per, 15 / threads, "{what}");
                assert!(fast.stats.certified_group_bytes >= (per * block * n * 4) as u64, "{what}");
                same(&fast, &exact, &what);
            }
        }
    }

    /// A group fits its bytes and 128 rows, leaves every thread four groups, and is a block at
    /// least.
    #[test]
    fn certified_groups_are_bounded() {
        let threads = rayon::current_num_threads();
        assert_eq!(certified_group(10_000, 32, 20_000), (CERTIFIED_GROUP_BYTES / (4 * 20_000 * 32)).min(4));
        assert_eq!(certified_group(10_000, 32, 1 << 20), 1, "rows wider than the bytes: one block");
        assert_eq!(certified_group(10_000, 1, 100), 128, "at most 128 rows");
        assert_eq!(certified_group(4 * threads * 3, 8, 100), 3, "four groups per thread");
        assert_eq!(certified_group(1, 8, 100), 1);
    }

    /// Outside the premises the pass keeps the exact rows and says why: another metric, a
    /// row whose norm is below 2^-400 (cosine), coordinates below the squared form's domain.
    #[test]
    fn certified_rows_refuse_outside_their_domain() {
        let mut v: Vec<f64> = (0..40 * 20).map(|t| (t % 7) as f64 - 3.0 + t as f64 * 1e-3).collect();
        let low = Points::from_vec("low", 40, 2, v[..80].to_vec()).unwrap();
        let r = Resident::default();
        let e = Points::from_vec("h", 40, 20, v.clone()).unwrap().with_metric(Metric::Cityblock).unwrap();
        let out = row_pass_certified(
            &e,
            r,
            &[&low],
            Needs::cross_with_dists(3),
            8,
            LowIndex::Auto,
            0..40,
            CertifiedChoice::Always,
        );
        assert_eq!(out.high_rows.unwrap().path, "exact_f64");
        let mut w = v.clone();
        w[3] = 2e-200;
        let sub = Points::from_vec("h", 40, 20, w).unwrap();
        let out = row_pass_certified(
            &sub,
            r,
            &[&low],
            Needs::cross_with_dists(3),
            8,
            LowIndex::Auto,
            0..40,
            CertifiedChoice::Always,
        );
        let why = out.high_rows.unwrap();
        assert_eq!(why.path, "exact_f64");
        assert!(why.reason.contains("outside the certified domain"), "{}", why.reason);
        v[20..40].iter_mut().for_each(|x| *x *= 1e-130);
        let tiny = Points::from_vec("h", 40, 20, v).unwrap().with_metric(Metric::Cosine).unwrap();
        let out = row_pass_certified(
            &tiny,
            r,
            &[&low],
            Needs::cross_with_dists(3),
            8,
            LowIndex::Auto,
            0..40,
            CertifiedChoice::Always,
        );
        let why = out.high_rows.unwrap();
        assert_eq!(why.path, "exact_f64");
        assert!(why.reason.contains("row 1's norm"), "{}", why.reason);
    }
}
