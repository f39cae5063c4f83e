//! NumPy arrays in (float64/float32 points in any memory order, int64 labels) and out.

use faithful::{Labels, Points};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::to_py;

/// Validates a 2-D float64 or float32 array as faithful [`Points`] named `name`; the copy and
/// the checks run with the GIL released (f32 is widened exactly).
pub fn points(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>) -> PyResult<Points> {
    let x = &aligned(x)?;
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f64>>() {
        let view = a.as_array();
        return py.detach(|| Points::from_f64(name, view)).map_err(to_py);
    }
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f32>>() {
        let view = a.as_array();
        return py.detach(|| Points::from_f32(name, view)).map_err(to_py);
    }
    Err(PyValueError::new_err(format!("{name}: expected a 2-D float64 or float32 NumPy array")))
}

/// `x`, or an aligned copy of it when `x` is a NumPy array whose data is not aligned for its
/// dtype (e.g. unpickled from an out-of-band buffer, as Dask's transfers can give): a Rust view
/// of misaligned data would be undefined behaviour.
pub fn aligned<'py>(x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    match x.cast::<PyUntypedArray>() {
        Ok(a) if !a.is_aligned() => x.call_method0("copy"),
        _ => Ok(x.clone()),
    }
}

/// One integer label per point, from a 1-D int64 array.
pub fn labels(x: &Bound<'_, PyAny>) -> PyResult<Labels> {
    let a = aligned(x)?
        .extract::<PyReadonlyArray1<'_, i64>>()
        .map_err(|_| PyValueError::new_err("labels: expected a 1-D int64 NumPy array"))?;
    Ok(Labels::new(a.as_array().to_vec()))
}

/// An n×k row-major buffer as an n×k NumPy array (no copy).
pub fn matrix<'py, T: numpy::Element>(py: Python<'py>, n: usize, k: usize, v: Vec<T>) -> Bound<'py, PyArray2<T>> {
    Array2::from_shape_vec((n, k), v).expect("n*k values").into_pyarray(py)
}
