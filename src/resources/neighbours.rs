//! [`Neighbours`]: the exact kNN lists of one space.

/// For every point, its first `k` neighbours (ascending `(d, j)`, self excluded) and their
/// distances, n×k row-major: O(n·k) memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbours {
    /// Neighbours per point.
    pub k: usize,
    /// Neighbour indices, n×k row-major ([`Neighbours::row`]).
    pub idx: Vec<u32>,
    /// Their Euclidean distances, n×k row-major ([`Neighbours::dist_row`]).
    pub dist: Vec<f64>,
}

impl Neighbours {
    /// Number of points.
    pub fn n(&self) -> usize {
        self.idx.len().checked_div(self.k).unwrap_or(0)
    }
    /// The first `k` neighbour indices of point `i` (`k` ≤ `self.k`).
    pub fn row(&self, i: usize, k: usize) -> &[u32] {
        &self.idx[i * self.k..i * self.k + k]
    }
    /// Distances to the first `k` neighbours of point `i`.
    pub fn dist_row(&self, i: usize, k: usize) -> &[f64] {
        &self.dist[i * self.k..i * self.k + k]
    }
    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.idx.len() * 4 + self.dist.len() * 8
    }
}
