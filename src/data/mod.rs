//! Validated inputs: point sets, labels, and the readers for `.npy` and `.csv` files.

mod csv;
mod distances;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod fuzz;
#[cfg(all(test, feature = "npz", not(target_arch = "wasm32")))]
mod fuzz_files;
mod graph;
mod labels;
mod metric;
mod npy;
mod npy_header;
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
mod npz;
mod points;
mod read;
mod sized;

pub use distances::DistanceMatrix;
pub use graph::{GraphReport, KnnGraph};
pub use labels::Labels;
pub(crate) use metric::Kernel;
pub use metric::Metric;
pub use npy::{Element as NpyElement, write as write_npy};
pub use points::Points;
#[cfg(not(target_arch = "wasm32"))]
pub use read::read_distances;
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
pub use read::read_knn_npz;
pub use read::{read_knn_arrays, read_labels, read_points};
