//! Resources that measures share: kNN lists per space and cross-space ranks and distances.
//! Measures declare [`Needs`]; the planner merges them so each resource is built once per
//! space (and the original space's kNN once per [`crate::Evaluator`]), in one row pass.

mod cross;
mod needs;
mod neighbours;
mod pass;

pub use cross::CrossRanks;
pub use needs::Needs;
pub use neighbours::Neighbours;
pub use pass::{row_pass, PassOutput, PassStats, ProjectionResources};
