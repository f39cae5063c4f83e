//! Validated inputs: point sets, labels, and the readers for `.npy` and `.csv` files.

mod csv;
#[cfg(all(test, not(target_arch = "wasm32")))]
mod fuzz;
mod labels;
mod npy;
mod npy_header;
mod points;
mod read;
mod sized;

pub use labels::Labels;
pub use npy::{Element as NpyElement, write as write_npy};
pub use points::Points;
pub use read::{read_labels, read_points};
