//! Progress reporting and cancellation of long runs.
//!
//! A library user passes a [`ProgressFn`] and/or a [`Cancel`] flag in [`crate::Options`]. The
//! all-pairs passes, the co-ranking pass and the external sort report their phase and how far
//! they are, and stop at the next check once the flag is set, with
//! [`crate::Error::Interrupted`]; temporary files are removed on the way out. The command line
//! sets the same flag from its Ctrl-C handler.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// How far a phase of a run has come: `done` of `total` units (rows or pairs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// What is running, e.g. "pair sums", "densities", "pair order: sort", "pair order: merge",
    /// "co-ranking".
    pub phase: &'static str,
    /// Units done so far.
    pub done: u64,
    /// Units in the phase.
    pub total: u64,
}

/// A progress callback, called from worker threads (so it must be cheap and thread-safe).
#[derive(Clone)]
pub struct ProgressFn(pub Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressFn {
    /// Wraps a closure.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressFn(Arc::new(f))
    }
}

impl fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// A cancellation flag shared between a run and whoever may stop it (a signal handler, a UI).
///
/// ```
/// use faithful::{Cancel, Error, Evaluator, Points, Spec};
/// let high = Points::from_vec("high", 4, 1, vec![0., 1., 3., 7.])?;
/// let low = Points::from_vec("low", 4, 1, vec![0., 2., 1., 7.])?;
/// let cancel = Cancel::new();
/// let eval = Evaluator::builder(high).cancel(cancel.clone()).build();
/// assert!(!cancel.request(), "not asked before");
/// assert!(cancel.is_requested());
/// // An all-pairs measure checks the flag and stops with a typed error.
/// let err = eval.measure(&low, None, &["stress".parse::<Spec>()?]).unwrap_err();
/// assert!(matches!(err, Error::Interrupted), "{err}");
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is not set.
    pub fn new() -> Self {
        Cancel::default()
    }
    /// Asks the run to stop; returns whether it had already been asked.
    pub fn request(&self) -> bool {
        self.0.swap(true, Ordering::SeqCst)
    }
    /// Whether a stop was asked.
    pub fn is_requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a pass needs to report and to stop: built from the options.
#[derive(Debug, Clone, Default)]
pub struct Control {
    /// Called with each phase's progress.
    pub progress: Option<ProgressFn>,
    /// Stops the pass at its next check.
    pub cancel: Option<Cancel>,
}

impl Control {
    /// `Err(Interrupted)` once a stop was asked.
    pub fn check(&self) -> Result<()> {
        match &self.cancel {
            Some(c) if c.is_requested() => Err(Error::Interrupted),
            _ => Ok(()),
        }
    }
    /// Whether a stop was asked.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_requested)
    }
    /// Reports progress, if anyone listens.
    pub fn report(&self, phase: &'static str, done: u64, total: u64) {
        if let Some(p) = &self.progress {
            (p.0)(Progress { phase, done, total });
        }
    }
}
