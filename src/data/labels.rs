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
        Self::try_new(raw).unwrap_or_else(|bytes| panic!("labels: cannot hold {bytes} bytes of class codes"))
    }

    /// [`Labels::new`] with its working copies (the sorted labels and the codes, 12 bytes per
    /// label) reserved fallibly: `Err(bytes needed)` instead of an abort, for labels read from a
    /// file that fits in memory once but not with its codes.
    pub fn try_new(raw: Vec<i64>) -> std::result::Result<Self, u64> {
        let bytes = (raw.len() as u64).saturating_mul(12);
        let mut uniq = Vec::new();
        uniq.try_reserve_exact(raw.len()).map_err(|_| bytes)?;
        uniq.extend_from_slice(&raw);
        uniq.sort_unstable();
        uniq.dedup();
        let mut codes = Vec::new();
        codes.try_reserve_exact(raw.len()).map_err(|_| bytes)?;
        codes.extend(raw.iter().map(|v| uniq.binary_search(v).expect("present") as u32));
        Ok(Labels { raw, codes, classes: uniq.len() })
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
