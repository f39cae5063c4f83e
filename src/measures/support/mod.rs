//! Support code of the measures, none of it a measure of the registry: NumPy-identical numerics
//! (`numpy`), NumPy's random streams (`rng`), k-means (`kmeans`), contingency tables and the
//! scores computed from them (`contingency`), Delaunay triangulation (`delaunay`), class
//! centroids (`centroids`), ZADU's `ch_btw` cluster validation used by `l_tnc` (`ch_btw`),
//! typed parameter access (`params`) and the all-pairs measures' shared checks (`pairwise`).
//!
//! Imports go one way: the measures use these modules; these never use a measure.

pub(super) mod centroids;
pub(super) mod ch_btw;
pub(super) mod contingency;
pub(super) mod delaunay;
pub(super) mod kmeans;
pub(super) mod numpy;
pub(super) mod pairwise;
pub(super) mod params;
pub(super) mod rng;
