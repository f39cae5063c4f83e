//! Runs faithful's work with the GIL released, on a worker thread, while the calling thread
//! watches for Python signals: Ctrl-C raises `KeyboardInterrupt` at once and sets faithful's
//! [`Cancel`] flag, which stops the run at its next check and removes its temporary files.
//!
//! Python runs signal handlers only on the main thread when it holds the GIL, so the caller
//! cannot simply block inside faithful: it waits for the result in short slices and re-attaches
//! between them to let Python check its signals.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use faithful::Cancel;
use pyo3::prelude::*;

/// How often the waiting thread lets Python look at pending signals.
const POLL: Duration = Duration::from_millis(20);

/// `work()` with the GIL released; a signal handler's exception (KeyboardInterrupt) wins over
/// the result, after the work has stopped.
pub fn run_detached<T: Send>(py: Python<'_>, cancel: &Cancel, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let (out, signal) = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            s.spawn(move || {
                let _ = tx.send(work());
            });
            let mut signal: Option<PyErr> = None;
            loop {
                match rx.recv_timeout(POLL) {
                    Ok(v) => return (Some(v), signal),
                    // The worker panicked; the scope re-raises its panic (a PanicException).
                    Err(RecvTimeoutError::Disconnected) => return (None, signal),
                    Err(RecvTimeoutError::Timeout) if signal.is_none() => {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            cancel.request();
                            signal = Some(e);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                }
            }
        })
    });
    match (signal, out) {
        (Some(e), _) => Err(e),
        (None, Some(v)) => Ok(v),
        (None, None) => {
            Err(pyo3::exceptions::PyRuntimeError::new_err("faithful: the worker thread ended without a result"))
        }
    }
}
