//! CPU twins of the WGSL kernels: the same inputs, the same outputs, the same algorithm (the 64
//! threads of a workgroup simulated in order), in f32. Raw f32 values may differ from a GPU's
//! (drivers fuse and reorder), within the proven bound; what certification and refinement make
//! of them must not. The twins are also the reference the GPU parity tests compare against.
//!
//! One file per kernel, named after it: `twin/NAME.rs` is the twin of `shaders/NAME.wgsl`,
//! whose host side is `gpu/NAME.rs`; `tests/gpu_kernels_twins.rs` compares each with the device.

mod density;
mod distances;
mod distances_tiled;
mod exact_sqdist;
mod knn_candidates;
mod pair_stats;
mod rank_counts;
mod sqdist;

pub use density::density_row;
pub use distances::sqdist;
pub use distances_tiled::{distances_tiled, tile_minima};
pub use exact_sqdist::{exact_sqdist, words as f64_words};
pub use knn_candidates::{KnnRow, knn_candidates, knn_candidates_carried};
pub use pair_stats::pair_stats_row;
pub use rank_counts::{RankRow, rank_counts, rank_counts_all_pairs, rank_counts_of, search_steps};
pub use sqdist::sqdist_row;
