//! Integer lattices: a Euclidean space whose coordinates are all small integers (pixel counts,
//! the digits' 0–16, UMI counts, quantised data) has exact squared distances in integer
//! arithmetic, in any order and in any form, so its rows are ranked by integer keys instead of
//! f64 distances — with the reference's order, ties by index, exactly.
//!
//! The premises, each checked by [`Lattice::of`] before a lattice is made:
//! 1. the metric is Euclidean or squared Euclidean and the space is given as coordinates;
//! 2. every coordinate is an integer of magnitude at most 2^31 (so it and every difference of
//!    two of them are exact in f64);
//! 3. each column's range `R_c = max − min` is at most `i16::MAX` (the shifted coordinates
//!    `u = x − min_c ∈ [0, R_c]` and their differences fit i16);
//! 4. `S_max = Σ_c R_c² ≤ i32::MAX`.
//!
//! What follows, for every pair: the reference's `Σ_c (x_jc − x_ic)²` (docs/exactness.md) has
//! exact differences (2), exact squares and exact partial sums (each an integer ≤ S_max < 2^53),
//! so it is the integer `S = Σ_c (u_jc − u_ic)²` whatever the order, and the reference's
//! distance is `fl(√S)` (squared Euclidean: S itself). `fl∘√` is strictly increasing on the
//! integers below 2^50 (for a < b ≤ 2^50, √b − √a > 2^−26 ≥ the ulp of √b), so ordering by
//! `(S, j)` is ordering by `(d, j)`. S is computed in the Gram form `|u_i|² + |u_j|² − 2 u_i·u_j`:
//! every product and every partial dot product lies in `[0, S_max]` (all u ≥ 0, by 3 and 4), so
//! the i32 lanes never overflow, and the final sum is taken mod 2^32, whose true value
//! `S ∈ [0, S_max]` it therefore is. Every version (portable, x86 AVX2, wasm SIMD) computes
//! integers, so all give the same keys; a test holds them to each other at the premises'
//! extremes.

use crate::data::{Kernel, Points};

/// Points per block of the packed layout (one 256-bit or two 128-bit vectors of i16 pairs).
const BLOCK: usize = 8;

/// A space's coordinates as shifted i16 integers, packed for the key rows.
pub struct Lattice {
    n: usize,
    /// Dimension pairs: ⌈D / 2⌉.
    pairs: usize,
    /// Block b, dimension pair p: `packed[(b · pairs + p) · 16 + 2k + t] = u[8b + k][2p + t]`
    /// (0 beyond n or D), so one multiply-add of adjacent lanes gives each point's two terms.
    packed: Vec<i16>,
    /// `|u_j|²` per point, padded with 0 to whole blocks.
    norms: Vec<u32>,
    /// `Σ_c R_c²`: no key exceeds it.
    max_key: u32,
    /// Squared Euclidean (the key is the distance) rather than Euclidean (its root).
    squared: bool,
}

impl Lattice {
    /// The lattice of `points` when every premise holds (module docs), else None.
    pub fn of(points: &Points) -> Option<Lattice> {
        let (mins, max_key, squared) = Lattice::premises(points)?;
        let (n, dim) = (points.n(), points.dim());
        let pairs = dim.div_ceil(2);
        let blocks = n.div_ceil(BLOCK);
        let mut packed = vec![0i16; blocks * pairs * 2 * BLOCK];
        let mut norms = vec![0u32; blocks * BLOCK];
        for (j, norm) in norms.iter_mut().enumerate().take(n) {
            let row = points.row(j);
            let (b, k) = (j / BLOCK, j % BLOCK);
            let mut s: u64 = 0;
            for (c, (&x, &m)) in row.iter().zip(&mins).enumerate() {
                let u = x as i64 - m; // in [0, R_c] ⊆ [0, i16::MAX]
                s += (u * u) as u64;
                packed[(b * pairs + c / 2) * 2 * BLOCK + 2 * k + c % 2] = u as i16;
            }
            *norm = s as u32; // ≤ Σ R_c² ≤ i32::MAX
        }
        Some(Lattice { n, pairs, packed, norms, max_key, squared })
    }

    /// Checks the premises (module docs): the columns' minima, `S_max` and whether the metric
    /// is the squared one, when they hold.
    fn premises(points: &Points) -> Option<(Vec<i64>, u32, bool)> {
        let squared = match points.metric().kernel() {
            Kernel::Euclidean => false,
            Kernel::SqEuclidean => true,
            _ => return None,
        };
        let (n, dim) = (points.n(), points.dim());
        if !points.has_coordinates() || n == 0 || dim == 0 {
            return None;
        }
        const LIMIT: f64 = 2_147_483_648.0; // 2^31
        let mut mins = Vec::with_capacity(dim);
        let mut max_key: u64 = 0;
        for c in 0..dim {
            let col = points.col(c);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for &x in col {
                // NaN fails `abs() <= LIMIT`; infinities fail it too.
                if !(x.abs() <= LIMIT) || x.fract() != 0.0 {
                    return None;
                }
                lo = lo.min(x);
                hi = hi.max(x);
            }
            // Both are integers of magnitude ≤ 2^31: exact in i64.
            let range = hi as i64 - lo as i64;
            if range > i64::from(i16::MAX) {
                return None;
            }
            max_key += (range * range) as u64;
            if max_key > i32::MAX as u64 {
                return None;
            }
            mins.push(lo as i64);
        }
        Some((mins, max_key as u32, squared))
    }

    /// The largest key any pair can have.
    pub fn max_key(&self) -> u32 {
        self.max_key
    }

    /// The reference's distance of a pair whose key is `s` (module docs: the same bits).
    #[inline]
    pub fn distance(&self, s: u32) -> f64 {
        if self.squared { f64::from(s) } else { f64::from(s).sqrt() }
    }

    /// Point i's two coordinates of each dimension pair, as the u32 a 32-bit lane broadcasts.
    fn pair_words(&self, i: usize, out: &mut Vec<u32>) {
        let (b, k) = (i / BLOCK, i % BLOCK);
        out.clear();
        out.extend((0..self.pairs).map(|p| {
            let at = (b * self.pairs + p) * 2 * BLOCK + 2 * k;
            u32::from(self.packed[at] as u16) | (u32::from(self.packed[at + 1] as u16) << 16)
        }));
    }

    /// `keys[j] = S_ij` for every j (length n; `keys[i] = 0`); returns the largest. `words` is
    /// scratch.
    pub fn keys_row(&self, i: usize, words: &mut Vec<u32>, keys: &mut [u32]) -> u32 {
        assert_eq!(keys.len(), self.n, "one key per point");
        self.pair_words(i, words);
        let ni = self.norms[i];
        keys_blocks(self, words, ni, keys)
    }
}

/// The dot products `u_i · u_j` of each block's eight points, written as keys.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn keys_blocks(l: &Lattice, words: &[u32], ni: u32, keys: &mut [u32]) -> u32 {
    use core::arch::wasm32::*;
    let step = l.pairs * 2 * BLOCK;
    let full = l.n / BLOCK;
    let mut top = u32x4_splat(0);
    for b in 0..l.n.div_ceil(BLOCK) {
        let block = &l.packed[b * step..(b + 1) * step];
        let (mut a0, mut a1) = (i32x4_splat(0), i32x4_splat(0));
        for (v, &w) in block.chunks_exact(2 * BLOCK).zip(words) {
            let xv = u32x4_splat(w);
            // SAFETY: `v` holds 16 i16 (32 bytes); unaligned loads are allowed.
            let (v0, v1) = unsafe { (v128_load(v.as_ptr().cast()), v128_load(v.as_ptr().add(8).cast())) };
            a0 = i32x4_add(a0, i32x4_dot_i16x8(v0, xv));
            a1 = i32x4_add(a1, i32x4_dot_i16x8(v1, xv));
        }
        let nrm = &l.norms[b * BLOCK..(b + 1) * BLOCK];
        // SAFETY: `nrm` holds 8 u32.
        let (n0, n1) = unsafe { (v128_load(nrm.as_ptr().cast()), v128_load(nrm[4..].as_ptr().cast())) };
        let base = u32x4_splat(ni);
        let s0 = i32x4_sub(i32x4_add(base, n0), i32x4_shl(a0, 1));
        let s1 = i32x4_sub(i32x4_add(base, n1), i32x4_shl(a1, 1));
        if b < full {
            top = u32x4_max(top, u32x4_max(s0, s1));
            let out = &mut keys[b * BLOCK..(b + 1) * BLOCK];
            // SAFETY: `out` holds 8 u32.
            unsafe {
                v128_store(out.as_mut_ptr().cast(), s0);
                v128_store(out[4..].as_mut_ptr().cast(), s1);
            }
        } else {
            let mut tmp = [0u32; BLOCK];
            // SAFETY: `tmp` holds 8 u32.
            unsafe {
                v128_store(tmp.as_mut_ptr().cast(), s0);
                v128_store(tmp[4..].as_mut_ptr().cast(), s1);
            }
            let last = &tmp[..l.n - b * BLOCK];
            keys[b * BLOCK..].copy_from_slice(last);
            top = u32x4_max(top, u32x4_splat(last.iter().copied().max().unwrap_or(0)));
        }
    }
    let t = u32x4_max(top, i32x4_shuffle::<2, 3, 0, 1>(top, top));
    u32x4_extract_lane::<0>(t).max(u32x4_extract_lane::<1>(t))
}

/// The dot products `u_i · u_j` of each block's eight points, written as keys.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn keys_blocks(l: &Lattice, words: &[u32], ni: u32, keys: &mut [u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        return unsafe { x86::keys_blocks_avx2(l, words, ni, keys) };
    }
    keys_blocks_portable(l, words, ni, keys)
}

/// [`keys_blocks`] in scalar integer arithmetic (the same keys: module docs).
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
fn keys_blocks_portable(l: &Lattice, words: &[u32], ni: u32, keys: &mut [u32]) -> u32 {
    let step = l.pairs * 2 * BLOCK;
    for (j, key) in keys.iter_mut().enumerate() {
        let (b, k) = (j / BLOCK, j % BLOCK);
        let block = &l.packed[b * step..(b + 1) * step];
        let mut dot: i32 = 0;
        for (p, &w) in words.iter().enumerate() {
            let at = p * 2 * BLOCK + 2 * k;
            let (x0, x1) = (i32::from(w as u16 as i16), i32::from((w >> 16) as u16 as i16));
            dot += i32::from(block[at]) * x0 + i32::from(block[at + 1]) * x1;
        }
        *key = ni.wrapping_add(l.norms[j]).wrapping_sub((dot as u32).wrapping_mul(2));
    }
    keys.iter().copied().max().unwrap_or(0)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{BLOCK, Lattice};
    use std::arch::x86_64::*;

    /// [`super::keys_blocks`] on AVX2: one `vpmaddwd` gives a block's eight two-term dots.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn keys_blocks_avx2(l: &Lattice, words: &[u32], ni: u32, keys: &mut [u32]) -> u32 {
        let step = l.pairs * 2 * BLOCK;
        let full = l.n / BLOCK;
        let base = _mm256_set1_epi32(ni as i32);
        let mut top = _mm256_setzero_si256();
        for b in 0..l.n.div_ceil(BLOCK) {
            let block = &l.packed[b * step..(b + 1) * step];
            let (mut a0, mut a1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            // Two accumulators: two independent chains of adds.
            let mut p = 0;
            while p + 2 <= words.len() {
                // SAFETY: each load reads 16 i16 of `block`, inside it (p + 1 < pairs).
                let (v0, v1) = unsafe {
                    (
                        _mm256_loadu_si256(block[p * 16..].as_ptr().cast()),
                        _mm256_loadu_si256(block[(p + 1) * 16..].as_ptr().cast()),
                    )
                };
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(v0, _mm256_set1_epi32(words[p] as i32)));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(v1, _mm256_set1_epi32(words[p + 1] as i32)));
                p += 2;
            }
            if p < words.len() {
                // SAFETY: as above, for the last pair.
                let v0 = unsafe { _mm256_loadu_si256(block[p * 16..].as_ptr().cast()) };
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(v0, _mm256_set1_epi32(words[p] as i32)));
            }
            let dot = _mm256_add_epi32(a0, a1);
            // SAFETY: `norms` is padded to whole blocks.
            let nrm = unsafe { _mm256_loadu_si256(l.norms[b * BLOCK..].as_ptr().cast()) };
            let s = _mm256_sub_epi32(_mm256_add_epi32(base, nrm), _mm256_slli_epi32(dot, 1));
            if b < full {
                top = _mm256_max_epu32(top, s);
                // SAFETY: keys[8b .. 8b + 8] is inside `keys` for a full block.
                unsafe { _mm256_storeu_si256(keys[b * BLOCK..].as_mut_ptr().cast(), s) };
            } else {
                let mut tmp = [0u32; BLOCK];
                // SAFETY: `tmp` holds 8 u32.
                unsafe { _mm256_storeu_si256(tmp.as_mut_ptr().cast(), s) };
                let last = &tmp[..l.n - b * BLOCK];
                keys[b * BLOCK..].copy_from_slice(last);
                top = _mm256_max_epu32(top, _mm256_set1_epi32(last.iter().copied().max().unwrap_or(0) as i32));
            }
        }
        let mut lanes = [0u32; BLOCK];
        // SAFETY: `lanes` holds 8 u32.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), top) };
        lanes.into_iter().max().unwrap_or(0)
    }
}

/// The rows that the co-ranking pass over `rows` rows ranks by integer keys: `rows` for each of
/// the two spaces that is an integer lattice (the run report's `rows_integer_keys`).
pub(crate) fn lattice_rows(high: &Points, low: &Points, rows: usize) -> u64 {
    (u64::from(Lattice::premises(high).is_some()) + u64::from(Lattice::premises(low).is_some())) * rows as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;
    use crate::reference::distance_row;

    fn points(n: usize, d: usize, f: impl Fn(usize, usize) -> f64) -> Points {
        Points::from_vec("p", n, d, (0..n * d).map(|t| f(t / d, t % d)).collect()).unwrap()
    }

    /// Every key is the exact squared distance, and its root the reference's distance bits, in
    /// every version this machine runs, at the premises' extremes.
    #[test]
    fn keys_are_the_exact_squared_distances() {
        let mut rng = crate::splitmix::SplitMix64(7);
        let mut cases = vec![
            points(37, 50, |i, c| ((i * 31 + c * 7) % 8) as f64),
            points(19, 3, |i, c| ((i * 13 + c) % 5) as f64 - 2.0),
            points(9, 1, |i, _| (i % 3) as f64 * 1e4 + 1e9),
        ];
        // Ranges at i16::MAX in two columns (S_max = 2 · 32767² ≤ i32::MAX), offset by −2^31.
        let ext: Vec<f64> = (0..40 * 2).map(|_| (rng.next_u64() % 32768) as f64 - 2_147_483_648.0).collect();
        let mut e = ext.clone();
        e[0] = -2_147_483_648.0;
        e[1] = -2_147_483_648.0 + 32767.0;
        e[2] = -2_147_483_648.0 + 32767.0;
        e[3] = -2_147_483_648.0;
        cases.push(Points::from_vec("e", 40, 2, e).unwrap());
        for p in &cases {
            let l = Lattice::of(p).expect("a lattice");
            let n = p.n();
            let (mut words, mut keys, mut d) = (Vec::new(), vec![0u32; n], vec![0.0; n]);
            let mut portable = vec![0u32; n];
            for i in 0..n {
                let top = l.keys_row(i, &mut words, &mut keys);
                assert_eq!(keys_blocks_portable(&l, &words, l.norms[i], &mut portable), top, "row {i}");
                assert_eq!(keys, portable, "row {i}");
                assert_eq!(top, keys.iter().copied().max().unwrap(), "row {i}");
                distance_row(p, i, &mut d);
                for j in 0..n {
                    let exact: i64 = p.row(i).iter().zip(p.row(j)).map(|(a, b)| (*a as i64 - *b as i64).pow(2)).sum();
                    assert_eq!(i64::from(keys[j]), exact, "({i}, {j})");
                    assert!(keys[j] <= l.max_key());
                    assert_eq!(l.distance(keys[j]).to_bits(), d[j].to_bits(), "({i}, {j})");
                }
            }
        }
    }

    /// Each premise refuses the lattice when it fails.
    #[test]
    fn a_lattice_only_where_the_premises_hold() {
        let ok = |v: Vec<f64>, d: usize| Lattice::of(&Points::from_vec("p", v.len() / d, d, v).unwrap()).is_some();
        assert!(ok(vec![0.0, 1.0, 2.0, 3.0], 2));
        assert!(!ok(vec![0.0, 1.5, 2.0, 3.0], 2), "a fraction");
        assert!(!ok(vec![0.0, 32768.0], 1), "a range beyond i16");
        assert!(ok(vec![0.0, 32767.0], 1));
        assert!(!ok(vec![0.0, 4_294_967_296.0], 1), "beyond 2^31");
        // Three columns of range 32767: Σ R² > i32::MAX.
        assert!(!ok(vec![0.0, 0.0, 0.0, 32767.0, 32767.0, 32767.0], 3));
        let p = points(4, 2, |i, c| (i + c) as f64);
        assert!(Lattice::of(&p.clone().with_metric(Metric::Cosine).unwrap()).is_none(), "cosine");
    }
}
