//! ln x for the NeRV divergences: fdlibm's `__ieee754_log` (Sun, 1993; musl's 2012 `log.c`),
//! the same operations in the same order on every target, so that the sums of its values do not
//! depend on the machine's library (glibc's and Rust's wasm `libm` can differ by an ulp).
//!
//! `x = 2^k · (1 + f)` with `1 + f ∈ [√2/2, √2)`; `s = f/(2 + f)`; `ln(1 + f) = f − f²/2 +
//! s(f²/2 + R(s²))` with fdlibm's degree-14 minimax R (error below 2^−58.45); k·ln 2 in two parts.
//! fdlibm bounds the whole error below 1 ulp (tested against the library's `ln` below). Its
//! premise here: `x` is positive, normal and finite; any other value goes to the library's `ln`
//! (both versions check it lane by lane).

use super::exp::{LN2_HI, LN2_LO, ROUND};

const LG: [f64; 7] = [
    f64::from_bits(0x3fe5555555555593),
    f64::from_bits(0x3fd999999997fa04),
    f64::from_bits(0x3fd2492494229359),
    f64::from_bits(0x3fcc71c51d8e78af),
    f64::from_bits(0x3fc7466496cb03de),
    f64::from_bits(0x3fc39a09d078c69f),
    f64::from_bits(0x3fc2f112df3e5244),
];
/// The high word of √2/2: mantissas from it up are put in [√2/2, √2) by moving one exponent.
const SQRT_HALF_HI: u64 = 0x3fe6a09e;

/// ln x (module docs).
#[inline(always)]
pub(crate) fn ln(x: f64) -> f64 {
    if !(f64::MIN_POSITIVE..=f64::MAX).contains(&x) {
        return x.ln();
    }
    let ix = x.to_bits();
    let hx = (ix >> 32) + (0x3ff00000 - SQRT_HALF_HI);
    let k = (hx >> 20) as i64 - 0x3ff;
    let hx = (hx & 0x000fffff) + SQRT_HALF_HI;
    let m = f64::from_bits((hx << 32) | (ix & 0xffff_ffff));
    let dk = f64::from_bits((ROUND.to_bits() as i64 + k) as u64) - ROUND;
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    s * (hfsq + r) + dk * LN2_LO - hfsq + f + dk * LN2_HI
}

/// [`ln`] on eight lanes: the same operations in the same order; lanes outside its premise are
/// recomputed by the scalar function (which hands them to the library).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    use super::{LG, LN2_HI, LN2_LO, ROUND, SQRT_HALF_HI};

    #[inline]
    #[target_feature(enable = "avx512f")]
    pub(crate) fn ln_v(x: __m512d) -> __m512d {
        let pd = _mm512_set1_pd;
        let i64s = |v: u64| _mm512_set1_epi64(v as i64);
        let ix = _mm512_castpd_si512(x);
        let hx = _mm512_add_epi64(_mm512_srli_epi64::<32>(ix), i64s(0x3ff00000 - SQRT_HALF_HI));
        let k = _mm512_sub_epi64(_mm512_srli_epi64::<20>(hx), i64s(0x3ff));
        let hx = _mm512_add_epi64(_mm512_and_si512(hx, i64s(0x000fffff)), i64s(SQRT_HALF_HI));
        let m =
            _mm512_castsi512_pd(_mm512_or_si512(_mm512_slli_epi64::<32>(hx), _mm512_and_si512(ix, i64s(0xffff_ffff))));
        let dk = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_add_epi64(i64s(ROUND.to_bits()), k)), pd(ROUND));
        let f = _mm512_sub_pd(m, pd(1.0));
        let hfsq = _mm512_mul_pd(_mm512_mul_pd(pd(0.5), f), f);
        let s = _mm512_div_pd(f, _mm512_add_pd(pd(2.0), f));
        let z = _mm512_mul_pd(s, s);
        let w = _mm512_mul_pd(z, z);
        let t1 = _mm512_mul_pd(
            w,
            _mm512_add_pd(pd(LG[1]), _mm512_mul_pd(w, _mm512_add_pd(pd(LG[3]), _mm512_mul_pd(w, pd(LG[5]))))),
        );
        let t2 = _mm512_mul_pd(
            z,
            _mm512_add_pd(
                pd(LG[0]),
                _mm512_mul_pd(
                    w,
                    _mm512_add_pd(pd(LG[2]), _mm512_mul_pd(w, _mm512_add_pd(pd(LG[4]), _mm512_mul_pd(w, pd(LG[6]))))),
                ),
            ),
        );
        let r = _mm512_add_pd(t2, t1);
        let v = _mm512_add_pd(_mm512_mul_pd(s, _mm512_add_pd(hfsq, r)), _mm512_mul_pd(dk, pd(LN2_LO)));
        let v = _mm512_add_pd(_mm512_add_pd(_mm512_sub_pd(v, hfsq), f), _mm512_mul_pd(dk, pd(LN2_HI)));
        // Outside the premise (not positive normal finite, NaN included): the scalar function.
        let inside = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(x, pd(f64::MIN_POSITIVE))
            & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(x, pd(f64::MAX));
        if inside == 0xff {
            return v;
        }
        let (mut xs, mut vs) = ([0.0f64; 8], [0.0f64; 8]);
        // SAFETY: eight f64 each.
        unsafe {
            _mm512_storeu_pd(xs.as_mut_ptr(), x);
            _mm512_storeu_pd(vs.as_mut_ptr(), v);
        }
        for (l, (o, &x)) in vs.iter_mut().zip(&xs).enumerate() {
            if inside & (1 << l) == 0 {
                *o = super::ln(x);
            }
        }
        // SAFETY: eight f64.
        unsafe { _mm512_loadu_pd(vs.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    fn arguments() -> Vec<f64> {
        let mut xs: Vec<f64> = (1..1_000_000).map(|i| i as f64 * 1.37e-6).collect();
        xs.extend((0..200_000).map(|i| 1e-12 * 1.0002f64.powi(i)));
        // Around the mantissa's switch at √2/2 and around 1, and the exponents' ends.
        for c in [std::f64::consts::FRAC_1_SQRT_2, 1.0, std::f64::consts::SQRT_2, 2.0] {
            for e in [-1000i32, -40, -1, 0, 1, 40, 1000] {
                let mut v = c * 2f64.powi(e);
                for _ in 0..50 {
                    xs.push(v);
                    v = f64::from_bits(v.to_bits() - 1);
                }
            }
        }
        xs.extend([f64::MIN_POSITIVE, f64::MAX, 5e-324, 0.0, -0.0, -1.0, f64::INFINITY, f64::NAN, 1e-310]);
        xs
    }

    #[test]
    fn ln_is_within_one_ulp_of_the_library() {
        for x in arguments() {
            let (got, want) = (ln(x), x.ln());
            if want.is_nan() {
                assert!(got.is_nan(), "ln({x}) = {got}");
            } else {
                assert!(ulps(got, want) <= 1 || got == want, "ln({x}) = {got}, library {want}");
            }
        }
    }

    /// The AVX-512 lanes are the scalar function's bits, inside the premise and out of it.
    #[test]
    fn vector_ln_is_the_scalar_ln() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            use std::arch::x86_64::*;
            let xs = arguments();
            for chunk in xs.chunks_exact(8) {
                let mut out = [0.0f64; 8];
                // SAFETY: the CPU has AVX-512F; eight f64 each.
                unsafe { _mm512_storeu_pd(out.as_mut_ptr(), avx512::ln_v(_mm512_loadu_pd(chunk.as_ptr()))) };
                for (&x, &o) in chunk.iter().zip(&out) {
                    let want = ln(x);
                    assert!(o.to_bits() == want.to_bits() || (o.is_nan() && want.is_nan()), "ln({x}): {o} vs {want}");
                }
            }
        }
    }
}
