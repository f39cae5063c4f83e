//! [`fold`]: the partials of every block joined into one run's [`Evaluation`], with the checks
//! that catch gaps, overlaps, mixed runs and damaged partials.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{Partial, SHARDABLE, halves, is_block};
use crate::error::{Error, Result};
use crate::measures::coranking;
use crate::measures::{HighReads, Resolved};
use crate::report::{BlockPlan, Evaluation, ProjectionScores, RunReport, Score, Served, Timings};
use crate::resources::{CoRankCounts, Needs, PassStats};
use crate::spec::Spec;
use crate::sum::pairwise_sum;

/// Joins the partials of every block of one run (in any order) into its [`Evaluation`]: the
/// same scores, bit for bit, as one [`crate::Evaluator::measure_many`] with local values. Refuses a
/// gap, an overlap, a block off the plan, partials of different runs, and a partial whose sums
/// do not match its values.
///
/// The run report's timings are the fold's own (checking the partials, folding their scores):
/// a partial carries no timings, so that a block's partial is the same bytes on every run.
pub fn fold(partials: &[Partial]) -> Result<Evaluation> {
    fold_named(partials, &[])
}

/// [`fold`], naming partial `i` `names[i]` in errors (its file, for the command line) instead
/// of `partial i`.
#[doc(hidden)]
pub fn fold_named(partials: &[Partial], names: &[String]) -> Result<Evaluation> {
    let t0 = web_time::Instant::now();
    let what = |i: usize| {
        let name = names.get(i).cloned().unwrap_or_else(|| format!("partial {i}"));
        format!("{name} (rows {}:{})", partials[i].rows[0], partials[i].rows[1])
    };
    let bad = |i: usize, reason: String| Error::BadPartial { what: what(i), reason };
    let first = partials
        .first()
        .ok_or_else(|| Error::BadPartial { what: "fold".into(), reason: "no partials given".into() })?;
    let n = first.n;
    if n < 2 {
        // No run has fewer points (`Error::TooFewPoints`); the measures' arithmetic assumes two.
        return Err(bad(0, format!("n = {n}: a run has at least 2 points")));
    }
    // An original space given as its distance matrix has no coordinates (0 dimensions); one
    // given as coordinates, and every projection, has at least one.
    if (first.dim_high == 0 && first.input_high == "coordinates") || first.dim_low == 0 {
        return Err(bad(0, "a space of 0 dimensions: a run has at least one in each".into()));
    }
    // The specs under `measure`'s own rules for n points (k, k_max), before anything is folded;
    // a spec that reads the original coordinates (the registry's `HighReads`) needs partials
    // made from coordinates of at least one dimension.
    for text in &first.specs {
        let spec: Spec = text.parse().map_err(|e: Error| bad(0, e.to_string()))?;
        let mut r = Resolved::new(&spec).map_err(|e| bad(0, e.to_string()))?;
        r.default_k(n);
        r.check_k(n).map_err(|e| bad(0, e.to_string()))?;
        if r.high_reads() == HighReads::Coordinates && (first.input_high != "coordinates" || first.dim_high == 0) {
            return Err(bad(
                0,
                format!(
                    "{}: reads the original coordinates; the partials' original space is a {} of {} dimensions",
                    r.def.id, first.input_high, first.dim_high
                ),
            ));
        }
    }
    let mut by_start: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, p) in partials.iter().enumerate() {
        same_run(p, first).map_err(|r| bad(i, r))?;
        check_partial(p, n).map_err(|r| bad(i, r))?;
        if let Some(&j) = by_start.get(&p.rows[0]) {
            // One file named twice reads "X overlaps X" otherwise.
            let reason =
                if what(j) == what(i) { "is given twice".to_string() } else { format!("overlaps {}", what(j)) };
            return Err(bad(i, reason));
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
    let indices: Vec<usize> = by_start.values().copied().collect();
    let t_valid = t0.elapsed().as_secs_f64();
    let mut scores = Vec::with_capacity(first.specs.len());
    for (s, text) in first.specs.iter().enumerate() {
        let spec: Spec = text.parse()?;
        let mut r = Resolved::new(&spec)?;
        r.default_k(n);
        let keys = r.keys();
        if r.def.id == "coranking" {
            scores.push(fold_coranking(&r, &order, s, n).map_err(|(at, reason)| bad(indices[at], reason))?);
            continue;
        }
        let mut values = Vec::with_capacity(keys.len());
        let mut local = Vec::with_capacity(keys.len());
        for (l, key) in r.def.local_keys().enumerate() {
            let sums: BTreeMap<usize, (usize, f64)> = order
                .iter()
                .map(|p| (p.rows[0], (p.rows[1], f64::from_bits(p.scores[s].locals[l].sum_bits))))
                .collect();
            // Each value key is the mean of the local key in the same position (SHARDABLE);
            // locals after the last value key (knn_overlap's counts) carry no value.
            if l < keys.len() {
                values.push((keys[l].clone(), tree_sum(0..n, &sums) / n as f64));
            }
            let all =
                order.iter().flat_map(|p| p.scores[s].locals[l].bits.iter().map(|&b| f64::from_bits(b))).collect();
            local.push((key.to_string(), all));
        }
        scores.push(Score::new(&r, values, Some(local), Vec::new()));
    }
    // No folded value is NaN or infinite (finite values can sum past f64's range): a typed
    // error naming the key, as `measure` gives, never a `null` or a NaN.
    for score in &scores {
        finite(score).map_err(|e| e.on_projection(&first.projection))?;
    }
    // Work tallies are reports, not scores: a damaged partial's huge tally saturates.
    let work = order.iter().fold(PassStats::default(), |mut w, p| {
        w.distance_rows = w.distance_rows.saturating_add(p.work.distance_rows);
        w.ranks_from_knn = w.ranks_from_knn.saturating_add(p.work.ranks_from_knn);
        w.ranks_counted = w.ranks_counted.saturating_add(p.work.ranks_counted);
        w.rank_scans = w.rank_scans.saturating_add(p.work.rank_scans);
        w.ranks_from_table = w.ranks_from_table.saturating_add(p.work.ranks_from_table);
        w.low_rows_indexed = w.low_rows_indexed.saturating_add(p.work.low_rows_indexed);
        w.low_ranks_indexed = w.low_ranks_indexed.saturating_add(p.work.low_ranks_indexed);
        w.low_index_fallbacks = w.low_index_fallbacks.saturating_add(p.work.low_index_fallbacks);
        w.rows_fused = w.rows_fused.saturating_add(p.work.rows_fused);
        w.rows_integer_keys = w.rows_integer_keys.saturating_add(p.work.rows_integer_keys);
        w
    });
    let t_end = t0.elapsed().as_secs_f64();
    let timings = Timings { validate_s: t_valid, resources_s: 0.0, measures_s: t_end - t_valid, total_s: t_end };
    Ok(Evaluation {
        projections: vec![ProjectionScores { name: first.projection.clone(), scores }],
        run: fold_report(first, &order, work, timings),
    })
}

/// Whether `p` is a block of `first`'s run: the same fingerprint, and the same fields that
/// the report takes from the first partial (a changed field is named, not folded unseen).
fn same_run(p: &Partial, first: &Partial) -> std::result::Result<(), String> {
    let differs = |field: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        Err(format!("{field} {a:?} is not the first partial's {b:?}: a partial of another run"))
    };
    if p.n != first.n {
        return differs("n", &p.n, &first.n);
    }
    if p.specs != first.specs {
        return differs("specs", &p.specs, &first.specs);
    }
    if p.dim_high != first.dim_high {
        return differs("dim_high", &p.dim_high, &first.dim_high);
    }
    if p.dim_low != first.dim_low {
        return differs("dim_low", &p.dim_low, &first.dim_low);
    }
    if p.projection != first.projection {
        return differs("projection", &p.projection, &first.projection);
    }
    if p.metric_high != first.metric_high {
        return differs("metric_high", &p.metric_high, &first.metric_high);
    }
    if p.input_high != first.input_high {
        return differs("input_high", &p.input_high, &first.input_high);
    }
    if p.fingerprint != first.fingerprint {
        return Err(format!(
            "fingerprint {} is not the first partial's {}: a partial of another run's inputs or specs",
            p.fingerprint, first.fingerprint
        ));
    }
    Ok(())
}

/// The most each co-ranking tally can be for `rows` rows of n points (ranks are 1 ..= n − 1, one
/// point per rank in a row; each bound is linear in the rows): an error naming the tally when
/// `c` holds more. `rows` are those from a block's first row on (`last`: the plan's last
/// block, whose own rows they are); `later`: `c` holds the block's tallies with the later
/// blocks'. The message says which.
fn tallies_fit(c: &CoRankCounts, rows: usize, n: usize, last: bool, later: bool) -> std::result::Result<(), String> {
    let (r, n) = (rows as u128, n as u128);
    let over = |key: &str, at: usize, v: u128, most: u128| {
        let with = if later { " with the later blocks'" } else { "" };
        let whose = if last { format!("its {rows} rows") } else { format!("the {rows} rows from its first row on") };
        Err(format!("{key}[{at}] = {v}{with} is more than {whose} can hold ({most}: a damaged partial)"))
    };
    for (at, &v) in c.joint.iter().enumerate() {
        // At most K pairs of a row have both ranks ≤ K.
        let most = r * (at as u128 + 1);
        if v as u128 > most {
            return over("joint", at, v as u128, most);
        }
    }
    for (key, tally) in [("trust", &c.trust), ("cont", &c.cont)] {
        for (at, &v) in tally.iter().enumerate() {
            // At most K pairs of a row, each at most n − 1 − K past K.
            let k = at as u128 + 1;
            let most = r * k * (n - 1).saturating_sub(k);
            if v > most {
                return over(key, at, v, most);
            }
        }
    }
    for (key, tally) in [("err_low", &c.err_low), ("err_high", &c.err_high)] {
        for (at, &v) in tally.iter().enumerate() {
            // One pair of a row at each rank, its ranks at most n − 2 apart.
            let most = r * (n - 2);
            if v as u128 > most {
                return over(key, at, v as u128, most);
            }
        }
    }
    Ok(())
}

/// Each block's tallies with those of the blocks after it, held to the rows from the block's
/// first row to n. Premise: a block carries its own rows' tallies, or its whole span's on the
/// span's first block and zeros on the rest (the npm pool; see map.rs `tallies_on_first`), so
/// tallies only ever move to an earlier block, and the blocks from any block on carry the
/// tallies of rows from its first row on, at most. A damaged block is named itself (the last
/// block is held to its own rows), or as the first block whose suffix is too large.
/// `blocks[at]` are the counts of `order[at]`.
fn suffixes_fit(order: &[&Partial], blocks: &[CoRankCounts], n: usize) -> std::result::Result<(), (usize, String)> {
    let mut suffix = blocks.last().expect("at least one partial").zeros();
    for (at, (p, c)) in order.iter().zip(blocks).enumerate().rev() {
        let bad = |reason: String| (at, format!("coranking: {reason}"));
        let (rows, last) = (n - p.rows[0].min(n), at + 1 == order.len());
        // The block alone first: a damaged block is named for its own tallies.
        tallies_fit(c, rows, n, last, false).map_err(bad)?;
        if !suffix.add(c) {
            return Err(bad("a count overflows (a damaged partial)".into()));
        }
        suffix.rows.clear(); // only the tallies are held to bounds
        if !last {
            tallies_fit(&suffix, rows, n, last, true).map_err(bad)?;
        }
    }
    Ok(())
}

/// `coranking` from the blocks' tallies: their sum is the whole pass's counts, and the measure's
/// output is a fixed function of those integers.
/// A damaged partial is `Err((its index in order, reason))`.
fn fold_coranking(r: &Resolved, order: &[&Partial], s: usize, n: usize) -> std::result::Result<Score, (usize, String)> {
    let mut blocks = Vec::with_capacity(order.len());
    for (at, p) in order.iter().enumerate() {
        let score = &p.scores[s];
        let bad = |reason: &str| (at, format!("coranking: {reason}"));
        let c = score.counts.as_ref().ok_or_else(|| bad("no co-ranking counts"))?;
        let km = coranking::k_max(r, n);
        if km > n - 2 {
            // A run's own validation refuses it; R_NX divides by n − 1 − K.
            return Err(bad(&format!("k_max={km} is past n − 2 = {}", n - 2)));
        }
        let kt = crate::resources::tnc_limit(n).min(km);
        // T and C are tallied for K ≤ k_tnc only (ZADU's tnc range), the rest for K ≤ k_max.
        let sized = [c.joint.len(), c.err_low.len(), c.err_high.len()];
        if c.n != n
            || c.k_max != km
            || c.k_tnc != kt
            || c.trust.len() != kt
            || c.cont.len() != kt
            || sized.iter().any(|&l| l != km)
        {
            return Err(bad(&format!("counts are not sized for n={n}, k_max={km}")));
        }
        let rows = score.locals[0].bits.iter().map(|&b| f64::from_bits(b)).collect();
        blocks.push(CoRankCounts { rows, ..c.clone() });
    }
    suffixes_fit(order, &blocks, n)?;
    let mut blocks = blocks.into_iter();
    let mut total = blocks.next().expect("at least one partial");
    for (at, block) in blocks.enumerate() {
        if !total.add(&block) {
            // Not reached once the suffixes fit (their sum is bounded far below u64::MAX).
            return Err((at + 1, "coranking: a count overflows (a damaged partial)".into()));
        }
    }
    let out = coranking::output(total);
    let value =
        |key: &str| out.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v).expect("coranking writes its keys");
    let values = r.keys().into_iter().map(|k| (k.clone(), value(&k))).collect();
    Ok(Score::new(r, values, Some(out.local), out.curves))
}

/// The checks of one partial on its own: a block of the plan, its scores shaped as its specs
/// say, its sums those of its values.
fn check_partial(p: &Partial, n: usize) -> std::result::Result<(), String> {
    let rows = p.rows[0]..p.rows[1];
    if rows.is_empty() || rows.end > n || !is_block(n, &rows) {
        return Err(format!("rows {}:{} are not a block of the shard plan for n={n}", rows.start, rows.end));
    }
    if !matches!(p.backend.as_str(), "cpu" | "gpu") {
        return Err(format!("backend {} is neither cpu nor gpu", crate::quote::quoted(&p.backend)));
    }
    if !matches!(p.input_high.as_str(), "coordinates" | "distance matrix" | "kNN graph") {
        return Err(format!(
            "input_high {} is none of coordinates, distance matrix, kNN graph",
            crate::quote::quoted(&p.input_high)
        ));
    }
    if p.scores.len() != p.specs.len() {
        return Err(format!("{} scores for {} specs", p.scores.len(), p.specs.len()));
    }
    for (score, text) in p.scores.iter().zip(&p.specs) {
        let spec: Spec = text.parse().map_err(|e: Error| e.to_string())?;
        let r = Resolved::new(&spec).map_err(|e| e.to_string())?;
        if !SHARDABLE.contains(&r.def.id) {
            return Err(format!("spec {text}: {} cannot be computed in row shards, so no partial holds it", r.def.id));
        }
        if score.id != r.def.id {
            return Err(format!("score {} does not match spec {text}", score.id));
        }
        let keys: Vec<&str> = score.locals.iter().map(|l| l.key.as_str()).collect();
        let declared: Vec<&str> = r.def.local_keys().collect();
        if keys != declared {
            return Err(format!("{}: local keys {keys:?}, expected {declared:?}", score.id));
        }
        for l in &score.locals {
            let v: Vec<f64> = l.bits.iter().map(|&b| f64::from_bits(b)).collect();
            if v.len() != rows.len() {
                return Err(format!("{}: {} values for {} rows", l.key, v.len(), rows.len()));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(format!("{}: a value is not finite", l.key));
            }
            if !f64::from_bits(l.sum_bits).is_finite() {
                return Err(format!("{}: the sum of its values is not finite", l.key));
            }
            if pairwise_sum(&v).to_bits() != l.sum_bits {
                return Err(format!("{}: the stored sum is not the sum of the values (a damaged partial)", l.key));
            }
        }
    }
    Ok(())
}

/// Every value, local value and curve point of a folded score is finite, or
/// [`Error::NonFiniteScore`] naming the first key that is not.
fn finite(s: &Score) -> Result<()> {
    let bad = |key: String, value: f64| Error::NonFiniteScore { id: s.id.clone(), projection: None, key, value };
    if let Some((key, v)) = s.values.iter().find(|(_, v)| !v.is_finite()) {
        return Err(bad(key.clone(), *v));
    }
    for (key, values) in s.local.iter().flatten().chain(&s.curves) {
        if let Some((i, &v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(bad(format!("{key}[{i}]"), v));
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

fn fold_report(p: &Partial, parts: &[&Partial], work: PassStats, timings: Timings) -> RunReport {
    let blocks = parts.len();
    // The blocks' backend: theirs when they agree, `cpu+gpu` when some blocks ran on each.
    let backend = if parts.iter().all(|q| q.backend == p.backend) { p.backend.clone() } else { "cpu+gpu".into() };
    let served = ["knn_high", "knn_low", "cross_ranks"]
        .iter()
        .map(|o| Served { output: o.to_string(), backend: backend.clone(), numerics: "exact".into() })
        .chain([Served { output: "measures".into(), backend: "cpu".into(), numerics: "exact".into() }])
        .collect();
    RunReport {
        faithful_version: env!("CARGO_PKG_VERSION"),
        backend_requested: backend.clone(),
        backend,
        numerics: "exact".into(),
        fallback_reason: None,
        adapter: None,
        gpu: None,
        threads: rayon::current_num_threads(),
        n: p.n,
        dim_high: p.dim_high,
        dims_low: vec![p.dim_low],
        spaces: crate::space::SpacesReport::of_partial(&p.input_high, &p.metric_high),
        served,
        plan: BlockPlan {
            needs: Needs::default(),
            knn_high_reused: false,
            block_rows: 0,
            blocks,
            scratch_bytes_per_worker: 0,
            resource_bytes: 0,
            pairwise: None,
            high_ranks: None,
            low_index: Vec::new(),
            high_rows: None,
        },
        work: PassStats { blocks, ..work },
        timings,
    }
}
