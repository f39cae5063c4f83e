//! Twin of `exact_sqdist.wgsl`: the reference's f64 sum of squares, `s = (x_j[0] − x_i[0])²`
//! then `s += (x_j[c] − x_i[c])²` for c = 1..D, each operation rounded once to nearest-even as
//! IEEE 754 binary64 does (`reference::distance_pair`'s sum, before its root), computed in
//! 32-bit integer arithmetic only, as WGSL (which has no f64 and no u64) must. Each function
//! here is the WGSL's line for line, words as `[lo, hi]`, so a failure on the device points at a
//! line this file also runs.
//!
//! Premises (checked where the kernel is chosen, `gpu::exact_sqdist::serves`): the inputs are
//! finite f64 values (every `Points` value is, with |v| < `MAX_ABS` = 1e150, so each square is
//! below 4e300 and finite). A sum that overflows (D above 4·10⁷) becomes +inf, as in f64: an
//! exponent of 2047 met by `add` is treated as a number and `round_pack` maps every exponent
//! ≥ 2047 to +inf, which is right for the sum of non-negative terms only (the only place an
//! inf can enter). No NaN can arise.

/// 64 bits as two words, `[lo, hi]`.
pub type U64 = [u32; 2];

const SIGN: u32 = 0x8000_0000;

pub fn add64(a: U64, b: U64) -> U64 {
    let lo = a[0].wrapping_add(b[0]);
    let c = u32::from(lo < a[0]);
    [lo, a[1].wrapping_add(b[1]).wrapping_add(c)]
}

/// a − b for a ≥ b.
pub fn sub64(a: U64, b: U64) -> U64 {
    let borrow = u32::from(a[0] < b[0]);
    [a[0].wrapping_sub(b[0]), a[1].wrapping_sub(b[1]).wrapping_sub(borrow)]
}

pub fn lt64(a: U64, b: U64) -> bool {
    a[1] < b[1] || (a[1] == b[1] && a[0] < b[0])
}

pub fn is_zero64(a: U64) -> bool {
    (a[0] | a[1]) == 0
}

/// a << s, 0 ≤ s < 64 (WGSL takes shift counts modulo 32, so each case is explicit).
pub fn shl64(a: U64, s: u32) -> U64 {
    if s == 0 {
        a
    } else if s < 32 {
        [a[0] << s, (a[1] << s) | (a[0] >> (32 - s))]
    } else {
        [0, a[0] << (s - 32)]
    }
}

/// a >> s with every bit shifted out ORed into bit 0 (the sticky bit); any s.
pub fn shr64_sticky(a: U64, s: u32) -> U64 {
    if s == 0 {
        return a;
    }
    if s >= 64 {
        return [u32::from(!is_zero64(a)), 0];
    }
    let (r, lost) = if s < 32 {
        ([(a[0] >> s) | (a[1] << (32 - s)), a[1] >> s], a[0] & ((1u32 << s) - 1))
    } else if s == 32 {
        ([a[1], 0], a[0])
    } else {
        ([a[1] >> (s - 32), 0], a[0] | (a[1] & ((1u32 << (s - 32)) - 1)))
    };
    [r[0] | u32::from(lost != 0), r[1]]
}

pub fn clz64(a: U64) -> u32 {
    if a[1] != 0 { a[1].leading_zeros() } else { 32 + a[0].leading_zeros() }
}

/// The full product of two words, from four 16-bit partial products.
pub fn mul32(a: u32, b: u32) -> U64 {
    let (a0, a1, b0, b1) = (a & 0xffff, a >> 16, b & 0xffff, b >> 16);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = p01.wrapping_add(p10);
    let carry_mid = u32::from(mid < p01);
    let lo = p00.wrapping_add(mid << 16);
    let c = u32::from(lo < p00);
    [lo, p11.wrapping_add(mid >> 16).wrapping_add(carry_mid << 16).wrapping_add(c)]
}

/// A finite f64's parts: sign bit, exponent E ≥ 1 (1 for subnormals and zero), significand m
/// (with the implicit bit for normals), value (−1)^sign · m · 2^(E − 1075).
pub struct Parts {
    pub sign: u32,
    pub e: i32,
    pub m: U64,
}

pub fn unpack(x: U64) -> Parts {
    let field = (x[1] >> 20) & 0x7ff;
    let frac_hi = x[1] & 0xfffff;
    if field == 0 {
        Parts { sign: x[1] & SIGN, e: 1, m: [x[0], frac_hi] }
    } else {
        Parts { sign: x[1] & SIGN, e: field as i32, m: [x[0], frac_hi | 0x10_0000] }
    }
}

/// Rounds `m` (56 bits: the significand, then guard, round and sticky bits; its top bit at 55
/// unless e = 1, a subnormal result) to nearest-even and packs it with `sign` and exponent `e`
/// (value m/8 · 2^(e − 1075)); e ≥ 2047 gives ±inf.
pub fn round_pack(sign: u32, e: i32, m: U64) -> U64 {
    let low = m[0] & 7;
    let mut r = shr64_plain3(m);
    if low > 4 || (low == 4 && (r[0] & 1) == 1) {
        r = add64(r, [1, 0]);
    }
    let mut e = e;
    if r[1] == 0x20_0000 {
        // Rounded up to 2^53: one more binade.
        r = [0, 0x10_0000];
        e += 1;
    }
    if e >= 2047 {
        return [0, sign | 0x7ff0_0000];
    }
    let field = if r[1] >= 0x10_0000 { e as u32 } else { 0 };
    [r[0], sign | (field << 20) | (r[1] & 0xfffff)]
}

/// m >> 3 (the guard bits dropped; `round_pack` read them first).
fn shr64_plain3(m: U64) -> U64 {
    [(m[0] >> 3) | (m[1] << 29), m[1] >> 3]
}

/// a + b, rounded to nearest-even (finite a and b; see the module's premises).
pub fn add(a: U64, b: U64) -> U64 {
    let (mut x, mut y) = (unpack(a), unpack(b));
    // x the larger magnitude.
    if y.e > x.e || (y.e == x.e && lt64(x.m, y.m)) {
        std::mem::swap(&mut x, &mut y);
    }
    if is_zero64(x.m) {
        // Both zero: −0 only for −0 + −0.
        return [0, x.sign & y.sign];
    }
    let mx = shl64(x.m, 3);
    let my = shr64_sticky(shl64(y.m, 3), (x.e - y.e) as u32);
    let mut e = x.e;
    let m = if x.sign == y.sign {
        let s = add64(mx, my);
        if s[1] >= 0x100_0000 {
            e += 1;
            shr64_sticky(s, 1)
        } else {
            s
        }
    } else {
        let d = sub64(mx, my);
        if is_zero64(d) {
            return [0, 0];
        }
        // Top bit back to 55 (clz64 = 8), not below the subnormal exponent 1.
        let shift = (clz64(d) as i32 - 8).min(e - 1);
        e -= shift;
        shl64(d, shift as u32)
    };
    round_pack(x.sign, e, m)
}

/// a − b.
pub fn sub(a: U64, b: U64) -> U64 {
    add(a, [b[0], b[1] ^ SIGN])
}

/// t², rounded to nearest-even (finite t).
pub fn square(t: U64) -> U64 {
    let u = unpack(t);
    if is_zero64(u.m) {
        return [0, 0];
    }
    // Subnormal t: its top bit to 52 (clz64 = 11), the exponent below 1.
    let sh = clz64(u.m) - 11;
    let m = shl64(u.m, sh);
    let e = u.e - sh as i32;
    // P = m² in four words: (mh·2^32 + ml)² = mh²·2^64 + 2·mh·ml·2^32 + ml².
    let (ml, mh) = (m[0], m[1]);
    let ll = mul32(ml, ml);
    let lh2 = shl64(mul32(ml, mh), 1);
    let mid = add64([ll[1], 0], lh2);
    let upper = add64(mul32(mh, mh), [mid[1], 0]);
    let p = [ll[0], mid[0], upper[0], upper[1]];
    // P in [2^104, 2^106): 56 bits from bit 49 or 50, the rest sticky.
    let top = p[3] >= 0x200;
    let (s, mut er) = if top { (18u32, 2 * e - 1022) } else { (17u32, 2 * e - 1023) };
    let lost = p[0] | (p[1] & ((1u32 << s) - 1));
    let mut r = [(p[1] >> s) | (p[2] << (32 - s)), (p[2] >> s) | (p[3] << (32 - s))];
    r[0] |= u32::from(lost != 0);
    if er < 1 {
        r = shr64_sticky(r, (1 - er) as u32);
        er = 1;
    }
    round_pack(0, er, r)
}

/// Splits an f64 into its words.
pub fn words(x: f64) -> U64 {
    let b = x.to_bits();
    [b as u32, (b >> 32) as u32]
}

/// The reference's sum of squares of `xi − xj` (the kernel's loop over one pair).
pub fn exact_sqdist(xi: &[U64], xj: &[U64]) -> U64 {
    let mut s = square(sub(xj[0], xi[0]));
    for c in 1..xi.len() {
        s = add(s, square(sub(xj[c], xi[c])));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;

    /// Joins words into an f64.
    fn value(w: U64) -> f64 {
        f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32))
    }

    /// Finite f64 values from every binade, subnormals and zeros of both signs, and values near
    /// each other (cancellation), with random significands whose low bits often sit at the
    /// rounding boundaries.
    fn draw(r: &mut SplitMix64) -> f64 {
        let bits = r.next_u64();
        let sign = bits & (1 << 63);
        match r.next_u64() % 8 {
            0 => f64::from_bits(sign | (bits & 0x000f_ffff_ffff_ffff)), // subnormal or zero
            1 => f64::from_bits(sign),                                  // ±0
            2 => {
                // Low significand bits all ones or all zeros: carries and exact ties.
                let e = 1 + r.next_u64() % 2046;
                let low = if r.next_u64().is_multiple_of(2) { 0 } else { 0xffff_ffff };
                f64::from_bits(sign | (e << 52) | (bits & 0x000f_ffff_0000_0000) | low)
            }
            3 => f64::from_bits(sign | ((1 + r.next_u64() % 2046) << 52) | (bits & 0x000f_ffff_ffff_ffff)),
            _ => {
                // Moderate exponents, where the data are.
                let e = 1023 - 60 + r.next_u64() % 120;
                f64::from_bits(sign | (e << 52) | (bits & 0x000f_ffff_ffff_ffff))
            }
        }
    }

    fn same(a: f64, b: U64) -> bool {
        a.to_bits() == value(b).to_bits()
    }

    #[test]
    fn add_and_sub_round_as_f64_does() {
        let mut r = SplitMix64(7);
        for _ in 0..400_000 {
            let (a, b) = (draw(&mut r), draw(&mut r));
            // Nearby operands: cancellation and equal exponents.
            let c = f64::from_bits(a.to_bits() ^ (r.next_u64() & 0xff));
            for (x, y) in [(a, b), (a, c), (c, a), (a, -c), (b, b), (a, -a)] {
                let s = x + y;
                if !s.is_finite() {
                    continue;
                }
                assert!(
                    same(s, add(words(x), words(y))),
                    "{x:e} + {y:e}: {s:e} vs {:e}",
                    value(add(words(x), words(y)))
                );
                let d = x - y;
                if d.is_finite() {
                    assert!(same(d, sub(words(x), words(y))), "{x:e} - {y:e}");
                }
            }
        }
    }

    #[test]
    fn squares_round_as_f64_does() {
        let mut r = SplitMix64(11);
        for _ in 0..1_000_000 {
            let t = draw(&mut r);
            let s = t * t;
            if s.is_finite() {
                assert!(same(s, square(words(t))), "{t:e}² = {s:e} vs {:e}", value(square(words(t))));
            }
        }
        // Squares at the subnormal boundary and on exact halfway cases of the last binade.
        for t in [f64::MIN_POSITIVE.sqrt(), 1.4916681462400413e-154, 2.2250738585072014e-308, 5e-324, 1e-162, 1e-160] {
            for u in [t, f64::from_bits(t.to_bits() + 1), f64::from_bits(t.to_bits() - 1)] {
                assert!(same(u * u, square(words(u))), "{u:e}²");
            }
        }
    }

    #[test]
    fn sums_of_squares_are_the_reference_sums() {
        let mut r = SplitMix64(3);
        for round in 0..20_000 {
            let d = 1 + (round % 70);
            let scale = [1.0, 1e-160, 1e-300, 1e140, 3.0e-5][round % 5];
            let xi: Vec<f64> = (0..d).map(|_| (r.uniform() - 0.5) * scale).collect();
            // Near duplicates: the differences' low bits decide.
            let xj: Vec<f64> = xi
                .iter()
                .map(|&v| {
                    if r.next_u64().is_multiple_of(3) { v } else { f64::from_bits(v.to_bits() ^ (r.next_u64() & 0x3f)) }
                })
                .collect();
            let want = {
                let t = xj[0] - xi[0];
                let mut s = t * t;
                for c in 1..d {
                    let t = xj[c] - xi[c];
                    s += t * t;
                }
                s
            };
            let (wi, wj): (Vec<U64>, Vec<U64>) =
                (xi.iter().map(|&v| words(v)).collect(), xj.iter().map(|&v| words(v)).collect());
            assert!(same(want, exact_sqdist(&wi, &wj)), "D = {d}, scale {scale:e}");
        }
    }

    #[test]
    fn the_word_helpers_are_u64_arithmetic() {
        let mut r = SplitMix64(5);
        let join = |w: U64| u64::from(w[0]) | (u64::from(w[1]) << 32);
        for _ in 0..200_000 {
            let (a, b) = (r.next_u64() >> (r.next_u64() % 64), r.next_u64() >> (r.next_u64() % 64));
            let (wa, wb) = (words(f64::from_bits(a)), words(f64::from_bits(b)));
            assert_eq!(join(add64(wa, wb)), a.wrapping_add(b));
            let (hi, lo) = (a.max(b), a.min(b));
            assert_eq!(join(sub64(words(f64::from_bits(hi)), words(f64::from_bits(lo)))), hi - lo);
            assert_eq!(lt64(wa, wb), a < b);
            assert_eq!(clz64(wa), a.leading_zeros());
            let s = (r.next_u64() % 64) as u32;
            assert_eq!(join(shl64(wa, s)), a << s);
            let s = (r.next_u64() % 70) as u32;
            let want = if s >= 64 { u64::from(a != 0) } else { (a >> s) | u64::from(a & ((1u64 << s) - 1) != 0) };
            assert_eq!(join(shr64_sticky(wa, s)), want, "{a:x} >> {s}");
            let (x, y) = (a as u32, b as u32);
            assert_eq!(join(mul32(x, y)), u64::from(x) * u64::from(y));
        }
    }
}
