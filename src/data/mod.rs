//! Validated inputs: point sets, labels, and the readers for `.npy` and `.csv` files.

mod bounds;
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

pub(crate) use bounds::MAX_ABS;
pub use distances::DistanceMatrix;
pub use graph::{GraphReport, KnnGraph};
pub use labels::Labels;
pub(crate) use metric::Kernel;
pub use metric::Metric;
pub use npy::{Element as NpyElement, write as write_npy};
pub use points::Points;
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
pub use read::read_knn_npz;
#[cfg(not(target_arch = "wasm32"))]
pub use read::{declared_shape, read_distances};
pub use read::{read_knn_arrays, read_labels, read_points};

/// A number for an error message: as Rust writes it when that is short (`1`, `1.5`, `NaN`),
/// else in exponent form, so that a subnormal or a 1e300 stays one short line
/// (`1.1125369292536007e-308`, not 300 digits).
pub(crate) fn shown(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 24 { plain } else { format!("{v:e}") }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn numbers_in_messages_are_short() {
        assert_eq!(shown(1.0), "1");
        assert_eq!(shown(1.5), "1.5");
        assert_eq!(shown(-0.25), "-0.25");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(f64::INFINITY), "inf");
        assert_eq!(shown(1.1125369292536007e-308), "1.1125369292536007e-308");
        assert_eq!(shown(-1e300), "-1e300");
        for v in [f64::MIN_POSITIVE, 5e-324, f64::MAX, -f64::MAX, 123456.789e200] {
            assert!(shown(v).len() <= 24, "{}", shown(v));
            assert_eq!(shown(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }
    }
}
