//! Gaussian densities for `kl_div` and `dtm`, as ZADU 0.5.4 computes them:
//! `p_i ∝ Σ_j exp(−(d(i,j)/max d)² / σ)` over every j (j = i included), normalised to sum 1.
//!
//! One pass over the rows serves every requested σ. Each row's kernel values are summed in
//! NumPy's pairwise order (`np.sum(kernel, axis=1)`), and the kernel is evaluated with ZADU's
//! operation order (divide by the maximum, square, divide by −σ, exp), so the densities equal
//! ZADU's up to the last-place differences of `exp` ([`exp_nonpositive`] is within 2 ulp of the
//! correctly rounded value; NumPy's own SIMD `exp` differs from glibc's by an ulp, too). Rows are
//! independent, so the result is bit-identical for any thread count and block size.

use std::ops::Range as Rows;

use multiversion::multiversion;
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
            let mut k = KernelScratch::default();
            // Row-major within the block: out[(i - start) * sigmas.len() + s].
            let mut out = Vec::with_capacity(rows.len() * sigmas.len());
            for i in rows.clone() {
                distance_row(points, i, &mut d);
                kernel_sums(&d, max, sigmas, &mut k, &mut out);
            }
            let r = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
            ctl.report(phase, r, n as u64);
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(normalise(&per_block, sigmas.len()))
}

/// Buffers of [`kernel_sums`], reused across rows.
#[derive(Default)]
pub(super) struct KernelScratch {
    sq: Vec<f64>,
    arg: Vec<f64>,
    kernel: Vec<f64>,
}

/// Appends, for each σ, `Σ_j exp(−(d_j/max)²/σ)` over the whole row `d` (NumPy's pairwise sum,
/// ZADU's operation order) to `out`.
pub(super) fn kernel_sums(d: &[f64], max: f64, sigmas: &[f64], k: &mut KernelScratch, out: &mut Vec<f64>) {
    let n = d.len();
    k.sq.resize(n, 0.0);
    k.arg.resize(n, 0.0);
    k.kernel.resize(n, 0.0);
    for (q, &v) in k.sq.iter_mut().zip(d) {
        let t = v / max;
        *q = t * t;
    }
    for &sigma in sigmas {
        let neg = -sigma;
        for (a, &q) in k.arg.iter_mut().zip(&k.sq) {
            *a = q / neg;
        }
        exp_nonpositive(&k.arg, &mut k.kernel);
        out.push(pairwise_sum(&k.kernel));
    }
}

/// The normalised densities per σ from per-block raw sums laid out row-major (`m` σs per row).
pub(super) fn normalise<B: AsRef<[f64]>>(per_block: &[B], m: usize) -> Vec<Vec<f64>> {
    (0..m)
        .map(|s| {
            let raw: Vec<f64> = per_block.iter().flat_map(|b| b.as_ref().iter().skip(s).step_by(m).copied()).collect();
            let total = pairwise_sum(&raw);
            raw.iter().map(|&v| v / total).collect()
        })
        .collect()
}

/// Cody–Waite split of ln 2 (fdlibm's): `k · LN2_HI` is exact for |k| < 2²⁰.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// 1.5 · 2⁵²: adding it rounds to the nearest integer, which lands in the low bits.
const ROUND: f64 = 6_755_399_441_055_744.0;
/// Below this the result is subnormal or zero; such arguments use `f64::exp`.
const LOW: f64 = -708.0;

/// `out[i] = e^{x[i]}` for `x[i] ≤ 0`, vectorised: `x = k ln 2 + r` with |r| ≤ ln 2 / 2, e^r by
/// its degree-13 Taylor polynomial (truncation below 10⁻¹⁷ relative), scaled by 2^k. Within 2
/// ulp of the correctly rounded value (tested against `f64::exp` below).
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn exp_nonpositive(x: &[f64], out: &mut [f64]) {
    const C: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362880.0,
        1.0 / 3628800.0,
        1.0 / 39916800.0,
        1.0 / 479001600.0,
        1.0 / 6227020800.0,
    ];
    let mut rare = false;
    for (o, &x) in out.iter_mut().zip(x) {
        let xc = x.max(LOW);
        rare |= x < LOW;
        let t = xc * std::f64::consts::LOG2_E + ROUND;
        let kf = t - ROUND;
        let k = t.to_bits() as i64 - ROUND.to_bits() as i64;
        let r = (xc - kf * LN2_HI) - kf * LN2_LO;
        let mut p = C[13];
        for &c in C[..13].iter().rev() {
            p = p * r + c;
        }
        let scale = f64::from_bits(((k + 1023) as u64) << 52);
        *o = p * scale;
    }
    if rare {
        // Arguments below LOW were clamped; compute them with the library's exp.
        for (o, &x) in out.iter_mut().zip(x) {
            if x < LOW {
                *o = x.exp();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn exp_is_within_two_ulp_of_the_library() {
        let mut xs: Vec<f64> = (0..1_000_000).map(|i| -(i as f64) * 7.46e-4).collect();
        xs.extend((0..100_000).map(|i| -(i as f64) * 1e-5));
        xs.extend([-0.0, 0.0, -1e-300, -5e-324, -0.5, -1.0, -10.0, -700.0, -707.9, -708.0, -708.1, -740.0, -745.2, -746.0, -1e6, f64::NEG_INFINITY]);
        let mut out = vec![0.0; xs.len()];
        exp_nonpositive(&xs, &mut out);
        let mut worst = 0;
        for (&x, &y) in xs.iter().zip(&out) {
            let want = x.exp();
            let u = ulps(y, want);
            assert!(u <= 2, "exp({x}) = {y}, library {want}");
            worst = worst.max(u);
        }
        assert!(worst <= 2);
        assert_eq!(out[xs.len() - 16], 1.0);
    }
}
