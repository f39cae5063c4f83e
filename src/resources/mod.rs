//! Resources that measures share: kNN lists per space and cross-space ranks and distances,
//! and the all-pairs resources (pair sums, densities, pair order). Measures declare [`Needs`];
//! the planner merges them so each resource is built once per space (and the original space's
//! kNN, extent and densities once per [`crate::Evaluator`]).

mod cross;
mod density;
mod external_sort;
mod needs;
mod neighbours;
mod pair_buckets;
mod pair_order;
mod pairs;
mod pairwise;
mod pass;
mod radix;
mod scratch_pool;
pub mod workspace;

pub use cross::CrossRanks;
pub use external_sort::{ExternalPlan, MIN_MEMORY};
pub use needs::Needs;
pub use neighbours::Neighbours;
pub use pair_order::{in_memory_bytes, OrderPath, OrderStats, RankMoments};
pub use pairs::{tree, Extent, PairSums};
pub use pairwise::{build_pairwise, default_memory_budget, plan_order, Budgets, DensityPair, OrderPlan, Pairwise, PairwiseCache, PairwiseReport};
pub use pass::{row_pass, Extents, PassOutput, PassStats, ProjectionResources};
