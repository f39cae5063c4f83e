//! `example`: the bundled UCI digits (faithful::example_digits) as NumPy arrays.

use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::arrays::matrix;

/// The original space, one projection and the labels.
type ExampleArrays<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<i64>>);

/// The digits (1797 × 64), their projection `projection` ("pca" or "random_projection",
/// 1797 × 2) and their labels (0..9).
#[pyfunction]
#[pyo3(signature = (projection="pca"))]
pub fn example<'py>(py: Python<'py>, projection: &str) -> PyResult<ExampleArrays<'py>> {
    let ex = faithful::example_digits();
    let names: Vec<&str> = ex.projections.iter().map(|p| p.name()).collect();
    let Some(low) = ex.projections.iter().find(|p| p.name() == projection) else {
        return Err(PyValueError::new_err(format!(
            "example: unknown projection '{projection}' (known: {})",
            names.join(", ")
        )));
    };
    let as_array = |p: &faithful::Points| matrix(py, p.n(), p.dim(), p.as_slice().to_vec());
    Ok((as_array(&ex.high), as_array(low), PyArray1::from_slice(py, ex.labels.raw())))
}
