//! Seeded blobs: 5 Gaussian clusters in D dimensions (SplitMix64 + Box-Muller), projected to
//! 2-D by taking the first two coordinates. The same (n, D, seed) gives the same bits anywhere.

use crate::data::Points;

pub use crate::splitmix::SplitMix64;

/// Blobs data: the original space, its projection and the cluster of each point.
#[derive(Debug, Clone)]
pub struct Blobs {
    pub high: Points,
    pub low: Points,
    pub labels: Vec<i64>,
}

/// Clusters in every blobs data set.
pub const CLUSTERS: usize = 5;

/// n points in `dim` ≥ 2 dimensions around 5 centres drawn uniformly from [-10, 10]^D, with
/// unit-variance Gaussian noise; the projection is the first two coordinates.
pub fn blobs(n: usize, dim: usize, seed: u64) -> Blobs {
    assert!(n >= 2 && dim >= 2, "blobs needs n >= 2 and dim >= 2");
    let mut rng = SplitMix64(seed);
    let centres: Vec<f64> = (0..CLUSTERS * dim).map(|_| 20.0 * rng.open01() - 10.0).collect();
    let mut rows = Vec::with_capacity(n * dim);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let c = i % CLUSTERS;
        labels.push(c as i64);
        rows.extend((0..dim).map(|f| centres[c * dim + f] + rng.normal()));
    }
    let low_rows: Vec<f64> = (0..n).flat_map(|i| rows[i * dim..i * dim + 2].to_vec()).collect();
    let high = Points::from_vec(format!("blobs{n}x{dim}"), n, dim, rows).expect("finite blobs");
    let low = Points::from_vec(format!("blobs{n}x{dim}_2d"), n, 2, low_rows).expect("finite blobs");
    Blobs { high, low, labels }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped() {
        let (a, b) = (blobs(50, 4, 7), blobs(50, 4, 7));
        assert_eq!(a.high.as_slice(), b.high.as_slice());
        assert_eq!((a.high.n(), a.high.dim(), a.low.dim()), (50, 4, 2));
        assert_eq!(a.low.row(3), &a.high.row(3)[..2]);
        assert_ne!(blobs(50, 4, 8).high.as_slice(), a.high.as_slice());
        let m = SplitMix64(1).next_u64();
        assert_eq!(m, 0x910A_2DEC_8902_5CC1, "SplitMix64 reference value");
    }
}
