//! Measure specs from Python: `"tnc:k=20"` (the CLI's syntax) or ZADU's dicts,
//! `{"id": "tnc", "params": {"k": 20}}`.

use faithful::{ParamValue, Spec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};

use crate::errors::to_py;

/// One spec.
pub fn spec(x: &Bound<'_, PyAny>) -> PyResult<Spec> {
    if let Ok(s) = x.cast::<PyString>() {
        return s.to_str()?.parse::<Spec>().map_err(to_py);
    }
    let d = x.cast::<PyDict>().map_err(|_| {
        PyValueError::new_err(format!(
            "malformed spec {}: expected a string like 'tnc:k=20' or a dict like {{'id': 'tnc', 'params': {{'k': 20}}}}",
            x.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })?;
    for key in d.keys() {
        let key: String = key.extract().unwrap_or_default();
        if key != "id" && key != "params" {
            return Err(PyValueError::new_err(format!("malformed spec: unknown key '{key}' (accepted: id, params)")));
        }
    }
    let id: String = match d.get_item("id")? {
        Some(id) => id.extract().map_err(|_| PyValueError::new_err("malformed spec: 'id' must be a string"))?,
        None => return Err(PyValueError::new_err("malformed spec: a dict spec needs an 'id'")),
    };
    let mut spec = Spec::new(id.clone());
    if let Some(params) = d.get_item("params")?.filter(|p| !p.is_none()) {
        let params = params
            .cast::<PyDict>()
            .map_err(|_| PyValueError::new_err(format!("malformed spec '{id}': 'params' must be a dict")))?;
        for (name, value) in params.iter() {
            let name: String = name
                .extract()
                .map_err(|_| PyValueError::new_err(format!("malformed spec '{id}': parameter names are strings")))?;
            spec = spec.with(name.clone(), param(&id, &name, &value)?);
        }
    }
    Ok(spec)
}

/// An int, float or str parameter (NumPy scalars included); anything else is a ValueError.
fn param(id: &str, name: &str, v: &Bound<'_, PyAny>) -> PyResult<ParamValue> {
    if v.is_instance_of::<PyBool>() {
        // True would otherwise pass as 1.
    } else if v.is_instance_of::<PyInt>() || v.hasattr("__index__")? && !v.is_instance_of::<PyFloat>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(ParamValue::Int(i));
        }
    } else if let Ok(s) = v.cast::<PyString>() {
        return Ok(ParamValue::Str(s.to_str()?.to_string()));
    } else if let Ok(f) = v.extract::<f64>() {
        return Ok(ParamValue::Float(f));
    }
    let shown = v.repr().map(|r| r.to_string()).unwrap_or_default();
    Err(PyValueError::new_err(format!("{id}: parameter {name}={shown}: expected an integer, a number or a string")))
}

/// A list of specs.
pub fn specs(x: &Bound<'_, PyAny>) -> PyResult<Vec<Spec>> {
    if x.is_instance_of::<PyString>() || x.is_instance_of::<PyDict>() {
        return Ok(vec![spec(x)?]);
    }
    x.try_iter()?.map(|s| spec(&s?)).collect()
}
