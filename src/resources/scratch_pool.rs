//! [`Pool`]: scratch buffers kept across the tasks of a parallel pass, so that each buffer is
//! allocated (and its pages faulted in) about once per worker rather than once per task.

use std::sync::Mutex;

/// A stack of reusable scratch values.
pub(super) struct Pool<T>(Mutex<Vec<T>>);

impl<T: Default> Pool<T> {
    pub fn new() -> Self {
        Pool(Mutex::new(Vec::new()))
    }

    /// Runs `f` with a scratch value from the pool (a fresh one when all are in use) and puts
    /// it back afterwards.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut t = self.0.lock().expect("scratch pool").pop().unwrap_or_default();
        let r = f(&mut t);
        self.0.lock().expect("scratch pool").push(t);
        r
    }
}
