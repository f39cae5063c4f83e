//! [`Labels`]: one integer class label per point.

use crate::error::{Error, Result};

/// Integer class labels, with their dense class codes (0..classes, in sorted label order).
#[derive(Debug, Clone)]
pub struct Labels {
    raw: Vec<i64>,
    codes: Vec<u32>,
    classes: usize,
}

impl Labels {
    /// Encodes labels; any integers are accepted.
    pub fn new(raw: Vec<i64>) -> Self {
        let mut uniq = raw.clone();
        uniq.sort_unstable();
        uniq.dedup();
        let codes = raw.iter().map(|v| uniq.binary_search(v).expect("present") as u32).collect();
        Labels { raw, codes, classes: uniq.len() }
    }
    /// Checks there is one label per point.
    pub fn check_len(&self, n: usize) -> Result<()> {
        if self.raw.len() != n {
            return Err(Error::LabelLength { expected: n, got: self.raw.len() });
        }
        Ok(())
    }
    /// The labels as given.
    pub fn raw(&self) -> &[i64] {
        &self.raw
    }
    /// Dense class code of every point.
    pub fn codes(&self) -> &[u32] {
        &self.codes
    }
    /// Number of distinct classes.
    pub fn classes(&self) -> usize {
        self.classes
    }
    /// Number of labels.
    pub fn len(&self) -> usize {
        self.raw.len()
    }
    /// True when there are no labels.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
    /// A copy reordered like [`crate::Points::permuted`].
    pub fn permuted(&self, perm: &[usize]) -> Self {
        Self::new(perm.iter().map(|&p| self.raw[p]).collect())
    }
}
