//! Resources that measures share: kNN lists per space and cross-space ranks and distances,
//! and the all-pairs resources (pair sums, densities, pair order). Measures declare [`Needs`];
//! the planner merges them so each resource is built once per space (and the original space's
//! kNN, extent and densities once per [`crate::Evaluator`]).
//!
//! What lives where, in import order (a module imports only those before it; the test
//! `tests/module_graph.rs` fails on any cycle):
//! 1. helpers with no imports here: `radix` (the u128 sort), `row_order` (one row's
//!    neighbour order), `lattice` (integer lattices' exact integer keys), `scratch_pool`, `workspace`
//!    (temporary files), `density` (kernel density sums), `needs`, `neighbours`, `cross`,
//!    `certified_rows` (the row pass's certified f32 rows of a cosine or Euclidean space, on `reference` and `certify`);
//! 2. `pairs`: everything about all pairs i < j, from the record encoding up to the in-memory
//!    driver of the pair order (its own map in `pairs/mod.rs`);
//! 3. `external_sort`: the external driver of the pair order, on `pairs`' records and scans;
//! 4. `rank_table`: the original space's resident rank matrix (on `row_order`);
//!    `pass`: the row pass (kNN lists, cross ranks, extents); `coranking`: the co-ranking
//!    pass (every pair's rank in both spaces, tallied for the co-ranking family and, in log
//!    bins, the co-ranking matrix);
//! 5. `pairwise`: the planner and builder of all the all-pairs resources;
//! 6. `shepard`: the binned Shepard diagram (every pair's two distances counted in a grid, on
//!    the extents `pairwise` keeps).

mod certified_rows;
mod coranking;
mod cross;
mod density;
mod exp;
mod external_sort;
mod isa;
mod lattice;
mod ln;
mod needs;
mod neighbours;
mod pairs;
mod pairwise;
mod pass;
mod radix;
mod rank_table;
mod row_order;
mod scratch_pool;
mod shepard;
mod tree_knn;
pub mod workspace;

pub use certified_rows::HighRowsReport;
pub use coranking::{
    CoRankCounts, FusedLists, ListKs, MAX_PER_OCTAVE, RankBins, coranking_from_lists, coranking_matrix_pass,
    coranking_pass, coranking_pass_fused, coranking_pass_rows, tnc_limit,
};
pub use cross::CrossRanks;
pub use density::densities;
pub use external_sort::{ExternalPlan, MIN_MEMORY};
pub(crate) use lattice::lattice_rows;
pub use needs::Needs;
pub use neighbours::Neighbours;
pub use pairs::{
    CcaJob, CcaKernel, Extent, NERV_FLOOR, NERV_MAX_ITERATIONS, NERV_TOLERANCE, NervJob, NervRows, OrderPath,
    OrderStats, PairSums, RankMoments, RatioSums, RowSweep, in_memory_bytes, tree,
};
pub use pairwise::{
    Budgets, DensityPair, OrderPlan, Pairwise, PairwiseCache, PairwiseReport, build_pairwise, default_memory_budget,
    nerv_rows, plan_order,
};
pub use pass::{
    Extents, LowIndex, LowIndexReport, PassOutput, PassStats, ProjectionResources, Resident, row_pass,
    row_pass_resident, row_pass_rows,
};
pub use radix::sort as radix_sort;
pub use rank_table::{
    AUTO_MAX_TABLE_BYTES, HighRanksReport, RankTable, ResidentRanks, TablePlan, plan as plan_rank_table,
};
pub use shepard::{MAX_SHEPARD_BINS, ShepardHistogram, pair_extents, shepard_bin, shepard_pass};
