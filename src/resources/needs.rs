//! [`Needs`]: what a measure asks of the planner.

/// Neighbour counts a measure needs; 0 means "not needed". Merging takes the maximum, since a
/// kNN list of k rows holds every smaller k as a prefix and ranks do not depend on k.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Needs {
    /// kNN in the original space.
    pub knn_high: usize,
    /// kNN in the projection.
    pub knn_low: usize,
    /// Ranks and distances across spaces of each space's first `cross` neighbours.
    pub cross: usize,
}

impl Needs {
    /// kNN in both spaces.
    pub fn knn_both(k: usize) -> Self {
        Needs { knn_high: k, knn_low: k, cross: 0 }
    }
    /// kNN in both spaces plus cross-space ranks and distances.
    pub fn cross(k: usize) -> Self {
        Needs { knn_high: k, knn_low: k, cross: k }
    }
    /// kNN in the projection only.
    pub fn knn_low(k: usize) -> Self {
        Needs { knn_high: 0, knn_low: k, cross: 0 }
    }
    /// The union of two needs.
    pub fn merge(self, o: Needs) -> Needs {
        Needs {
            knn_high: self.knn_high.max(o.knn_high),
            knn_low: self.knn_low.max(o.knn_low),
            cross: self.cross.max(o.cross),
        }
    }
}
