//! Exact row-block shards (issue 16): [`crate::Evaluator::map_rows`] scores one block of rows anywhere
//! (another process, another machine) into a serialisable [`Partial`]; [`fold()`] joins the
//! partials of every block into the same [`crate::Evaluation`], bit for bit, as one
//! [`crate::Evaluator::measure_many`] call. docs/distributed.md gives the argument.
//!
//! Why the blocks are aligned: a measure's value is `np.mean` of its local values, a pairwise
//! sum whose order depends only on n ([`crate::sum`]): a run of more than 128 terms splits at
//! half its length rounded down to a multiple of 8. A block of the plan is a node of that
//! split tree, so its own pairwise sum is the node's sum and the fold adds the nodes as the
//! tree does. `coranking`'s values are not means: its blocks carry their integer tallies, whose
//! sum is the whole pass's, and the fold computes the curves and values from that sum.
//!
//! Files: this one the plan (blocks of the summation tree); `partial` the serialised
//! [`Partial`]; `map` (the fingerprint too) [`crate::Evaluator::map_rows`]; `fold` [`fold()`] and its checks.

mod fold;
// Shards map wherever the library runs: the command line and Python map one block per call,
// the browser's worker pool one span of consecutive blocks per worker.
mod map;
mod partial;

/// The first resolved spec that is not [`SHARDABLE`], as [`Error::NotShardable`].
fn check_shardable(resolved: &[Resolved]) -> Result<()> {
    match resolved.iter().find(|r| !SHARDABLE.contains(&r.def.id)) {
        Some(r) => Err(Error::NotShardable {
            id: r.def.id.into(),
            shardable: "tnc, mrre, lcmc, nh, ca_tnc, knn_overlap, nerv, coranking",
        }),
        None => Ok(()),
    }
}

use std::ops::Range;

use crate::error::{Error, Result};
use crate::measures::Resolved;
use crate::spec::Spec;

pub use fold::{fold, fold_named};
pub use partial::{
    PARTIAL_BINARY_MAGIC, PARTIAL_FORMAT, PARTIAL_VERSION, Partial, PartialLocal, PartialScore, PartialWork,
};

/// The measures a shard computes: those whose values are means of per-row local values that
/// need only their own row's neighbours and ranks (value key i the mean of local key i; later
/// local keys, as knn_overlap's counts, carry no value), and `coranking`, whose per-row tallies
/// are integers that add (the fold computes its curves and values from their sum). nerv's
/// per-point divergences need only their own row (its shard sweeps the block's full rows). The
/// other all-pairs measures are not: their values are ratios of sums over all pairs or need each
/// space's largest distance (sammon, cca_stress, residual_variance, ale), a global correlation
/// (density_preservation) or global draws (triplet_accuracy, global_score).
pub const SHARDABLE: &[&str] = &["tnc", "mrre", "lcmc", "nh", "ca_tnc", "knn_overlap", "nerv", "coranking"];

/// Refuses, before any work, the first spec that is malformed or cannot be computed in row
/// shards ([`Error::NotShardable`] naming it): the check [`crate::Evaluator::map_rows`] makes, for
/// a driver (Dask, an array job) to make before it sends data anywhere.
pub fn check_specs(specs: &[Spec]) -> Result<()> {
    let resolved = specs.iter().map(Resolved::new).collect::<Result<Vec<_>>>()?;
    check_shardable(&resolved)
}

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
    let mut out = Vec::new();
    let _ = plan_each(n, max_rows, &mut |b| {
        out.push(b);
        Ok::<(), std::convert::Infallible>(())
    });
    out
}

/// A pool of `workers`' shares of the plan: at most `workers` spans, each a run of consecutive
/// blocks of [`plan`], cut at the block boundary nearest to each worker's equal share. The
/// blocks are the largest of n / w, n / (2w) and n / (4w) rows (where the tree allows) that
/// give every span its share within n / (4w) rows (or a 128-row leaf): a worker's span in as few
/// blocks as balance allows (each block is a partial to send and fold), n / (4w) when nothing
/// coarser balances. Fewer spans than workers when n has fewer blocks (a leaf of up to 128 rows
/// is never split).
pub fn spans(n: usize, workers: usize) -> Vec<Vec<Range<usize>>> {
    let w = workers.max(1);
    let slack = (n / (4 * w)).max(128);
    let balanced = |s: &[Vec<Range<usize>>]| {
        s.len() == w && s.iter().all(|s| (s.last().map_or(0, |b| b.end) - s[0].start).abs_diff(n / w) <= slack)
    };
    for f in [1, 2] {
        let s = spans_of(n, w, n.div_ceil(f * w));
        if balanced(&s) {
            return s;
        }
    }
    spans_of(n, w, n.div_ceil(4 * w))
}

/// [`spans`] on the plan's blocks of at most `max_rows`.
fn spans_of(n: usize, w: usize, max_rows: usize) -> Vec<Vec<Range<usize>>> {
    let mut out = Vec::with_capacity(w);
    let mut span: Vec<Range<usize>> = Vec::new();
    let mut done = 0;
    for block in plan(n, max_rows) {
        // The boundary before this block or after it, whichever is nearer the share (× w).
        let share = (out.len() + 1) * n;
        let (before, after) = (done * w, (done + block.len()) * w);
        if out.len() + 1 < w && !span.is_empty() && after > share && share - before < after - share {
            out.push(std::mem::take(&mut span));
        }
        done += block.len();
        span.push(block);
        if out.len() + 1 < w && done * w >= (out.len() + 1) * n {
            out.push(std::mem::take(&mut span));
        }
    }
    if !span.is_empty() {
        out.push(span);
    }
    out
}

/// [`plan`]'s blocks handed to `visit` one at a time, in order, without holding them: memory
/// O(log n) for any number of blocks (`faithful plan` streams them). Stops at `visit`'s first
/// error.
pub fn plan_each<E>(
    n: usize,
    max_rows: usize,
    visit: &mut impl FnMut(Range<usize>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    fn go<E>(
        node: Range<usize>,
        max: usize,
        visit: &mut impl FnMut(Range<usize>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match halves(&node) {
            Some((a, b)) if node.len() > max => {
                go(a, max, visit)?;
                go(b, max, visit)
            }
            _ => visit(node),
        }
    }
    go(0..n, max_rows.max(1), visit)
}
