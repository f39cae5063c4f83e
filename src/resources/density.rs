//! Gaussian densities for `kl_div` and `dtm`, as ZADU 0.5.4 computes them:
//! `p_i ∝ Σ_j exp(−(d(i,j)/max d)² / σ)` over every j (j = i included), normalised to sum 1.
//!
//! One pass over the rows serves every requested σ. Each row's kernel values are summed in
//! NumPy's pairwise order (`np.sum(kernel, axis=1)`), and the kernel is evaluated with ZADU's
//! operation order (divide by the maximum, square, divide by −σ, exp), so the densities equal
//! ZADU's up to the last-place differences of the platform's `exp`. Rows are independent, so
//! the result is bit-identical for any thread count and block size.

use std::ops::Range as Rows;

use rayon::prelude::*;

use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row;
use crate::sum::pairwise_sum;

/// Normalised densities of one space for each σ of `sigmas` (same order). `max` is the largest
/// pair distance of the space and must be positive.
pub fn densities(points: &Points, max: f64, sigmas: &[f64], block_rows: usize, ctl: &Control, phase: &'static str) -> Result<Vec<Vec<f64>>> {
    debug_assert!(max > 0.0 && sigmas.iter().all(|&s| s > 0.0));
    let n = points.n();
    let block_rows = block_rows.max(1);
    let blocks: Vec<Rows<usize>> = (0..n).step_by(block_rows).map(|s| s..(s + block_rows).min(n)).collect();
    let done = std::sync::atomic::AtomicU64::new(0);
    let per_block: Vec<Vec<f64>> = blocks
        .par_iter()
        .map(|rows| {
            ctl.check()?;
            let mut d = vec![0.0; n];
            let mut sq = vec![0.0; n];
            let mut kernel = vec![0.0; n];
            // Row-major within the block: out[(i - start) * sigmas.len() + s].
            let mut out = Vec::with_capacity(rows.len() * sigmas.len());
            for i in rows.clone() {
                distance_row(points, i, &mut d);
                for (q, &v) in sq.iter_mut().zip(&d) {
                    let t = v / max;
                    *q = t * t;
                }
                for &sigma in sigmas {
                    let neg = -sigma;
                    for (k, &q) in kernel.iter_mut().zip(&sq) {
                        *k = (q / neg).exp();
                    }
                    out.push(pairwise_sum(&kernel));
                }
            }
            let r = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
            ctl.report(phase, r, n as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    let m = sigmas.len();
    Ok((0..m)
        .map(|s| {
            let raw: Vec<f64> = per_block.iter().flat_map(|b| b.iter().skip(s).step_by(m).copied()).collect();
            let total = pairwise_sum(&raw);
            raw.iter().map(|&v| v / total).collect()
        })
        .collect())
}
