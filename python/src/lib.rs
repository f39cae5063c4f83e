//! `faithful_dr._native`: the Rust side of the `faithful-dr` Python package.
//!
//! Thin bindings of faithful's top-level API ([`faithful::Evaluator`], [`faithful::Points`],
//! [`faithful::Spec`], ...): NumPy in and out, the GIL released while faithful works, Ctrl-C
//! cancelling a run, and faithful's errors as Python exceptions with the CLI's messages. The
//! Python package `faithful_dr` (python/faithful_dr) adds the keyword API, result objects and
//! the scikit-learn drop-ins on top.

use pyo3::prelude::*;

mod arrays;
mod errors;
mod evaluator;
mod example;
mod interrupt;
mod shard;
mod specs;
mod zadu_resources;

/// Every measure as `faithful measures --json` lists it (JSON text).
#[pyfunction]
fn measures_json() -> String {
    faithful::measures_json()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<evaluator::Evaluator>()?;
    m.add_class::<evaluator::Evaluation>()?;
    zadu_resources::register(m)?;
    m.add_function(wrap_pyfunction!(example::example, m)?)?;
    m.add_function(wrap_pyfunction!(shard::shard_plan, m)?)?;
    m.add_function(wrap_pyfunction!(shard::fold, m)?)?;
    m.add_function(wrap_pyfunction!(shard::check_shardable, m)?)?;
    m.add_function(wrap_pyfunction!(measures_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
