//! Support code of the measures, none of it a measure of the registry: NumPy-identical numerics
//! (`numpy`), NumPy's random streams (`rng`), k-means (`kmeans`), HDBSCAN on precomputed
//! distances (`hdbscan`), CPython's set order (`pyset`), contingency tables and the
//! scores computed from them (`contingency`), Delaunay triangulation (`delaunay`), class
//! centroids (`centroids`), the extremes of a difference of monotone functions over integer pairs (`frontier`), ZADU's `ch_btw` cluster validation used by `l_tnc` (`ch_btw`),
//! typed parameter access (`params`), the all-pairs measures' shared checks (`pairwise`), and
//! topology's exact minimum spanning tree (`mst`), Rips H1 reduction (`rips`) and diagram
//! distances (`diagram`), and the scagnostics' hexagonal binning (`hexbin`) and graphs (`scag_graph`).
//!
//! Imports go one way: the measures use these modules; these never use a measure.

pub(super) mod centroids;
pub(super) mod ch_btw;
pub(super) mod contingency;
pub(super) mod delaunay;
pub(super) mod diagram;
pub(super) mod frontier;
pub(super) mod hdbscan;
pub(super) mod hexbin;
pub(super) mod kmeans;
pub(super) mod mst;
pub(super) mod numpy;
pub(super) mod pairwise;
pub(super) mod params;
pub(super) mod pyset;
pub(super) mod rips;
pub(super) mod rng;
pub(super) mod scag_graph;
