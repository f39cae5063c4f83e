//! faithful's [`Error`] as a Python exception, with the message the CLI prints after
//! `faithful: error: `.

use faithful::Error;
use pyo3::PyErr;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyOSError, PyRuntimeError, PyValueError};

/// Bad input or parameters: `ValueError`; over a memory budget: `MemoryError`; a cancelled run:
/// `KeyboardInterrupt`; the GPU or the file system failing: `RuntimeError` / `OSError`.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string().replace(['\n', '\r'], " ");
    match e {
        Error::ParamMemory { .. }
        | Error::PointsMemory { .. }
        | Error::PairOrderMemory { .. }
        | Error::PairOrderTemp { .. }
        | Error::PairOrderBrowser { .. } => PyMemoryError::new_err(msg),
        Error::Interrupted => PyKeyboardInterrupt::new_err(msg),
        Error::Gpu(_) => PyRuntimeError::new_err(msg),
        Error::Workspace { .. } | Error::Write { .. } => PyOSError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}
