//! [`Evaluator::map_rows`]: one block's partial, from the very row pass and measure code of a
//! full run, and the fingerprint that keeps partials of different runs apart.

use std::ops::Range;
use std::sync::Arc;

use super::{
    PARTIAL_FORMAT, PARTIAL_VERSION, Partial, PartialLocal, PartialScore, PartialWork, check_shardable, is_block, plan,
};
use crate::backend::Numerics;
use crate::data::{Labels, Points};
use crate::error::{Error, Result};
use crate::evaluate::{Evaluator, Served, SpanState};
use crate::measures::coranking;
use crate::measures::{Ctx, Resolved};
use crate::resources::{
    CoRankCounts, CrossRanks, FusedLists, ListKs, Needs, Neighbours, PassOutput, PassStats, ProjectionResources,
    TablePlan, nerv_rows, plan_rank_table,
};
use crate::spec::Spec;
use crate::sum::pairwise_sum;

/// Places a block's `m`×k rows at rows `start..` of an n×k list (zeros elsewhere), so that the
/// measures index rows by point as in a full run; the other rows are computed and dropped.
fn spread<T: Copy + Default>(block: Vec<T>, n: usize, k: usize, start: usize) -> Vec<T> {
    if block.is_empty() {
        return block; // not planned (the cross distances without Needs::cross_dists)
    }
    let mut full = vec![T::default(); n * k];
    full[start * k..start * k + block.len()].copy_from_slice(&block);
    full
}

impl Evaluator {
    /// Scores `specs` on the rows `rows` of `low` only: the shard's [`Partial`]. `rows` must be
    /// a block of the shard plan ([`is_block`], [`plan`]); every spec must be in [`SHARDABLE`](super::SHARDABLE).
    /// The evaluator's backend serves it as it would a full run (`auto`'s threshold weighs the
    /// block's rows × n pairs), always in the exact posture; [`Partial::backend`] says which
    /// served. The scores do not depend on backend, threads or block size.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn map_rows(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        rows: Range<usize>,
        specs: &[Spec],
    ) -> Result<Partial> {
        let blocks = std::slice::from_ref(&rows);
        let mut parts = self.on_threads(|| pollster::block_on(self.map_blocks_async(low, labels, blocks, specs)))?;
        Ok(parts.remove(0))
    }

    /// [`Evaluator::map_rows`] for consecutive blocks of the shard plan at once (a worker's
    /// span of rows): one row pass over the span, one [`Partial`] per block, each the same
    /// scores as [`Evaluator::map_rows`] gives for that block. The span's work tallies are
    /// reported on its first block's partial (the others report none), so the fold's total is
    /// the span's.
    ///
    /// An evaluator that maps the same span again keeps what it found of the original space for
    /// those rows only: their kNN lists and, as [`crate::ResidentRanks`] says (from the second
    /// call that needs cross ranks by default), their rows of the rank table. A pool of
    /// workers, each mapping its own span, so splits the resident state instead of copying it.
    pub async fn map_blocks_async(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        blocks: &[Range<usize>],
        specs: &[Spec],
    ) -> Result<Vec<Partial>> {
        let high = self.high();
        let n = high.n();
        let resolved = self.validate(&[low], labels, specs)?;
        check_shardable(&resolved)?;
        let Some(first) = blocks.first() else {
            return Err(Error::BadRows { start: 0, end: 0, n, reason: "no blocks given".into() });
        };
        let mut at = first.start;
        for rows in blocks {
            if rows.start >= rows.end || rows.end > n || !is_block(n, rows) {
                let near: Vec<String> =
                    plan(n, rows.len().max(1)).iter().map(|b| format!("{}:{}", b.start, b.end)).collect();
                let shown = if near.len() > 8 {
                    format!("{} ... ({} blocks)", near[..8].join(" "), near.len())
                } else {
                    near.join(" ")
                };
                return Err(Error::BadRows {
                    start: rows.start,
                    end: rows.end,
                    n,
                    reason: format!("blocks are nodes of the summation tree, e.g. {shown}"),
                });
            }
            if rows.start != at {
                return Err(Error::BadRows {
                    start: rows.start,
                    end: rows.end,
                    n,
                    reason: format!("the blocks of one span must follow each other (the previous ends at {at})"),
                });
            }
            at = rows.end;
        }
        let span = first.start..at;
        let needs = resolved.iter().map(Resolved::needs).fold(Needs::default(), Needs::merge);
        let needs_nerv = Needs { nerv: needs.nerv.clone(), ..Needs::default() };
        let ks = needs.pass_ks(1);
        // coranking with list-needing measures on the CPU: one fused pass per block gives the
        // lists and that block's counts; else the row pass over the span, with its resident state.
        let cpu = self.options().backend == crate::backend::BackendChoice::Cpu;
        let fuse = crate::evaluate::fuse_km(&resolved, &needs, high).filter(|_| cpu);
        let ctl = crate::control::Control::default();
        let (pass, served, cached, fused_counts) = match fuse {
            Some(km) => {
                let lists = ListKs { kh: ks.kh, kl: ks.kl, kc: ks.kc.max(ks.kcl) };
                let (mut counts, mut parts) = (Vec::new(), Vec::new());
                for rows in blocks {
                    let block_rows = self.options().block_rows;
                    let (c, f) = coranking::fused(high, low, km, lists, block_rows, &ctl, rows.clone())?;
                    counts.push(c);
                    parts.push(f);
                }
                (fused_output(parts, span.len(), high, low), Served::cpu(None), None, Some((km, counts)))
            }
            None => {
                let (cached, table) = self.span_resident(&span, &needs);
                // The backend of a full run serves the span (the CPU, or the GPU's certified
                // kernels on its rows only), always exact: partials must fold to the reference's
                // bits.
                let (pass, served) = self
                    .build(
                        cached.as_deref(),
                        table.as_ref(),
                        &[low],
                        needs.clone(),
                        span.clone(),
                        Numerics::Exact,
                        None,
                    )
                    .await?;
                (pass, served, cached, None)
            }
        };
        self.high().distances().map_or(Ok(()), |d| d.check_reads())?;
        #[cfg(feature = "gpu")]
        let adapter = served.gpu.as_ref().map(|(g, _)| g.report.name.clone());
        #[cfg(not(feature = "gpu"))]
        let adapter = None;
        let start = span.start;
        let knn_high = match (pass.high, cached) {
            (Some(h), _) => {
                let h = Arc::new(Neighbours {
                    k: h.k,
                    idx: spread(h.idx, n, h.k, start),
                    dist: spread(h.dist, n, h.k, start),
                });
                let mut state = self.span.lock().expect("span lock");
                if state.rows == span {
                    state.knn = Some(h.clone());
                }
                Some(h)
            }
            (None, cached) => cached,
        };
        if needs.cross > 0 {
            self.span.lock().expect("span lock").cross_calls += 1;
        }
        let res = pass.lows.into_iter().next().unwrap_or_default();
        let knn_low = res.knn.map(|l| Neighbours {
            k: l.k,
            idx: spread(l.idx, n, l.k, start),
            dist: spread(l.dist, n, l.k, start),
        });
        let cross = res.cross.map(|c| CrossRanks {
            k: c.k,
            rank_high_of_low: spread(c.rank_high_of_low, n, c.k, start),
            rank_low_of_high: spread(c.rank_low_of_high, n, c.k, start),
            dist_high_of_low: spread(c.dist_high_of_low, n, c.k, start),
            dist_low_of_high: spread(c.dist_low_of_high, n, c.k, start),
        });
        // nerv: its span's full rows (each row's divergences need only that row).
        let pairwise = if needs_nerv.nerv.is_empty() {
            None
        } else {
            Some(nerv_rows(high, low, &needs_nerv, self.options().block_rows, &ctl, span.clone())?)
        };
        let ctx = Ctx {
            high,
            low,
            labels,
            knn_high: knn_high.as_deref(),
            knn_low: knn_low.as_ref(),
            cross: cross.as_ref(),
            pairwise: pairwise.as_ref(),
            block_rows: self.options().block_rows,
            local: true,
            ctl: &ctl,
            coranking: None,
            memory_budget: crate::resources::default_memory_budget(),
        };
        let texts: Vec<String> = resolved.iter().map(spec_text).collect();
        // Each measure once over the span (its local values are per row); coranking's counts per
        // block (each row's summary is its block's local value), the span's tallies on the first.
        let mut outs = Vec::with_capacity(resolved.len());
        let mut fused_counts = fused_counts;
        for r in &resolved {
            outs.push(if r.def.id == "coranking" {
                let km = coranking::k_max(r, n);
                let per_block = match fused_counts.take() {
                    Some((fk, counts)) if fk == km => counts,
                    other => {
                        fused_counts = other;
                        let block_rows = ctx.block_rows;
                        let count =
                            |b: &Range<usize>| coranking::counts_rows(high, low, km, block_rows, &ctl, b.clone());
                        blocks.iter().map(count).collect::<Result<Vec<_>>>()?
                    }
                };
                Err(tallies_on_first(per_block)?)
            } else {
                Ok((r.def.compute)(&ctx, r)?)
            });
        }
        let prefix = *self.high_fingerprint.get_or_init(|| fingerprint_high(high));
        let fingerprint = fingerprint(prefix, high, low, labels, &texts);
        let s = pass.stats;
        let mut partials = Vec::with_capacity(blocks.len());
        for (b, rows) in blocks.iter().enumerate() {
            let mut scores = Vec::with_capacity(resolved.len());
            for (r, out) in resolved.iter().zip(&mut outs) {
                let own;
                let (out, counts) = match out {
                    Ok(out) => (&*out, None),
                    Err(per_block) => {
                        let mut c = std::mem::replace(&mut per_block[b], CoRankCounts::empty());
                        let local =
                            vec![("local_auc_rnx".to_string(), spread(std::mem::take(&mut c.rows), n, 1, rows.start))];
                        own = crate::measures::Output { local, ..Default::default() };
                        (&own, Some(c))
                    }
                };
                scores.push(PartialScore { id: r.def.id.into(), locals: locals(r, out, low, rows)?, counts });
            }
            let work = if b == 0 {
                PartialWork {
                    distance_rows: s.distance_rows,
                    ranks_from_knn: s.ranks_from_knn,
                    ranks_counted: s.ranks_counted,
                    rank_scans: s.rank_scans,
                    ranks_from_table: s.ranks_from_table,
                    low_rows_indexed: s.low_rows_indexed,
                    low_ranks_indexed: s.low_ranks_indexed,
                    low_index_fallbacks: s.low_index_fallbacks,
                    rows_fused: s.rows_fused,
                    rows_integer_keys: s.rows_integer_keys,
                }
            } else {
                PartialWork::default()
            };
            partials.push(Partial {
                format: PARTIAL_FORMAT.into(),
                version: PARTIAL_VERSION,
                fingerprint: fingerprint.clone(),
                n,
                dim_high: high.dim(),
                dim_low: low.dim(),
                projection: low.name().into(),
                specs: texts.clone(),
                rows: [rows.start, rows.end],
                scores,
                work,
                backend: served.backend.into(),
                adapter: adapter.clone(),
                fallback_reason: served.fallback_reason.clone(),
                metric_high: high.metric().to_string(),
                input_high: high.input().into(),
                checksum: String::new(),
            });
            partials.last_mut().expect("just pushed").seal();
        }
        Ok(partials)
    }
}

impl Evaluator {
    /// The span's resident state, kept while the same span is mapped: the original kNN of its
    /// rows when long enough, and the plan of its rank-table rows when cross ranks are needed.
    fn span_resident(&self, span: &Range<usize>, needs: &Needs) -> (Option<Arc<Neighbours>>, Option<TablePlan>) {
        let n = self.high().n();
        let ks = needs.pass_ks(1);
        let mut state = self.span.lock().expect("span lock");
        if state.rows != *span {
            *state = SpanState { rows: span.clone(), ..SpanState::default() };
        }
        let cached = state.knn.clone().filter(|c| ks.kh > 0 && c.k >= ks.kh);
        let table = (needs.cross > 0).then(|| {
            let other = needs.list_bytes(n, 1);
            let (policy, budget) = (self.options().resident_ranks, self.budgets().memory_bytes());
            // The span's own rows, or the whole table if a full run built it.
            let held = state.table.clone().or_else(|| self.full_table());
            plan_rank_table(n, span.len(), policy, held, state.cross_calls, other, budget)
        });
        (cached, table)
    }
}

/// The blocks' co-ranking counts with the span's tallies on the first block and zeros on the
/// others (the fold adds them, so its sum is unchanged): one set of curves' tallies travels per
/// span instead of one per block. Each block keeps its own rows' summaries (its local values).
fn tallies_on_first(mut per_block: Vec<CoRankCounts>) -> Result<Vec<CoRankCounts>> {
    let mut total = CoRankCounts { rows: Vec::new(), ..per_block[0].clone() };
    for c in &per_block[1..] {
        if !total.add(&CoRankCounts { rows: Vec::new(), ..c.clone() }) {
            return Err(Error::Undefined {
                id: "coranking".into(),
                projection: None,
                reason: "a co-ranking tally overflows".into(),
            });
        }
    }
    for (b, c) in per_block.iter_mut().enumerate() {
        let rows = std::mem::take(&mut c.rows);
        *c = if b == 0 { CoRankCounts { rows, ..total.clone() } } else { CoRankCounts { rows, ..total.zeros() } };
    }
    Ok(per_block)
}

/// The span's lists from its blocks' fused passes (in order), as a row pass's output.
fn fused_output(parts: Vec<FusedLists>, rows: usize, x: &Points, y: &Points) -> PassOutput {
    fn cat<T: Copy>(parts: &[FusedLists], f: impl Fn(&FusedLists) -> Option<&Vec<T>>) -> Vec<T> {
        parts.iter().flat_map(|p| f(p).into_iter().flatten().copied()).collect()
    }
    let first = &parts[0];
    let knn = |k: usize, idx: Vec<u32>, dist: Vec<f64>| Neighbours { k, idx, dist };
    let high = first.high.as_ref().map(|h| {
        knn(h.k, cat(&parts, |p| p.high.as_ref().map(|x| &x.idx)), cat(&parts, |p| p.high.as_ref().map(|x| &x.dist)))
    });
    let low = first.low.as_ref().map(|l| {
        knn(l.k, cat(&parts, |p| p.low.as_ref().map(|x| &x.idx)), cat(&parts, |p| p.low.as_ref().map(|x| &x.dist)))
    });
    let cross = first.cross.as_ref().map(|c| CrossRanks {
        k: c.k,
        rank_high_of_low: cat(&parts, |p| p.cross.as_ref().map(|x| &x.rank_high_of_low)),
        rank_low_of_high: cat(&parts, |p| p.cross.as_ref().map(|x| &x.rank_low_of_high)),
        dist_high_of_low: cat(&parts, |p| p.cross.as_ref().map(|x| &x.dist_high_of_low)),
        dist_low_of_high: cat(&parts, |p| p.cross.as_ref().map(|x| &x.dist_low_of_high)),
    });
    PassOutput {
        high,
        lows: vec![ProjectionResources { knn: low, cross }],
        stats: PassStats {
            distance_rows: 2 * rows as u64,
            rows_fused: rows as u64,
            rows_integer_keys: crate::resources::lattice_rows(x, y, rows),
            ..PassStats::default()
        },
        extents: Default::default(),
        low_index: Vec::new(),
        coranking: Vec::new(),
        high_rows: None,
    }
}

/// A measure's local values on the block `rows`, each key's values with their pairwise sum.
fn locals(r: &Resolved, out: &crate::measures::Output, low: &Points, rows: &Range<usize>) -> Result<Vec<PartialLocal>> {
    r.def
        .local_keys()
        .map(|key| {
            let all = out.local.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            let all = all.ok_or_else(|| Error::Undefined {
                id: r.def.id.into(),
                projection: Some(low.name().into()),
                reason: format!("no local values under {key}"),
            })?;
            let mine = &all[rows.clone()];
            if let Some(v) = mine.iter().find(|v| !v.is_finite()) {
                return Err(Error::NonFiniteScore {
                    id: r.def.id.into(),
                    projection: Some(low.name().into()),
                    key: key.to_string(),
                    value: *v,
                });
            }
            Ok(PartialLocal {
                key: key.to_string(),
                bits: mine.iter().map(|v| v.to_bits()).collect(),
                sum_bits: pairwise_sum(mine).to_bits(),
            })
        })
        .collect()
}

/// FNV-1a 64: a stable hash across platforms and releases (not a cryptographic one).
struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn points(&mut self, p: &Points) {
        self.u64(p.n() as u64);
        self.u64(p.dim() as u64);
        p.as_slice().iter().for_each(|v| self.u64(v.to_bits()));
    }
    fn text(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

/// The fingerprint's hash state after the format version and the original space (its points;
/// the rest of the original space's part, metric and distances, follows the projection).
fn fingerprint_high(high: &Points) -> u64 {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.u64(u64::from(PARTIAL_VERSION));
    h.points(high);
    h.0
}

/// The fingerprint of a run's inputs and specs, continuing [`fingerprint_high`]'s state
/// `high_state` (of the evaluator's original space `high`) with the projection, the original
/// space's metric and distances, the labels and the specs.
fn fingerprint(high_state: u64, high: &Points, low: &Points, labels: Option<&Labels>, specs: &[String]) -> String {
    let mut h = Fnv(high_state);
    h.points(low);
    // The original space's metric, and its distances when they were given.
    h.text(&high.metric().to_string());
    if let Some(d) = high.distances() {
        let mut row = vec![0.0; d.n()];
        for i in 0..d.n() {
            d.row_from(i, 0, &mut row);
            row.iter().for_each(|v| h.u64(v.to_bits()));
        }
    }
    match labels {
        Some(l) => l.codes().iter().for_each(|&c| h.u64(u64::from(c) + 1)),
        None => h.u64(0),
    }
    h.text(low.name());
    specs.iter().for_each(|s| h.text(s));
    format!("{:016x}", h.0)
}

/// A resolved spec as text, defaults filled in; parses back to the same [`Resolved`].
fn spec_text(r: &Resolved) -> String {
    Spec { id: r.def.id.into(), params: r.params.clone() }.to_string()
}
