//! Row shards (issue 16) from Python: the plan, and the fold of the partials that
//! `Evaluator.map_rows` wrote, into the `Evaluation` one `measure_many` call returns.

use faithful::{Error, Partial};
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::evaluator::Evaluation;
use crate::specs::specs;

/// The blocks of a shard plan of `n` rows, each of at most `max_rows` rows where the summation
/// tree allows (a leaf of up to 128 rows is never split): `[(start, end), ...]` in order.
///
/// The list is held whole, so it is bounded: n at most 2^32 (a run's most points, as
/// `faithful plan`'s) and at most [`MAX_PLAN_BLOCKS`] blocks (counted first, in O(log n)
/// memory), each a ValueError naming the bound rather than a MemoryError after gigabytes.
#[pyfunction]
pub fn shard_plan(n: usize, max_rows: usize) -> PyResult<Vec<(usize, usize)>> {
    let refuse = |param: &str, value: usize, reason: String| {
        to_py(Error::BadParam { id: "shard_plan".into(), param: param.into(), value: value.to_string(), reason })
    };
    if n as u64 > 1 << 32 {
        return Err(refuse("n", n, "above 2^32 points, the most a run holds (neighbour indices are 32-bit)".into()));
    }
    let mut blocks = 0usize;
    let _ = faithful::shard::plan_each(n, max_rows, &mut |_| {
        blocks += 1;
        if blocks > MAX_PLAN_BLOCKS { Err(()) } else { Ok(()) }
    });
    if blocks > MAX_PLAN_BLOCKS {
        let reason = format!("the plan of n={n} would have more than {MAX_PLAN_BLOCKS} blocks; raise max_rows");
        return Err(refuse("max_rows", max_rows, reason));
    }
    Ok(faithful::shard::plan(n, max_rows).into_iter().map(|r| (r.start, r.end)).collect())
}

/// The most blocks `shard_plan` lists: a million tasks is past any Dask run's use, and its
/// list (about 100 bytes a block in Python) stays near 100 MB.
const MAX_PLAN_BLOCKS: usize = 1_000_000;

/// Refuses a malformed spec or one that cannot be computed in row shards (ValueError naming
/// it), before a driver sends any data to its workers.
#[pyfunction]
pub fn check_shardable(spec_list: &Bound<'_, PyAny>) -> PyResult<()> {
    faithful::shard::check_specs(&specs(spec_list)?).map_err(to_py)
}

/// Folds the partials (JSON texts) of one or more projections of one original space: they are
/// grouped by projection, in order of first appearance, each group folded by faithful::fold and
/// the projections joined as measure_many joins them. `local=False` drops the per-point values,
/// as an evaluator without `local` returns none.
#[pyfunction]
#[pyo3(signature = (partials, local))]
pub fn fold(py: Python<'_>, partials: Vec<String>, local: bool) -> PyResult<Evaluation> {
    let inner = py.detach(|| fold_groups(&partials, local)).map_err(to_py)?;
    Ok(Evaluation { inner })
}

fn fold_groups(texts: &[String], local: bool) -> faithful::Result<faithful::Evaluation> {
    let mut groups: Vec<(String, Vec<Partial>)> = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        let p = Partial::from_json(text, &format!("partial {i}"))?;
        match groups.iter_mut().find(|(name, _)| *name == p.projection) {
            Some((_, g)) => g.push(p),
            None => groups.push((p.projection.clone(), vec![p])),
        }
    }
    let mut folded = groups.iter().map(|(_, g)| faithful::fold(g));
    let mut all = folded
        .next()
        .unwrap_or_else(|| Err(Error::BadPartial { what: "fold".into(), reason: "no partials given".into() }))?;
    let first = &groups[0].1[0];
    for (e, (name, g)) in folded.zip(&groups[1..]) {
        let e = e?;
        // Each group's fingerprint holds its own high space; across groups the run's shape and
        // specs must agree (a partial of another original space of the same shape is not caught).
        let p = &g[0];
        if (p.n, p.dim_high, &p.specs) != (first.n, first.dim_high, &first.specs) {
            return Err(Error::BadPartial {
                what: format!("projection {name}"),
                reason: format!(
                    "n={}, D={}, specs {:?} differ from projection {}'s n={}, D={}, specs {:?}",
                    p.n, p.dim_high, p.specs, first.projection, first.n, first.dim_high, first.specs
                ),
            });
        }
        all.projections.extend(e.projections);
        all.run.dims_low.extend(e.run.dims_low);
        let (w, x) = (&mut all.run.work, &e.run.work);
        w.blocks += x.blocks;
        w.distance_rows = w.distance_rows.saturating_add(x.distance_rows);
        w.ranks_from_knn = w.ranks_from_knn.saturating_add(x.ranks_from_knn);
        w.ranks_counted = w.ranks_counted.saturating_add(x.ranks_counted);
        w.rank_scans = w.rank_scans.saturating_add(x.rank_scans);
        all.run.plan.blocks += e.run.plan.blocks;
        // The folds' own times (a partial carries none), added.
        let (t, y) = (&mut all.run.timings, &e.run.timings);
        t.validate_s += y.validate_s;
        t.measures_s += y.measures_s;
        t.total_s += y.total_s;
    }
    if !local {
        all.projections.iter_mut().flat_map(|p| p.scores.iter_mut()).for_each(|s| s.local = None);
    }
    Ok(all)
}
