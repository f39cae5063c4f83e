//! Validated inputs: point sets, labels, and the readers for `.npy` and `.csv` files.

mod csv;
mod labels;
mod npy;
mod points;
mod read;

pub use labels::Labels;
pub use points::Points;
pub use read::{read_labels, read_points};
