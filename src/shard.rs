//! Exact row-block shards (issue 16): [`Evaluator::map_rows`] scores one block of rows anywhere
//! (another process, another machine) into a serialisable [`Partial`]; [`fold`] joins the
//! partials of every block into the same [`Evaluation`], bit for bit, as one
//! [`Evaluator::measure_many`] call. docs/distributed.md gives the argument.
//!
//! Why the blocks are aligned: a measure's value is `np.mean` of its local values, a pairwise
//! sum whose order depends only on n ([`crate::sum`]): a run of more than 128 terms splits at
//! half its length rounded down to a multiple of 8. A block of the plan is a node of that
//! split tree, so its own pairwise sum is the node's sum and the fold adds the nodes as the
//! tree does. `coranking`'s values are not means: its blocks carry their integer tallies, whose
//! sum is the whole pass's, and the fold computes the curves and values from that sum.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::data::{Labels, Points};
use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measures::coranking;
use crate::measures::{Ctx, Resolved};
use crate::report::{BlockPlan, Evaluation, ProjectionScores, RunReport, Score, Served, Timings};
use crate::resources::{CoRankCounts, CrossRanks, Needs, Neighbours, PassStats, row_pass_rows};
use crate::spec::Spec;
use crate::sum::pairwise_sum;

/// The [`Partial`] format's version; [`fold`] refuses any other.
pub const PARTIAL_VERSION: u32 = 1;
/// The [`Partial`] format's name, the first field of its JSON.
pub const PARTIAL_FORMAT: &str = "faithful-partial";
/// The measures whose every value is the mean of per-row local values that need only their
/// own row's neighbours and ranks.
/// `coranking` is exact too: its per-row tallies are integers that add, and the fold computes
/// its curves and values from their sum.
pub const SHARDABLE: &[&str] = &["tnc", "mrre", "lcmc", "nh", "ca_tnc", "coranking"];

/// Runs of at most this many terms are one leaf of NumPy's pairwise sum (not split further).
const LEAF: usize = 128;

/// The two halves of the summation tree's node `r` (None for a leaf, of at most 128 rows).
pub fn halves(r: &Range<usize>) -> Option<(Range<usize>, Range<usize>)> {
    let len = r.len();
    if len <= LEAF {
        return None;
    }
    let half = len / 2 - (len / 2) % 8;
    Some((r.start..r.start + half, r.start + half..r.end))
}

/// Whether `rows` is a node of the summation tree of `n` rows (a block a shard may take).
pub fn is_block(n: usize, rows: &Range<usize>) -> bool {
    let mut node = 0..n;
    loop {
        if node == *rows {
            return true;
        }
        match halves(&node) {
            Some((a, _)) if rows.start >= a.start && rows.end <= a.end => node = a,
            Some((a, b)) if rows.start >= b.start && rows.end <= b.end && rows.start >= a.end => node = b,
            _ => return false,
        }
    }
}

/// A shard plan: blocks of the summation tree covering `0..n` in order, each of at most
/// `max_rows` rows where the tree allows (a leaf of up to 128 rows is never split).
pub fn plan(n: usize, max_rows: usize) -> Vec<Range<usize>> {
    fn go(node: Range<usize>, max: usize, out: &mut Vec<Range<usize>>) {
        match halves(&node) {
            Some((a, b)) if node.len() > max => {
                go(a, max, out);
                go(b, max, out);
            }
            _ => out.push(node),
        }
    }
    let mut out = Vec::new();
    go(0..n, max_rows.max(1), &mut out);
    out
}

/// One row block's share of a run: its local values with their pairwise sums, the work done,
/// and a fingerprint of the inputs and specs. Serialised as JSON ([`Partial::to_json`]); f64s
/// travel as their IEEE bits so that no decimal round trip can change one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    /// [`PARTIAL_FORMAT`].
    pub format: String,
    /// [`PARTIAL_VERSION`].
    pub version: u32,
    /// FNV-1a 64 of the version, n, dimensions, coordinates, labels, projection name and
    /// resolved specs: partials of different runs never fold together.
    pub fingerprint: String,
    /// Points.
    pub n: usize,
    /// Dimensions of the original space.
    pub dim_high: usize,
    /// Dimensions of the projection.
    pub dim_low: usize,
    /// The projection's name.
    pub projection: String,
    /// The resolved specs, defaults filled in (`tnc:k=5`).
    pub specs: Vec<String>,
    /// The block: rows `rows[0]..rows[1]`.
    pub rows: [usize; 2],
    /// One per spec, in order.
    pub scores: Vec<PartialScore>,
    /// The row pass's work on this block.
    pub work: PartialWork,
}

/// One spec's share of a block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialScore {
    /// The measure's id.
    pub id: String,
    /// One per local key, in the measure's order.
    pub locals: Vec<PartialLocal>,
    /// The co-ranking tallies of the block's rows (`coranking` only).
    pub counts: Option<PartialCounts>,
}

/// A block's co-ranking tallies ([`CoRankCounts`] without the row summaries, which are the
/// block's local values): integer numerators, index K − 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialCounts {
    /// Largest K.
    pub k_max: usize,
    /// Largest K with T and C tallied.
    pub k_tnc: usize,
    /// Q_NX's numerators.
    pub joint: Vec<u64>,
    /// Trustworthiness's numerators.
    pub trust: Vec<u128>,
    /// Continuity's numerators.
    pub cont: Vec<u128>,
    /// MRRE's false-neighbour numerators.
    pub err_low: Vec<u64>,
    /// MRRE's missing-neighbour numerators.
    pub err_high: Vec<u64>,
}

/// One local key's values on a block, and their pairwise sum (the tree node's sum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialLocal {
    /// The local key.
    pub key: String,
    /// `f64::to_bits` of each row's value.
    pub bits: Vec<u64>,
    /// `f64::to_bits` of their pairwise sum.
    pub sum_bits: u64,
}

/// The row pass's tallies ([`PassStats`]) of a block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialWork {
    /// Distance rows computed.
    pub distance_rows: u64,
    /// Cross ranks read off the other space's kNN list.
    pub ranks_from_knn: u64,
    /// Cross ranks counted over a whole row.
    pub ranks_counted: u64,
    /// Row scans done to count ranks.
    pub rank_scans: u64,
}

impl Partial {
    /// The JSON text (deterministic: the same block of the same run gives the same bytes).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a partial always serialises")
    }
    /// Reads a partial; `what` names it in errors (its file).
    pub fn from_json(text: &str, what: &str) -> Result<Partial> {
        let bad = |reason: String| Error::BadPartial { what: what.into(), reason };
        let p: Partial = serde_json::from_str(text).map_err(|e| bad(format!("not a faithful partial ({e})")))?;
        if p.format != PARTIAL_FORMAT {
            return Err(bad(format!("format is {:?}, expected {PARTIAL_FORMAT:?}", p.format)));
        }
        if p.version != PARTIAL_VERSION {
            return Err(bad(format!("version {} is not {PARTIAL_VERSION}, the one this faithful reads", p.version)));
        }
        Ok(p)
    }
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
    fn text(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

fn fingerprint(high: &Points, low: &Points, labels: Option<&Labels>, specs: &[String]) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    h.u64(u64::from(PARTIAL_VERSION));
    for p in [high, low] {
        h.u64(p.n() as u64);
        h.u64(p.dim() as u64);
        p.as_slice().iter().for_each(|v| h.u64(v.to_bits()));
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

fn check_shardable(resolved: &[Resolved]) -> Result<()> {
    match resolved.iter().find(|r| !SHARDABLE.contains(&r.def.id)) {
        Some(r) => {
            Err(Error::NotShardable { id: r.def.id.into(), shardable: "tnc, mrre, lcmc, nh, ca_tnc, coranking" })
        }
        None => Ok(()),
    }
}

/// Places a block's `m`×k rows at rows `start..` of an n×k list (zeros elsewhere), so that the
/// measures index rows by point as in a full run; the other rows are computed and dropped.
fn spread<T: Copy + Default>(block: Vec<T>, n: usize, k: usize, start: usize) -> Vec<T> {
    let mut full = vec![T::default(); n * k];
    full[start * k..start * k + block.len()].copy_from_slice(&block);
    full
}

impl Evaluator {
    /// Scores `specs` on the rows `rows` of `low` only: the shard's [`Partial`]. `rows` must be
    /// a block of the shard plan ([`is_block`], [`plan`]); every spec must be in [`SHARDABLE`].
    /// The CPU computes it; the result does not depend on threads or block size.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn map_rows(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        rows: Range<usize>,
        specs: &[Spec],
    ) -> Result<Partial> {
        self.on_threads(|| self.map_rows_here(low, labels, rows, specs))
    }

    fn map_rows_here(
        &self,
        low: &Points,
        labels: Option<&Labels>,
        rows: Range<usize>,
        specs: &[Spec],
    ) -> Result<Partial> {
        let high = self.high();
        let n = high.n();
        let resolved = self.validate(&[low], labels, specs)?;
        check_shardable(&resolved)?;
        if rows.start >= rows.end || rows.end > n || !is_block(n, &rows) {
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
        let needs = resolved.iter().map(Resolved::needs).fold(Needs::default(), Needs::merge);
        let pass = row_pass_rows(high, None, &[low], needs, self.options().block_rows, rows.clone());
        let start = rows.start;
        let knn_high = pass.high.map(|h| Neighbours {
            k: h.k,
            idx: spread(h.idx, n, h.k, start),
            dist: spread(h.dist, n, h.k, start),
        });
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
        let ctl = crate::control::Control::default();
        let ctx = Ctx {
            high,
            low,
            labels,
            knn_high: knn_high.as_ref(),
            knn_low: knn_low.as_ref(),
            cross: cross.as_ref(),
            pairwise: None,
            block_rows: self.options().block_rows,
            local: true,
            ctl: &ctl,
        };
        let texts: Vec<String> = resolved.iter().map(spec_text).collect();
        let mut scores = Vec::with_capacity(resolved.len());
        for r in &resolved {
            let (out, counts) = if r.def.id == "coranking" {
                let c = coranking::counts_rows(high, low, coranking::k_max(r, n), ctx.block_rows, &ctl, rows.clone())?;
                let local = vec![("local_auc_rnx".to_string(), spread(c.rows.clone(), n, 1, start))];
                let counts = PartialCounts {
                    k_max: c.k_max,
                    k_tnc: c.k_tnc,
                    joint: c.joint,
                    trust: c.trust,
                    cont: c.cont,
                    err_low: c.err_low,
                    err_high: c.err_high,
                };
                (crate::measures::Output { local, ..Default::default() }, Some(counts))
            } else {
                ((r.def.compute)(&ctx, r)?, None)
            };
            let locals = r
                .def
                .local_keys
                .iter()
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
                .collect::<Result<Vec<_>>>()?;
            scores.push(PartialScore { id: r.def.id.into(), locals, counts });
        }
        let s = pass.stats;
        Ok(Partial {
            format: PARTIAL_FORMAT.into(),
            version: PARTIAL_VERSION,
            fingerprint: fingerprint(high, low, labels, &texts),
            n,
            dim_high: high.dim(),
            dim_low: low.dim(),
            projection: low.name().into(),
            specs: texts,
            rows: [rows.start, rows.end],
            scores,
            work: PartialWork {
                distance_rows: s.distance_rows,
                ranks_from_knn: s.ranks_from_knn,
                ranks_counted: s.ranks_counted,
                rank_scans: s.rank_scans,
            },
        })
    }
}

/// Joins the partials of every block of one run (in any order) into its [`Evaluation`]: the
/// same scores, bit for bit, as one [`Evaluator::measure_many`] with local values. Refuses a
/// gap, an overlap, a block off the plan, partials of different runs, and a partial whose sums
/// do not match its values.
pub fn fold(partials: &[Partial]) -> Result<Evaluation> {
    let what = |i: usize| format!("partial {i} (rows {}:{})", partials[i].rows[0], partials[i].rows[1]);
    let bad = |i: usize, reason: String| Error::BadPartial { what: what(i), reason };
    let first = partials
        .first()
        .ok_or_else(|| Error::BadPartial { what: "fold".into(), reason: "no partials given".into() })?;
    let n = first.n;
    let mut by_start: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, p) in partials.iter().enumerate() {
        if p.fingerprint != first.fingerprint || p.specs != first.specs || p.n != n {
            return Err(bad(
                i,
                format!(
                    "fingerprint {} differs from partial 0's {}: another run's inputs or specs",
                    p.fingerprint, first.fingerprint
                ),
            ));
        }
        check_partial(p, n).map_err(|r| bad(i, r))?;
        if let Some(&j) = by_start.get(&p.rows[0]) {
            return Err(bad(i, format!("overlaps {}", what(j))));
        }
        by_start.insert(p.rows[0], i);
    }
    let mut next = 0;
    for (&start, &i) in &by_start {
        if start < next {
            return Err(bad(i, format!("overlaps rows before {next}")));
        }
        if start > next {
            return Err(Error::BadPartial {
                what: "fold".into(),
                reason: format!("rows {next}:{start} are in no partial"),
            });
        }
        next = partials[i].rows[1];
    }
    if next != n {
        return Err(Error::BadPartial { what: "fold".into(), reason: format!("rows {next}:{n} are in no partial") });
    }
    let order: Vec<&Partial> = by_start.values().map(|&i| &partials[i]).collect();
    let mut scores = Vec::with_capacity(first.specs.len());
    for (s, text) in first.specs.iter().enumerate() {
        let spec: Spec = text.parse()?;
        let mut r = Resolved::new(&spec)?;
        r.default_k(n);
        let keys = r.keys();
        if r.def.id == "coranking" {
            scores.push(fold_coranking(&r, &order, s, n)?);
            continue;
        }
        let mut values = Vec::with_capacity(keys.len());
        let mut local = Vec::with_capacity(keys.len());
        for (l, key) in r.def.local_keys.iter().enumerate() {
            let sums: BTreeMap<usize, (usize, f64)> = order
                .iter()
                .map(|p| (p.rows[0], (p.rows[1], f64::from_bits(p.scores[s].locals[l].sum_bits))))
                .collect();
            // Each value key is the mean of the local key in the same position (SHARDABLE).
            values.push((keys[l].clone(), tree_sum(0..n, &sums) / n as f64));
            let all =
                order.iter().flat_map(|p| p.scores[s].locals[l].bits.iter().map(|&b| f64::from_bits(b))).collect();
            local.push((key.to_string(), all));
        }
        scores.push(Score {
            id: r.def.id.into(),
            params: r.params.clone(),
            values,
            local: Some(local),
            curves: Vec::new(),
        });
    }
    let work = order.iter().fold(PassStats::default(), |mut w, p| {
        w.distance_rows += p.work.distance_rows;
        w.ranks_from_knn += p.work.ranks_from_knn;
        w.ranks_counted += p.work.ranks_counted;
        w.rank_scans += p.work.rank_scans;
        w
    });
    Ok(Evaluation {
        projections: vec![ProjectionScores { name: first.projection.clone(), scores }],
        run: fold_report(first, order.len(), work),
    })
}

/// `coranking` from the blocks' tallies: their sum is the whole pass's counts, and the measure's
/// output is a fixed function of those integers.
fn fold_coranking(r: &Resolved, order: &[&Partial], s: usize, n: usize) -> Result<Score> {
    let mut total: Option<CoRankCounts> = None;
    for p in order {
        let score = &p.scores[s];
        let bad = |reason: &str| Error::BadPartial {
            what: format!("partial of rows {}:{}", p.rows[0], p.rows[1]),
            reason: format!("coranking: {reason}"),
        };
        let c = score.counts.as_ref().ok_or_else(|| bad("no co-ranking counts"))?;
        let km = coranking::k_max(r, n);
        let sized = [c.joint.len(), c.trust.len(), c.cont.len(), c.err_low.len(), c.err_high.len()];
        if c.k_max != km || c.k_tnc != crate::resources::tnc_limit(n).min(km) || sized.iter().any(|&l| l != km) {
            return Err(bad(&format!("counts are not sized for k_max={km}")));
        }
        let block = CoRankCounts {
            n,
            k_max: km,
            k_tnc: c.k_tnc,
            joint: c.joint.clone(),
            trust: c.trust.clone(),
            cont: c.cont.clone(),
            err_low: c.err_low.clone(),
            err_high: c.err_high.clone(),
            rows: score.locals[0].bits.iter().map(|&b| f64::from_bits(b)).collect(),
        };
        match &mut total {
            Some(t) => {
                if !t.add(&block) {
                    return Err(bad("a count overflows (a damaged partial)"));
                }
            }
            None => total = Some(block),
        }
    }
    let out = coranking::output(total.expect("at least one partial"));
    let value =
        |key: &str| out.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v).expect("coranking writes its keys");
    let values = r.keys().into_iter().map(|k| (k.clone(), value(&k))).collect();
    Ok(Score { id: r.def.id.into(), params: r.params.clone(), values, local: Some(out.local), curves: out.curves })
}

/// The checks of one partial on its own: a block of the plan, its scores shaped as its specs
/// say, its sums those of its values.
fn check_partial(p: &Partial, n: usize) -> std::result::Result<(), String> {
    let rows = p.rows[0]..p.rows[1];
    if rows.is_empty() || rows.end > n || !is_block(n, &rows) {
        return Err(format!("rows {}:{} are not a block of the shard plan for n={n}", rows.start, rows.end));
    }
    if p.scores.len() != p.specs.len() {
        return Err(format!("{} scores for {} specs", p.scores.len(), p.specs.len()));
    }
    for (score, text) in p.scores.iter().zip(&p.specs) {
        let spec: Spec = text.parse().map_err(|e: Error| e.to_string())?;
        let r = Resolved::new(&spec).map_err(|e| e.to_string())?;
        if !SHARDABLE.contains(&r.def.id) || score.id != r.def.id {
            return Err(format!("score {} does not match spec {text}", score.id));
        }
        let keys: Vec<&str> = score.locals.iter().map(|l| l.key.as_str()).collect();
        if keys != r.def.local_keys {
            return Err(format!("{}: local keys {keys:?}, expected {:?}", score.id, r.def.local_keys));
        }
        for l in &score.locals {
            let v: Vec<f64> = l.bits.iter().map(|&b| f64::from_bits(b)).collect();
            if v.len() != rows.len() {
                return Err(format!("{}: {} values for {} rows", l.key, v.len(), rows.len()));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("{}: a value is not finite", l.key));
            }
            if pairwise_sum(&v).to_bits() != l.sum_bits {
                return Err(format!("{}: the stored sum is not the sum of the values (a damaged partial)", l.key));
            }
        }
    }
    Ok(())
}

/// The pairwise sum of rows `node` from the blocks' sums, adding the tree's nodes as
/// [`crate::sum`] adds them (the blocks were checked to tile `0..n` with tree nodes).
fn tree_sum(node: Range<usize>, sums: &BTreeMap<usize, (usize, f64)>) -> f64 {
    match sums.get(&node.start) {
        Some(&(end, s)) if end == node.end => s,
        _ => {
            let (a, b) = halves(&node).expect("blocks tile the tree");
            tree_sum(a, sums) + tree_sum(b, sums)
        }
    }
}

fn fold_report(p: &Partial, blocks: usize, work: PassStats) -> RunReport {
    let served = ["knn_high", "knn_low", "cross_ranks", "measures"]
        .iter()
        .map(|o| Served { output: o.to_string(), backend: "cpu".into(), numerics: "exact".into() })
        .collect();
    RunReport {
        faithful_version: env!("CARGO_PKG_VERSION"),
        backend_requested: "cpu".into(),
        backend: "cpu".into(),
        numerics: "exact".into(),
        fallback_reason: None,
        adapter: None,
        gpu: None,
        threads: rayon::current_num_threads(),
        n: p.n,
        dim_high: p.dim_high,
        dims_low: vec![p.dim_low],
        served,
        plan: BlockPlan {
            needs: Needs::default(),
            knn_high_reused: false,
            block_rows: 0,
            blocks,
            scratch_bytes_per_worker: 0,
            resource_bytes: 0,
            pairwise: None,
        },
        work: PassStats { blocks, ..work },
        timings: Timings::default(),
    }
}
