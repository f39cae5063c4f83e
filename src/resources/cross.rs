//! [`CrossRanks`]: each space's kNN measured in the other space.

/// For every point i and its first `k` neighbours in each space: their ranks and distances in
/// the other space. `rank_high_of_low[i*k + s]` is `r^X(i, j)` for j the s-th neighbour of i in
/// the projection; `rank_low_of_high` the converse. Ranks are 1-based, as in ZADU. The
/// distance lists are empty when the pass was not asked for them ([`super::Needs::cross_dists`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CrossRanks {
    pub k: usize,
    pub rank_high_of_low: Vec<u32>,
    pub rank_low_of_high: Vec<u32>,
    pub dist_high_of_low: Vec<f64>,
    pub dist_low_of_high: Vec<f64>,
}

impl CrossRanks {
    /// `r^X(i, ·)` of the first `k` projection neighbours of i.
    pub fn rank_high_of_low(&self, i: usize, k: usize) -> &[u32] {
        &self.rank_high_of_low[i * self.k..i * self.k + k]
    }
    /// `r^Y(i, ·)` of the first `k` original-space neighbours of i.
    pub fn rank_low_of_high(&self, i: usize, k: usize) -> &[u32] {
        &self.rank_low_of_high[i * self.k..i * self.k + k]
    }
    /// `d^X(i, ·)` of the first `k` projection neighbours of i.
    pub fn dist_high_of_low(&self, i: usize, k: usize) -> &[f64] {
        assert!(!self.dist_high_of_low.is_empty(), "cross distances were not planned (Needs::cross_dists)");
        &self.dist_high_of_low[i * self.k..i * self.k + k]
    }
    /// `d^Y(i, ·)` of the first `k` original-space neighbours of i.
    pub fn dist_low_of_high(&self, i: usize, k: usize) -> &[f64] {
        assert!(!self.dist_low_of_high.is_empty(), "cross distances were not planned (Needs::cross_dists)");
        &self.dist_low_of_high[i * self.k..i * self.k + k]
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        (self.rank_high_of_low.len() + self.rank_low_of_high.len()) * 4
            + (self.dist_high_of_low.len() + self.dist_low_of_high.len()) * 8
    }
}
