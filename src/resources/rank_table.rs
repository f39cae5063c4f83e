//! [`RankTable`]: the original space's whole rank matrix `r^X(i, j)`, kept by an evaluator
//! that scores projection after projection (a live view of an optimising UMAP or t-SNE).
//!
//! Why n² and not O(n·k): trustworthiness needs `r^X(i, j)` for every j among i's k nearest
//! neighbours in the projection, and a changing projection can put any point there, so a
//! rank anywhere in `1..n` may be asked for. A per-row structure of size k (the kNN list)
//! answers only the first k ranks; any other rank is a count over the whole original row,
//! which is what a call without the table pays (n distance rows in D dimensions and scans).
//! With the table each rank is one lookup, and a call costs only the projection's rows.
//! The ranks are `u16` while n ≤ 65 536 (ranks run 1..n−1), else `u32`; the planner builds it
//! only when it fits the memory budget ([`plan`]), and the row pass falls back to counting.
//! A worker that owns a span of rows (the browser's worker pool) keeps only those rows
//! ([`RankTable::build_rows`]): the table is split between the workers, not copied.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::row_order::RowOrder;
use crate::data::Points;
use crate::reference::distance_row;

/// Whether an evaluator keeps the original space's rank table (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResidentRanks {
    /// From the second call that needs cross ranks, when the table fits the memory budget and
    /// [`AUTO_MAX_TABLE_BYTES`]: a one-shot run (the CLI) pays no n² build, a session that
    /// scores again does; a larger table is built only when asked for ([`ResidentRanks::Always`]).
    #[default]
    Auto,
    /// From the first such call, when it fits.
    Always,
    /// Never: every call counts ranks over recomputed original-space rows.
    Never,
}

/// `r^X(i, j)` for the rows i of a span (all n, or a worker's share) and every j, row-major;
/// the diagonal holds 0.
#[derive(Debug)]
pub struct RankTable {
    n: usize,
    rows: Range<usize>,
    cells: Cells,
}

#[derive(Debug)]
enum Cells {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

/// Ranks run 1..n−1, so u16 holds them up to this n.
const NARROW_MAX_N: usize = 1 << 16;

impl RankTable {
    /// Bytes of the table for n points.
    pub fn bytes_for(n: usize) -> u64 {
        Self::bytes_for_rows(n, n)
    }

    /// Bytes of `rows` rows of the table for n points.
    pub fn bytes_for_rows(n: usize, rows: usize) -> u64 {
        let cell = if n <= NARROW_MAX_N { 2 } else { 4 };
        (n as u64).saturating_mul(rows as u64).saturating_mul(cell)
    }

    /// Builds the table: each row's distance row, fully sorted by `(d, j)` (the reference's
    /// order: ties by index, self excluded), gives every j its rank. Rows are independent, so
    /// the table is the same for any thread count and block size.
    pub fn build(high: &Points, block_rows: usize) -> RankTable {
        Self::build_rows(high, 0..high.n(), block_rows)
    }

    /// The table's rows `rows` only (a worker's span), built as [`RankTable::build`] builds them.
    pub fn build_rows(high: &Points, rows: Range<usize>, block_rows: usize) -> RankTable {
        let n = high.n();
        assert!(rows.end <= n, "rows {rows:?} out of range for n {n}");
        let (per, cells) = (block_rows.max(1), n * rows.len());
        let cells = if n <= NARROW_MAX_N {
            let mut v = vec![0u16; cells];
            fill(high, &mut v, rows.start, per, |r| r as u16);
            Cells::Narrow(v)
        } else {
            let mut v = vec![0u32; cells];
            fill(high, &mut v, rows.start, per, |r| r);
            Cells::Wide(v)
        };
        RankTable { n, rows, cells }
    }

    /// Points in the original space.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether the table holds every row of `rows`.
    pub fn covers(&self, rows: &Range<usize>) -> bool {
        rows.start >= self.rows.start && rows.end <= self.rows.end
    }

    /// `r^X(i, j)` (1-based; 0 for j = i); i must be one of the table's rows.
    #[inline]
    pub fn rank(&self, i: usize, j: usize) -> u32 {
        let at = (i - self.rows.start) * self.n + j;
        match &self.cells {
            Cells::Narrow(v) => u32::from(v[at]),
            Cells::Wide(v) => v[at],
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        Self::bytes_for_rows(self.n, self.rows.len())
    }
}

/// Fills `table` (rows `first..` of n columns) with each row's ranks, `rows` rows per task.
fn fill<T: Copy + Send>(high: &Points, table: &mut [T], first: usize, rows: usize, cell: impl Fn(u32) -> T + Sync) {
    let n = high.n();
    table.par_chunks_mut(n * rows).enumerate().for_each(|(b, chunk)| {
        let (mut dist, mut order, mut sorter) = (vec![0.0; n], Vec::with_capacity(n), RowOrder::default());
        for (r, row) in chunk.chunks_mut(n).enumerate() {
            let i = first + b * rows + r;
            distance_row(high, i, &mut dist);
            sorter.sort(&dist, i, &mut order);
            for (pos, &j) in order.iter().enumerate() {
                row[j as usize] = cell(pos as u32 + 1);
            }
            row[i] = cell(0);
        }
    });
}

/// Where a run's original-space ranks came from (`run.plan.high_ranks`), when it needed cross
/// ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HighRanksReport {
    /// `"resident_table"` (lookups in the [`RankTable`]) or `"recomputed"` (counted over the
    /// original space's distance rows, computed again in this call).
    pub source: &'static str,
    /// Why that source served.
    pub reason: String,
    /// Bytes of the table (held, or what it would need).
    pub table_bytes: u64,
    /// The table was built in this call.
    pub built_now: bool,
}

/// What a run does about the rank table.
pub enum TablePlan {
    /// Look up ranks in this table (built now or earlier).
    Use(Arc<RankTable>, HighRanksReport),
    /// Build it, then look up.
    Build(HighRanksReport),
    /// Count over recomputed rows.
    Recompute(HighRanksReport),
}

/// The largest table `Auto` builds unasked: 256 MiB of u16 ranks, n ≤ 11 585 (the live loop of
/// a web tool, n = 5000, is 50 MB). Beyond it the build (every row sorted: about 50 s and 5 GB at
/// n = 50 000 on one core) costs more than many recomputing calls save, and a second call
/// should not quietly take gigabytes; `Always` opts in.
pub const AUTO_MAX_TABLE_BYTES: u64 = 256 << 20;

/// Decides, before any work, whether a run with cross ranks uses the table of `rows` rows (n
/// for a whole run): `held` is the evaluator's table, `earlier_calls` how many of its calls
/// needed cross ranks before this one, `other_bytes` what the run's other planned resources
/// hold of the `budget`.
pub fn plan(
    n: usize,
    rows: usize,
    policy: ResidentRanks,
    held: Option<Arc<RankTable>>,
    earlier_calls: usize,
    other_bytes: u64,
    budget: u64,
) -> TablePlan {
    let table_bytes = RankTable::bytes_for_rows(n, rows);
    let report = |source, reason: String, built_now| HighRanksReport { source, reason, table_bytes, built_now };
    let recompute = |reason: String| TablePlan::Recompute(report("recomputed", reason, false));
    if let Some(t) = held {
        return TablePlan::Use(t, report("resident_table", "built by an earlier call".into(), false));
    }
    match policy {
        ResidentRanks::Never => return recompute("resident ranks are off (resident_ranks = never)".into()),
        ResidentRanks::Auto if earlier_calls == 0 => {
            return recompute(
                "the first call that needs cross ranks: the table is built from the second call on (resident_ranks = auto)"
                    .into(),
            );
        }
        ResidentRanks::Auto if table_bytes > AUTO_MAX_TABLE_BYTES => {
            return recompute(format!(
                "the rank table ({table_bytes} bytes) is larger than resident_ranks = auto builds unasked ({AUTO_MAX_TABLE_BYTES} bytes; resident_ranks = always builds it)"
            ));
        }
        _ => {}
    }
    let need = table_bytes.saturating_add(other_bytes);
    if need > budget {
        return recompute(format!(
            "the rank table ({table_bytes} bytes) and the run's other resources ({other_bytes} bytes) exceed the memory budget ({budget} bytes)"
        ));
    }
    TablePlan::Build(report("resident_table", "built in this call; later calls look ranks up".into(), true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_reference_order_with_ties_by_index() {
        // Duplicates and equal distances: 0 and 1 coincide, 2 and 3 are equidistant from 0.
        let p = Points::from_vec("t", 5, 1, vec![0., 0., 1., -1., 5.]).unwrap();
        let t = RankTable::build(&p, 2);
        let row0: Vec<u32> = (0..5).map(|j| t.rank(0, j)).collect();
        assert_eq!(row0, [0, 1, 2, 3, 4]);
        let row4: Vec<u32> = (0..5).map(|j| t.rank(4, j)).collect();
        assert_eq!(row4, [2, 3, 1, 4, 0]);
        assert_eq!(t.bytes(), 50);
        assert_eq!(RankTable::bytes_for(NARROW_MAX_N + 1), ((NARROW_MAX_N + 1) as u64).pow(2) * 4);
        // A span's rows are the whole table's rows, and only those are held.
        let span = RankTable::build_rows(&p, 3..5, 1);
        assert!(span.covers(&(3..5)) && span.covers(&(4..5)) && !span.covers(&(2..4)));
        assert_eq!(span.bytes(), 20);
        for i in 3..5 {
            assert_eq!(
                (0..5).map(|j| span.rank(i, j)).collect::<Vec<_>>(),
                (0..5).map(|j| t.rank(i, j)).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_plan_waits_for_a_second_call_and_respects_the_budget() {
        let source = |p: &TablePlan| match p {
            TablePlan::Use(_, r) | TablePlan::Build(r) | TablePlan::Recompute(r) => r.source,
        };
        assert!(matches!(plan(100, 100, ResidentRanks::Auto, None, 0, 0, 1 << 30), TablePlan::Recompute(_)));
        assert!(matches!(plan(100, 100, ResidentRanks::Auto, None, 1, 0, 1 << 30), TablePlan::Build(_)));
        assert!(matches!(plan(100, 100, ResidentRanks::Always, None, 0, 0, 1 << 30), TablePlan::Build(_)));
        assert!(matches!(plan(100, 100, ResidentRanks::Never, None, 5, 0, 1 << 30), TablePlan::Recompute(_)));
        // Above Auto's cap only Always builds (n = 20 000: 800 MB of u16 ranks).
        let big = 20_000;
        assert!(RankTable::bytes_for(big) > AUTO_MAX_TABLE_BYTES);
        assert!(matches!(plan(big, big, ResidentRanks::Auto, None, 3, 0, 1 << 40), TablePlan::Recompute(_)));
        assert!(matches!(plan(big, big, ResidentRanks::Always, None, 0, 0, 1 << 40), TablePlan::Build(_)));
        // 100² u16 = 20 000 bytes: with 1 000 other bytes a 20 999-byte budget is too small.
        let tight = plan(100, 100, ResidentRanks::Always, None, 0, 1000, 20_999);
        match &tight {
            TablePlan::Recompute(r) => assert!(r.reason.contains("exceed the memory budget"), "{}", r.reason),
            _ => panic!("expected Recompute"),
        }
        assert_eq!(source(&plan(100, 100, ResidentRanks::Always, None, 0, 1000, 21_000)), "resident_table");
    }
}
