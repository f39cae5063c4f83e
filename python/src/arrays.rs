//! NumPy arrays in (float64/float32 points in any memory order, int64 labels) and out.

use faithful::{DistanceMatrix, KnnGraph, Labels, Points};
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

/// Validates a 2-D float64 or float32 array as an n×n distance matrix, the original space
/// ([`Points::from_distances`]): one copy, made with the GIL released.
pub fn distances(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>) -> PyResult<Points> {
    let x = &aligned(x)?;
    let matrix = |n: usize, cols: usize, values: Vec<f64>| {
        if n != cols {
            return Err(faithful::Error::BadDistances {
                name: name.into(),
                reason: format!(
                    "shape ({n}, {cols}) is not square (metric='precomputed' takes an n×n distance matrix)"
                ),
            });
        }
        DistanceMatrix::from_vec(name, n, values).map(|m| Points::from_distances(name, m))
    };
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f64>>() {
        let view = a.as_array();
        let (n, c) = view.dim();
        return py.detach(|| matrix(n, c, view.iter().copied().collect())).map_err(to_py);
    }
    if let Ok(a) = x.extract::<PyReadonlyArray2<'_, f32>>() {
        let view = a.as_array();
        let (n, c) = view.dim();
        return py.detach(|| matrix(n, c, view.iter().map(|&v| f64::from(v)).collect())).map_err(to_py);
    }
    Err(PyValueError::new_err(format!("{name}: expected a 2-D float64 or float32 NumPy distance matrix")))
}

/// A CSR kNN graph (`indptr`, `indices` as int64, `data` as float64, n×n) as the original space
/// ([`Points::from_knn_graph`]).
pub fn csr_graph(
    py: Python<'_>,
    name: &str,
    n: usize,
    indptr: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
) -> PyResult<Points> {
    let bad =
        |what: &str, dtype: &str| PyValueError::new_err(format!("{name}: {what}: expected a 1-D {dtype} NumPy array"));
    let (indptr, indices, data) = (aligned(indptr)?, aligned(indices)?, aligned(data)?);
    let indptr = indptr.extract::<PyReadonlyArray1<'_, i64>>().map_err(|_| bad("indptr", "int64"))?;
    let indices = indices.extract::<PyReadonlyArray1<'_, i64>>().map_err(|_| bad("indices", "int64"))?;
    let data = data.extract::<PyReadonlyArray1<'_, f64>>().map_err(|_| bad("data", "float64"))?;
    let (p, i, d) = (indptr.as_slice()?, indices.as_slice()?, data.as_slice()?);
    py.detach(|| KnnGraph::from_csr(name, (n, n), p, i, d).map(|g| Points::from_knn_graph(name, g))).map_err(to_py)
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
