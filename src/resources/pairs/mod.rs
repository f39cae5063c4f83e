//! The all-pairs resources: every pair i < j measured once, for the extents, the [`PairSums`],
//! the densities' rows and the pair order ([`OrderStats`]: Spearman's ρ and non-metric stress
//! from all pairs sorted by distance).
//!
//! What lives where, lowest first. A module imports only modules above it in this list (and
//! `resources`' own helpers: `radix`, `scratch_pool`, `workspace`, `density`); the tests in
//! `tests/module_graph.rs` fail on an import against this order, on a file missing from this
//! table, and on any import cycle in `src/resources`.
//!
//! | module        | holds                                                                      |
//! |---------------|----------------------------------------------------------------------------|
//! | `extent`      | [`Extent`]: smallest and largest pair distance of a space                  |
//! | `record`      | record encoding: `(bits(d^X) << 64) \| bits(d^Y)`, scan 1's rewrite and payloads, writing a row's records |
//! | `tie_groups`  | the tie-group walk (`TieWalk`, `each_group`), doubled average ranks, chunks of whole groups |
//! | `pava`        | isotonic regression state: the PAVA stack (spilling on the external path)  |
//! | `order_stats` | the results: [`OrderStats`], [`RankMoments`], [`OrderPath`]                 |
//! | `scans`       | scan 1 and scan 2, streamed (`Scan1`, `Scan2`) and in parallel over memory  |
//! | `digit`       | the bucketed path's monotone digit of a distance's bits                    |
//! | `group_sort`  | grouping a cache-sized bucket of records by key                             |
//! | `bucketed`    | Spearman's ρ alone in memory: records laid out by chunk, ranked per bucket |
//! | `sums`        | [`PairSums`] and the fixed merge tree                                       |
//! | `row_terms`   | one full row's terms: Sammon, CCA, average local error, NeRV's bandwidths and divergences |
//! | `tile_sweep`  | those sums with each pair measured once for both its rows, in tiles of NumPy's leaves |
//! | `row_sweep`   | the sweep over full rows for those measures (and the pair sums with them)  |
//! | `pair_pass`   | the sweep over the rows that measures the pairs (sums, densities, records) |
//! | `in_memory`   | the in-memory driver: the bucketed path or the full radix sort, then scans |
//!
//! The external driver (`resources::external_sort`) and the planner (`resources::pairwise`)
//! sit above this module and use it; nothing here imports them.
//!
//! Every path hands the same sorted sequence of records to the same scans (or, bucketed, the
//! same exact integer sums), so every path gives the same bits.

mod bucketed;
mod digit;
mod extent;
mod group_sort;
mod in_memory;
mod order_stats;
mod pair_pass;
mod pava;
mod record;
mod row_sweep;
mod row_terms;
mod scans;
mod sums;
mod tie_groups;
mod tile_sweep;

pub use extent::Extent;
pub use in_memory::in_memory_bytes;
pub use order_stats::{OrderPath, OrderStats, RankMoments};
pub use row_sweep::{NervRows, RatioSums, RowSweep};
pub use row_terms::{CcaJob, CcaKernel, NERV_FLOOR, NERV_MAX_ITERATIONS, NERV_TOLERANCE, NervJob};
pub use sums::{PairSums, tree};

// For the external driver and the planner.
pub(crate) use bucketed::{Layout, Writer};
pub(crate) use in_memory::{in_memory, order_records};
pub(crate) use pair_pass::{DensityJob, PairJob, pair_pass};
pub(crate) use pava::PavaStack;
pub(crate) use record::{LOW, fill, final_payload, open_payload};
pub(crate) use row_sweep::{SweepJob, row_sweep, row_sweep_rows};

pub(crate) use scans::{Scan1, Scan2, stats};
