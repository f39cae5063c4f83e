//! Twin of `density.wgsl`: one row's Gaussian density sums.

use super::distances::sqdist;
use crate::gpu::prepare::Prepared;

/// Twin of `density.wgsl` for row i: Σ_j exp(−(d/max)²/σ) for each σ (max in scaled units).
pub fn density_row(prep: &Prepared, inv_max: f32, sigmas: &[f32], i: usize) -> Vec<f32> {
    sigmas
        .iter()
        .map(|&sigma| {
            (0..prep.n)
                .map(|j| {
                    let t = sqdist(prep, i, j).sqrt() * inv_max;
                    (t * t / -sigma).exp()
                })
                .sum()
        })
        .collect()
}
