//! What the pair order hands to the measures: [`OrderStats`] with the rank moments for
//! Spearman's ρ and the isotonic sums for non-metric stress, and the path that sorted the pairs.

use super::extent::Extent;

/// Centred co-moments of the doubled average ranks a (d^X) and b (d^Y), exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankMoments {
    pub cxx: i128,
    pub cyy: i128,
    pub cxy: i128,
}

impl RankMoments {
    /// Spearman's ρ, clipped to [−1, 1]; `None` when either space's distances are constant.
    pub fn rho(&self) -> Option<f64> {
        (self.cxx > 0 && self.cyy > 0)
            .then(|| ((self.cxy as f64 / (self.cxx as f64).sqrt()) / (self.cyy as f64).sqrt()).clamp(-1.0, 1.0))
    }

    /// From the exact sums Σ c·a² (d^X's groups), Σ b·(Σa of the group) and Σ c·b² (d^Y's
    /// groups) over `pairs` pairs, centred on the doubled ranks' mean P + 1.
    pub(super) fn from_sums(pairs: u64, sxx: u128, sxy: u128, syy: u128) -> RankMoments {
        let p = pairs as i128;
        let centre = p * (p + 1) * (p + 1); // P · mean²
        RankMoments { cxx: sxx as i128 - centre, cyy: syy as i128 - centre, cxy: sxy as i128 - centre }
    }
}

/// How the pairs were sorted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum OrderPath {
    /// All records sorted in memory.
    InMemory,
    /// Ranks only, in cache-sized buckets (`resources::pairs::bucketed`): the number of X-chunks and the
    /// largest X-chunk and Y-bucket, in records.
    Bucketed {
        chunks: usize,
        largest_chunk: u64,
        largest_y_bucket: u64,
    },
    External {
        runs: u64,
        merge_levels: u32,
    },
}

/// The ordered-pair statistics of one projection.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderStats {
    pub pairs: u64,
    pub high: Extent,
    pub low: Extent,
    /// For Spearman's ρ.
    pub ranks: Option<RankMoments>,
    /// For non-metric stress: Σ (d^Y − d̂)² and Σ (d^Y)².
    pub isotonic: Option<(f64, f64)>,
    pub path: OrderPath,
}
