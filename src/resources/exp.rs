//! e^x for x ≤ 0: the one exponential of the kernels (NeRV's Gaussian, CCA's exponential,
//! `kl_div`'s and `dtm`'s densities), the same bits on every target, since the measures are sums
//! of these values and must not depend on the machine that computed them.
//!
//! `x = (16e + j)·ln 2/16 + r` with |r| ≤ ln 2/32 (Cody–Waite, fdlibm's split of ln 2), then
//! `e^x = 2^e · T_j · (1 + q)`: `T_j` is 2^(j/16) correctly rounded ([`TABLE`]), `q = e^r − 1` by
//! its Taylor polynomial to r⁷ (truncation below 1.2·10⁻¹⁸ relative), `T_j + T_j·q` rounded once
//! more, and the power of two multiplies exactly (the result is normal above [`LOW`]). Relative
//! error about 2.1·2⁻⁵³ (T_j's rounding, the sum's; j = 0 has T_j = 1 exactly), so within 2 ulp
//! of the correctly rounded value (tested against the library's `exp`). Every version performs
//! the same multiplications and additions, never fused, in the same order: the portable loops
//! (vectorised by the compiler), the AVX-512 vectors ([`avx512`]) and wasm.

use multiversion::multiversion;

/// Below this the result is subnormal or zero (e^−708 ≈ 2^−1021.4 is still normal).
pub(crate) const LOW: f64 = -708.0;

/// Cody–Waite split of ln 2 (fdlibm's, shared with `ln`): `k · LN2_HI` is exact for |k| < 2²⁰
/// (32 significant bits).
pub(super) const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
pub(super) const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// The split over 16 (dividing by a power of two is exact).
const LN2_HI16: f64 = LN2_HI / 16.0;
const LN2_LO16: f64 = LN2_LO / 16.0;
/// 16 / ln 2, rounded: only which k it picks depends on it (|r| stays below ln 2/32 + 2⁻⁴⁰).
const SIXTEEN_LOG2E: f64 = 16.0 * std::f64::consts::LOG2_E;
/// 1.5 · 2⁵²: adding it rounds to the nearest integer, which lands in the low bits (`ln` adds
/// an integer's bits to it to get that integer as an f64).
pub(super) const ROUND: f64 = 6_755_399_441_055_744.0;

/// 2^(j/16), j = 0..15, correctly rounded (generated with 60-digit decimal arithmetic).
const TABLE: [f64; 16] = [
    f64::from_bits(0x3ff0000000000000),
    f64::from_bits(0x3ff0b5586cf9890f),
    f64::from_bits(0x3ff172b83c7d517b),
    f64::from_bits(0x3ff2387a6e756238),
    f64::from_bits(0x3ff306fe0a31b715),
    f64::from_bits(0x3ff3dea64c123422),
    f64::from_bits(0x3ff4bfdad5362a27),
    f64::from_bits(0x3ff5ab07dd485429),
    f64::from_bits(0x3ff6a09e667f3bcd),
    f64::from_bits(0x3ff7a11473eb0187),
    f64::from_bits(0x3ff8ace5422aa0db),
    f64::from_bits(0x3ff9c49182a3f090),
    f64::from_bits(0x3ffae89f995ad3ad),
    f64::from_bits(0x3ffc199bdd85529c),
    f64::from_bits(0x3ffd5818dcfba487),
    f64::from_bits(0x3ffea4afa2a490da),
];

/// `(e^r − 1)/r`'s Taylor coefficients 1/(i+1)!, i = 0..=6.
const Q: [f64; 7] = [1.0, 1.0 / 2.0, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0];

/// e^max(x, LOW) for x ≤ 0 (module docs). The one scalar body of every loop below, inlined into
/// each target's clone.
#[inline(always)]
pub(crate) fn exp_clamped(x: f64) -> f64 {
    let xc = x.max(LOW);
    let t = xc * SIXTEEN_LOG2E + ROUND;
    let kf = t - ROUND;
    let k = t.to_bits() as i64 - ROUND.to_bits() as i64;
    let r = (xc - kf * LN2_HI16) - kf * LN2_LO16;
    let mut p = Q[6];
    for &c in Q[..6].iter().rev() {
        p = p * r + c;
    }
    let q = p * r;
    let tj = TABLE[(k & 15) as usize];
    let scale = f64::from_bits((((k >> 4) + 1023) as u64) << 52);
    (tj + tj * q) * scale
}

/// `out[i] = e^{x[i]}` for `x[i] ≤ 0` (arguments below [`LOW`] by the library's `exp`).
pub(crate) fn exp_nonpositive(x: &[f64], out: &mut [f64]) {
    assert_eq!(x.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    if super::isa::avx512() {
        // SAFETY: the CPU has AVX-512F; the lengths are equal (checked above).
        let rare = unsafe { avx512::map(x, out, |v| v, false) };
        return below_low(rare, x, out, |x| x);
    }
    let rare = exp_nonpositive_portable(x, out);
    below_low(rare, x, out, |x| x)
}

/// `out[i] = e^{−x[i]/λ}` (x ≥ 0, λ > 0) as [`exp_nonpositive`] gives it for the arguments
/// `−x[i]/λ`: the quotient and the exponential in one loop, the same bits.
pub(crate) fn exp_neg_over(x: &[f64], lambda: f64, out: &mut [f64]) {
    assert_eq!(x.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    if super::isa::avx512() {
        use std::arch::x86_64::*;
        // −x/λ = x/(−λ) bit for bit (rounding to nearest is symmetric).
        let neg = -lambda;
        // SAFETY: the CPU has AVX-512F; the lengths are equal (checked above).
        let rare = unsafe { avx512::map(x, out, |v| _mm512_div_pd(v, _mm512_set1_pd(neg)), false) };
        return below_low(rare, x, out, |x| -x / lambda);
    }
    let rare = exp_neg_over_portable(x, lambda, out);
    below_low(rare, x, out, |x| -x / lambda)
}

/// [`exp_nonpositive`] with the results below e^−708 (under 3.3·10⁻³⁰⁸: subnormal or 0) written
/// as 0, branch-free: for sums that hold a term of at least 1 (NeRV's shifted kernel, whose
/// probabilities are floored at 10⁻¹² anyway), where such a term cannot change a bit. The
/// definition [`exp_scaled_flushed`] and NeRV's fused kernel are held to (tests).
#[cfg(test)]
pub(crate) fn exp_nonpositive_flushed(x: &[f64], out: &mut [f64]) {
    assert_eq!(x.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    if super::isa::avx512() {
        // SAFETY: the CPU has AVX-512F; the lengths are equal (checked above).
        unsafe { avx512::map(x, out, |v| v, true) };
        return;
    }
    flushed_portable(x, out)
}

/// `out[j] = e^{−β·x[j]}` as [`exp_nonpositive_flushed`] gives it for the arguments `−β·x[j]`
/// (x ≥ 0): the product and the exponential in one loop, the same bits.
pub(crate) fn exp_scaled_flushed(beta: f64, x: &[f64], out: &mut [f64]) {
    assert_eq!(x.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    if super::isa::avx512() {
        use std::arch::x86_64::*;
        // SAFETY: the CPU has AVX-512F; the lengths are equal (checked above).
        unsafe { avx512::map(x, out, |v| _mm512_mul_pd(_mm512_set1_pd(-beta), v), true) };
        return;
    }
    scaled_flushed_portable(beta, x, out)
}

/// Arguments below [`LOW`] were clamped: their results by the library's `exp` (rare: a kernel
/// value under 3.3·10⁻³⁰⁸).
fn below_low(rare: bool, x: &[f64], out: &mut [f64], arg: impl Fn(f64) -> f64) {
    if rare {
        for (o, &x) in out.iter_mut().zip(x) {
            let a = arg(x);
            if a < LOW {
                *o = a.exp();
            }
        }
    }
}

#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn exp_nonpositive_portable(x: &[f64], out: &mut [f64]) -> bool {
    let mut rare = false;
    for (o, &x) in out.iter_mut().zip(x) {
        rare |= x < LOW;
        *o = exp_clamped(x);
    }
    rare
}

#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn exp_neg_over_portable(x: &[f64], lambda: f64, out: &mut [f64]) -> bool {
    let mut rare = false;
    for (o, &x) in out.iter_mut().zip(x) {
        let a = -x / lambda;
        rare |= a < LOW;
        *o = exp_clamped(a);
    }
    rare
}

#[cfg(test)]
#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn flushed_portable(x: &[f64], out: &mut [f64]) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = flushed(x);
    }
}

/// One argument's flushed exponential: 0 below [`LOW`], else [`exp_clamped`].
#[inline(always)]
fn flushed(a: f64) -> f64 {
    if a < LOW { 0.0 } else { exp_clamped(a) }
}

/// One element of [`exp_scaled_flushed`] (the scalar rule its vector versions follow lane by
/// lane, and the tails of loops that fuse it).
#[inline(always)]
pub(crate) fn scaled_flushed(beta: f64, x: f64) -> f64 {
    flushed(-beta * x)
}

#[multiversion(targets("x86_64+avx2", "aarch64+neon"))]
fn scaled_flushed_portable(beta: f64, x: &[f64], out: &mut [f64]) {
    for (o, &x) in out.iter_mut().zip(x) {
        *o = scaled_flushed(beta, x);
    }
}

/// [`exp_clamped`] on eight lanes: the same operations in the same order, the table read by
/// one two-source permutation (the index's low four bits are j).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    use super::{LN2_HI16, LN2_LO16, LOW, Q, ROUND, SIXTEEN_LOG2E, TABLE};

    /// e^max(x, LOW) of each lane (x ≤ 0).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn exp_v(x: __m512d) -> __m512d {
        let round = _mm512_set1_pd(ROUND);
        let xc = _mm512_max_pd(x, _mm512_set1_pd(LOW));
        let t = _mm512_add_pd(_mm512_mul_pd(xc, _mm512_set1_pd(SIXTEEN_LOG2E)), round);
        let kf = _mm512_sub_pd(t, round);
        let r = _mm512_sub_pd(
            _mm512_sub_pd(xc, _mm512_mul_pd(kf, _mm512_set1_pd(LN2_HI16))),
            _mm512_mul_pd(kf, _mm512_set1_pd(LN2_LO16)),
        );
        let mut p = _mm512_set1_pd(Q[6]);
        for &c in Q[..6].iter().rev() {
            p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(c));
        }
        let q = _mm512_mul_pd(p, r);
        let k = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_set1_epi64(ROUND.to_bits() as i64));
        // SAFETY: TABLE holds 16 f64, two loads of eight.
        let (lo, hi) = unsafe { (_mm512_loadu_pd(TABLE.as_ptr()), _mm512_loadu_pd(TABLE.as_ptr().add(8))) };
        let tj = _mm512_permutex2var_pd(lo, k, hi);
        let y = _mm512_add_pd(tj, _mm512_mul_pd(tj, q));
        let scale = _mm512_castsi512_pd(_mm512_slli_epi64::<52>(_mm512_add_epi64(
            _mm512_srai_epi64::<4>(k),
            _mm512_set1_epi64(1023),
        )));
        _mm512_mul_pd(y, scale)
    }

    /// `out[i] = e^{arg(x[i])}` clamped at [`LOW`] or, with `flush`, 0 where the argument is
    /// below it; returns whether any argument was below it. The last `len mod 8` go through the
    /// same vector operations on a padded copy.
    ///
    /// # Safety
    /// The CPU has AVX-512F and `out.len() == x.len()`.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn map(x: &[f64], out: &mut [f64], arg: impl Fn(__m512d) -> __m512d, flush: bool) -> bool {
        debug_assert_eq!(x.len(), out.len());
        let low = _mm512_set1_pd(LOW);
        let mut rare = 0u8;
        let full = x.len() - x.len() % 8;
        for at in (0..full).step_by(8) {
            // SAFETY: at + 8 ≤ len of x and out.
            let a = arg(unsafe { _mm512_loadu_pd(x.as_ptr().add(at)) });
            let below = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, low);
            rare |= below;
            let v = if flush { _mm512_maskz_mov_pd(!below, exp_v(a)) } else { exp_v(a) };
            // SAFETY: as the load.
            unsafe { _mm512_storeu_pd(out.as_mut_ptr().add(at), v) };
        }
        let (mut tail_x, mut tail_o) = ([0.0f64; 8], [0.0f64; 8]);
        let rest = x.len() - full;
        tail_x[..rest].copy_from_slice(&x[full..]);
        // SAFETY: eight f64 each.
        let a = arg(unsafe { _mm512_loadu_pd(tail_x.as_ptr()) });
        let below = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, low) & ((1u16 << rest) - 1) as u8;
        rare |= below;
        let v = if flush { _mm512_maskz_mov_pd(!below, exp_v(a)) } else { exp_v(a) };
        // SAFETY: eight f64.
        unsafe { _mm512_storeu_pd(tail_o.as_mut_ptr(), v) };
        out[full..].copy_from_slice(&tail_o[..rest]);
        rare != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    fn arguments() -> Vec<f64> {
        let mut xs: Vec<f64> = (0..1_000_000).map(|i| -(i as f64) * 7.46e-4).collect();
        xs.extend((0..100_000).map(|i| -(i as f64) * 1e-5));
        // Around every table boundary of the reduction: k changes at x = (m + ½)·ln 2/16.
        for m in 0..16_400 {
            let edge = -(m as f64 + 0.5) * std::f64::consts::LN_2 / 16.0;
            let mut v = edge;
            for _ in 0..3 {
                v = f64::from_bits(v.to_bits() - 1);
                xs.push(v);
            }
            let mut v = edge;
            for _ in 0..3 {
                xs.push(v);
                v = f64::from_bits(v.to_bits() + 1);
            }
        }
        xs.extend([
            -0.0,
            0.0,
            -1e-300,
            -5e-324,
            -0.5,
            -1.0,
            -10.0,
            -700.0,
            -707.9,
            -708.0,
            -708.1,
            -740.0,
            -745.2,
            -746.0,
            -1e6,
            f64::NEG_INFINITY,
        ]);
        xs
    }

    #[test]
    fn exp_is_within_two_ulp_of_the_library() {
        let xs = arguments();
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
        // The flushed variant: the same bits down to e^−708, 0 below.
        let mut flushed = vec![1.0; xs.len()];
        exp_nonpositive_flushed(&xs, &mut flushed);
        for ((&x, &y), &f) in xs.iter().zip(&out).zip(&flushed) {
            if x < LOW {
                assert_eq!(f, 0.0, "exp({x})");
            } else {
                assert_eq!(f.to_bits(), y.to_bits(), "exp({x})");
            }
        }
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|v| v.to_bits()).collect()
    }

    /// Every version is the scalar body's bits, on every length's tail, for all four loops
    /// (AVX-512 where the CPU has it, and the portable loops through the test switch).
    #[test]
    fn every_version_is_the_scalar_body() {
        let mut xs = arguments();
        xs.truncate(200_003);
        xs.extend(arguments().iter().rev().take(40));
        let scalar: Vec<f64> = xs.iter().map(|&x| if x < LOW { x.exp() } else { exp_clamped(x) }).collect();
        for portable in [false, true] {
            crate::resources::isa::PORTABLE.store(portable, std::sync::atomic::Ordering::Relaxed);
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17, xs.len()] {
                let x = &xs[xs.len() - len..];
                let want = &scalar[xs.len() - len..];
                let mut out = vec![7.0; len];
                exp_nonpositive(x, &mut out);
                assert_eq!(bits(&out), bits(want), "len {len} portable {portable}");
                let mut f = vec![7.0; len];
                exp_nonpositive_flushed(x, &mut f);
                let want_f: Vec<f64> = x.iter().zip(want).map(|(&x, &w)| if x < LOW { 0.0 } else { w }).collect();
                assert_eq!(bits(&f), bits(&want_f), "len {len} portable {portable}");
                let pos: Vec<f64> = x.iter().map(|v| -v).collect();
                for lambda in [1e-3, 0.5, 5.0, 1e6] {
                    let arg: Vec<f64> = pos.iter().map(|&b| -b / lambda).collect();
                    let (mut a, mut b) = (vec![0.0; len], vec![0.0; len]);
                    exp_nonpositive(&arg, &mut a);
                    exp_neg_over(&pos, lambda, &mut b);
                    assert_eq!(bits(&a), bits(&b), "λ {lambda} len {len} portable {portable}");
                    let arg: Vec<f64> = pos.iter().map(|&b| -lambda * b).collect();
                    exp_nonpositive_flushed(&arg, &mut a);
                    exp_scaled_flushed(lambda, &pos, &mut b);
                    assert_eq!(bits(&a), bits(&b), "β {lambda} len {len} portable {portable}");
                }
            }
        }
        crate::resources::isa::PORTABLE.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}
