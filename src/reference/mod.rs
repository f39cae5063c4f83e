//! The exact CPU reference kernels (`docs/exactness.md` §1): distance rows, stable kNN
//! selection and rank counting. Each works on one row at a time in O(n) scratch, so no
//! n×n matrix is ever held. The GPU kernels are checked against these.

mod box_tree;
mod buckets;
mod distance;
mod kdtree;
mod key;
mod knn;
mod rank;

pub use box_tree::{BoxScratch, BoxTree, LEAF as BOX_LEAF};
pub(crate) use buckets::BitBuckets;
pub use distance::{
    PaddedColumns, ROW_TILE, TILE_LANES, distance_pair, distance_pairs, distance_row, distance_row_from, distance_rows,
    euclidean_tile, squared_row_from, tile_stride,
};
pub use kdtree::{KdTree, MAX_DIM as INDEX_MAX_DIM, TreeScratch};
pub use key::{Key, key};
#[cfg(test)]
pub(crate) use knn::rows_knn;
pub use knn::select_knn;
pub use rank::{Placement, RankScratch, count_by_placement, count_ranks};
