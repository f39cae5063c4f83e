//! Certified f32 rows of a Euclidean or sqeuclidean space on the CPU: the GPU's certified
//! squared distances (docs/exactness.md, "The GPU path: certify, then refine"), evaluated by
//! the CPU's vector units.
//!
//! The space is prepared exactly as for the GPU (`certify::prepare::prepare_checked`: centred in
//! f64, scaled by a power of two, rounded to f32, row norms bounded from above; its domain
//! checks are the premises of the bound), each pair's `s̃ = Σ_c (y_jc − y_ic)²` is summed in f32
//! (register tiles, FMA where the CPU has it), and `U = fl(s̃ + ε)`, `L = fl(s̃ − ε)` with
//! `ε = Params::eps_of(s̃, N_i, N_j)` bracket the reference's own sum `s_ref` scaled
//! (`L ≤ s_ref ≤ U`). The proof's premises about the arithmetic are the device's: every f32
//! operation may round either way (round to nearest is one of the two), sums in any order, fused
//! or not, subnormals flushed or not; and ε is evaluated by the same operations in the same order
//! as the device's `eps_of` (the proof's evaluation lemma allows √ within 2.5 ulp; the CPU's is
//! correctly rounded). So exactly the GPU's comparisons are decided: `U_l < L_j` proves l before
//! j, `L_l > U_j` proves l after j, anything else (NaN included) is compared with the
//! reference's keys (`reference::distance_pairs`). The kNN lists, ranks and distances are the
//! exact rows', bit for bit.

use std::ops::Range;

use multiversion::multiversion;

use super::{KC, Line, MR, NB, PairScratch, Refined, TileVersions, floats_mut, tile_rows};
use crate::certify::bound::Params;
use crate::certify::prepare::prepare_checked;
use crate::data::Points;
use crate::reference::{distance_pairs, key};

/// Below this dimension the exact rows cost about as much as the f32 rows and their bounds.
pub const MIN_DIM: usize = 8;
/// Most cross-rank queries per row this path serves (each pending query scans U and L).
pub const MAX_QUERIES: usize = 32;

/// The bound's constants and the rows' norm bounds.
pub struct Squared {
    params: Params,
    /// `N_j ≥ ‖y_j‖₂` (f32, rounded up: `certify::prepare`).
    norms: Vec<f32>,
}

impl Squared {
    pub fn bytes(&self) -> usize {
        self.norms.len() * 4
    }
}

/// Whether `auto` takes the f32 rows for D and `queries` cross ranks per row.
pub fn worth_it(d: usize, queries: usize) -> Result<(), String> {
    if d < MIN_DIM {
        return Err(format!("D = {d}: exact rows cost about as much below D = {MIN_DIM}"));
    }
    if queries > MAX_QUERIES {
        return Err(format!("{queries} cross ranks per row: the exact rows' count is faster above {MAX_QUERIES}"));
    }
    Ok(())
}

/// The packed f32 rows and the bound of a Euclidean or sqeuclidean space, or why not (outside
/// the certified domain of docs/exactness.md: the GPU's own checks).
pub fn plan(high: &Points) -> Result<(Vec<Line>, Squared), String> {
    let prep = prepare_checked(high).map_err(|e| format!("outside the certified domain: {e}"))?;
    let params = Params::checked_with_extra(prep.n, prep.dim, prep.abs_extra).map_err(|e| e.to_string())?;
    let (n, d) = (prep.n, prep.dim);
    let mut lines = vec![Line([0.0; 16]); n.div_ceil(NB) * d * NB / 16];
    let packed = floats_mut(&mut lines);
    for (j, row) in prep.pts.chunks_exact(d).enumerate() {
        let (b, t) = (j / NB, j % NB);
        for (c, &y) in row.iter().enumerate() {
            packed[(b * d + c) * NB + t] = y;
        }
    }
    Ok((lines, Squared { params, norms: prep.norms }))
}

/// Row r of `out` (2n floats) is `U(i, ·)` then `L(i, ·)` for i = rows.start + r (j = i
/// included; the pass then excludes it).
pub fn rows(sq: &Squared, packed: &[f32], n: usize, d: usize, rows: Range<usize>, out: &mut [f32]) {
    let row0 = rows.start;
    tile_rows(packed, n, d, rows, chunk_squares, |r, j0, sums| {
        let (u, l) = out[r * 2 * n..(r + 1) * 2 * n].split_at_mut(n);
        let w = sums.len();
        bounds(&sq.params, sums, sq.norms[row0 + r], &sq.norms[j0..j0 + w], &mut u[j0..j0 + w], &mut l[j0..j0 + w]);
    });
}

/// `U = s̃ + ε`, `L = s̃ − ε` for one row against a block of points (vectorised: the same
/// operations as `eps_of`, lane by lane).
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2+fma", "aarch64+neon"))]
fn bounds(p: &Params, s: &[f32], ni: f32, nj: &[f32], u: &mut [f32], l: &mut [f32]) {
    for (((&s, &nj), u), l) in s.iter().zip(nj).zip(u.iter_mut()).zip(l.iter_mut()) {
        let e = p.eps_squared(s, ni, nj);
        *u = s + e;
        *l = s - e;
    }
}

/// One chunk of one tile: `total[r][t] += Σ_c (chunk[c][t] − panel[c][r])²`, continuing the
/// sums in registers (the bound holds for any order and for fused products).
fn chunk_squares(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    assert!(chunk.len().is_multiple_of(NB) && panel.len() == chunk.len() / NB * MR && chunk.len() <= KC * NB);
    // SAFETY: the lengths are whole chunks and their panels (checked above).
    unsafe { SQUARES.run(chunk, panel, total) }
}

/// [`chunk_squares`]'s versions.
const SQUARES: TileVersions = TileVersions {
    portable: chunk_squares_portable,
    #[cfg(target_arch = "x86_64")]
    avx2: super::chunk_avx2::<true>,
    #[cfg(target_arch = "x86_64")]
    avx512: super::chunk_avx512::<true>,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd128: super::chunk_simd128::<true>,
};

/// [`chunk_squares`] for any target (FMA where it has one).
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
fn chunk_squares_portable(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    let fma = multiversion::target::target_cfg_f!(any(target_feature = "fma", target_feature = "neon"));
    let mut acc = *total;
    for (bv, av) in chunk.chunks_exact(NB).zip(panel.chunks_exact(MR)) {
        for (row, &a) in acc.iter_mut().zip(av) {
            for (x, &b) in row.iter_mut().zip(bv) {
                let t = b - a;
                *x = if fma { t.mul_add(t, *x) } else { t * t + *x };
            }
        }
    }
    *total = acc;
}

/// The kNN candidates of i from its row (U then L, i excluded with U = L = +∞): τ the k-th
/// smallest U (k points have `s_ref ≤ U ≤ τ`, so every point of the exact list has
/// `s_ref ≤ τ` — the ε's relative margin covers the index order of equal rounded distances,
/// docs/exactness.md "kNN") and every j whose `L_j > τ` is not proven (NaN included).
pub fn candidates(g: &[f32], i: usize, k: usize, buf: &mut Vec<f32>, js: &mut Vec<u32>) {
    let n = g.len() / 2;
    let (u, l) = g.split_at(n);
    let tau = kth_smallest(u, k, buf);
    scan(l, Test::NotAbove(tau), |j| {
        if j != i {
            js.push(j as u32);
        }
    });
}

/// The k-th smallest of the values below +∞ (NaN never counts), or +∞ when fewer than k are:
/// one pass keeping the values below the current k-th of a buffer compacted when 4k wait.
fn kth_smallest(u: &[f32], k: usize, buf: &mut Vec<f32>) -> f32 {
    buf.clear();
    let asc = |a: &f32, b: &f32| a.total_cmp(b);
    let mut worst = f32::INFINITY;
    let limit = 4 * k.max(16);
    // Segments of 512: the threshold tightens between them.
    for seg in u.chunks(512) {
        scan(seg, Test::Below(worst), |j| buf.push(seg[j]));
        if buf.len() >= limit {
            buf.select_nth_unstable_by(k - 1, asc);
            buf.truncate(k);
            worst = buf[k - 1];
        }
    }
    if buf.len() < k {
        return f32::INFINITY;
    }
    buf.select_nth_unstable_by(k - 1, asc);
    buf[k - 1]
}

/// For each query j (distinct, none equal to i) at exact distance `dq[s]`, its rank
/// `1 + #{l ≠ i : (d_l, l) < (d_j, j)}`: l with `U_l < L_j` is certainly nearer, with
/// `L_l > U_j` certainly farther (i itself: U = L = +∞); every other l but j is compared with the
/// reference's keys.
pub fn count_ranks(
    high: &Points,
    g: &[f32],
    i: usize,
    queries: &[u32],
    dq: &[f64],
    sc: &mut PairScratch,
    out: &mut [u32],
) -> Refined {
    let n = g.len() / 2;
    let (u, l) = g.split_at(n);
    ranks_in_brackets(high, u, l, i, queries, dq, |j, _| (l[j], u[j]), sc, out)
}

/// The rank counting of [`count_ranks`] for any row of brackets `[l_m, u_m]` (smaller is
/// nearer; i's own bracket must leave it after every query, e.g. `+∞`): query s's own bracket
/// `(L_s, U_s) = bracket(j, dq[s])`; m with `u_m < L_s` is certainly nearer, with `l_m > U_s`
/// certainly farther, every other m but j and i (NaN included) is compared with the reference's
/// keys. Shared with the cosine rows (their negated dot products, `CertifiedRows::count_ranks`).
#[allow(clippy::too_many_arguments)]
pub(super) fn ranks_in_brackets(
    high: &Points,
    u: &[f32],
    l: &[f32],
    i: usize,
    queries: &[u32],
    dq: &[f64],
    bracket: impl Fn(usize, f64) -> (f32, f32),
    sc: &mut PairScratch,
    out: &mut [u32],
) -> Refined {
    let mut pairs = 0;
    // Q queries per pass over the row (the row streams from memory once for all of them).
    for ((outs, qs), ds) in out.chunks_mut(Q).zip(queries.chunks(Q)).zip(dq.chunks(Q)) {
        // Padding: L = U = −∞ leaves nothing before and everything after (the calls of a padded
        // slot are ignored).
        let (mut lq, mut uq) = ([f32::NEG_INFINITY; Q], [f32::NEG_INFINITY; Q]);
        for (s, (&j, &d)) in qs.iter().zip(ds).enumerate() {
            (lq[s], uq[s]) = bracket(j as usize, d);
        }
        sc.open.iter_mut().for_each(Vec::clear);
        // One pass: the certain counts, and every undecided m but j and i listed.
        let before = count_before(u, l, lq, uq, |s, m| {
            if s < qs.len() && m != qs[s] as usize && m != i {
                sc.open[s].push(m as u32);
            }
        });
        for (s, ((o, &j), &d)) in outs.iter_mut().zip(qs).zip(ds).enumerate() {
            let mut nearer = before[s];
            let js = &sc.open[s];
            if !js.is_empty() {
                let kj = key(d, j as usize);
                sc.ds.resize(js.len(), 0.0);
                distance_pairs(high, i, js, &mut sc.ds);
                pairs += js.len() as u64;
                nearer += js.iter().zip(&sc.ds).filter(|&(&m, &dm)| key(dm, m as usize) < kj).count() as u32;
            }
            *o = nearer + 1;
        }
    }
    Refined { pairs }
}

/// Queries per pass of [`count_before`].
pub(super) const Q: usize = 4;

/// Which positions [`scan`] reports.
#[derive(Clone, Copy)]
enum Test {
    /// `x < t` (false on NaN).
    Below(f32),
    /// `!(x > t)` (true on NaN: not proven after).
    NotAbove(f32),
}

impl Test {
    fn holds(self, x: f32) -> bool {
        match self {
            Test::Below(t) => x < t,
            Test::NotAbove(t) => !(x > t),
        }
    }
}

/// Calls `f(j)`, in order, for every j where `test` holds of `x[j]`: a vector of lanes
/// compared at once and only the set bits of the mask visited (almost every block has none).
/// The widest version the CPU runs.
fn scan(x: &[f32], test: Test, f: impl FnMut(usize)) {
    scan_in(Lanes::best(), x, test, f)
}

/// [`scan`] in the version `lanes` (one of [`Lanes::available`]).
fn scan_in(lanes: Lanes, x: &[f32], test: Test, mut f: impl FnMut(usize)) {
    let at = match lanes {
        Lanes::Scalar => 0,
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 => {
            assert!(std::arch::is_x86_feature_detected!("avx"), "scan: this CPU has no AVX");
            let at = x.len() / 8 * 8;
            // SAFETY: AVX was detected (asserted above); at ≤ x.len().
            unsafe { scan_avx(&x[..at], test, &mut f) };
            at
        }
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx512 => {
            assert!(std::arch::is_x86_feature_detected!("avx512f"), "scan: this CPU has no AVX-512");
            let at = x.len() / 16 * 16;
            // SAFETY: AVX-512F was detected (asserted above); at ≤ x.len().
            unsafe { scan_avx512(&x[..at], test, &mut f) };
            at
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Lanes::Simd128 => {
            let at = x.len() / 4 * 4;
            scan_simd128(&x[..at], test, &mut f);
            at
        }
    };
    for j in at..x.len() {
        if test.holds(x[j]) {
            f(j);
        }
    }
}

/// [`scan`] over whole blocks of 4 with wasm SIMD compares (`f32x4.lt` false on NaN; the
/// complement of `f32x4.gt`, true on NaN: [`Test::holds`]).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn scan_simd128<F: FnMut(usize)>(x: &[f32], test: Test, f: &mut F) {
    use core::arch::wasm32::*;
    let mut visit = |b: usize, m: v128| for_each_bit(b, u32::from(i32x4_bitmask(m)), f);
    let load = |b: usize| {
        assert!(b + 4 <= x.len());
        // SAFETY: b + 4 ≤ x.len() (asserted); v128_load reads 16 unaligned bytes.
        unsafe { v128_load(x.as_ptr().add(b).cast()) }
    };
    match test {
        Test::Below(t) => {
            let t = f32x4_splat(t);
            for b in (0..x.len()).step_by(4) {
                visit(b, f32x4_lt(load(b), t));
            }
        }
        Test::NotAbove(t) => {
            let t = f32x4_splat(t);
            for b in (0..x.len()).step_by(4) {
                visit(b, v128_not(f32x4_gt(load(b), t)));
            }
        }
    }
}

/// `f(b + t)` for each set bit t of a block's mask `m`, in order.
#[inline(always)]
fn for_each_bit(b: usize, mut m: u32, f: &mut impl FnMut(usize)) {
    while m != 0 {
        f(b + m.trailing_zeros() as usize);
        m &= m - 1;
    }
}

/// [`count_before`]'s second look at a group of points one by one: `open(q, t)` for each t in
/// `group` neither certainly before query q (`U_t < L_q`) nor certainly after it (`L_t > U_q`),
/// NaN included, in order.
#[inline]
fn revisit(u: &[f32], l: &[f32], group: Range<usize>, q: usize, lq: f32, uq: f32, open: &mut impl FnMut(usize, usize)) {
    for t in group {
        if !(u[t] < lq) && !(l[t] > uq) {
            open(q, t);
        }
    }
}

/// [`count_before`] over whole blocks of 4 with wasm SIMD, as [`count_before_avx2`]: ordered
/// compares (false on NaN), the all-ones masks subtracted from lane counters, and each query's
/// undecided lanes OR-ed over 64 points; the groups of 64 with any are looked at again one by
/// one.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn count_before_simd128<F: FnMut(usize, usize)>(
    u: &[f32],
    l: &[f32],
    lq: [f32; Q],
    uq: [f32; Q],
    open: &mut F,
) -> [u32; Q] {
    use core::arch::wasm32::*;
    assert_eq!(u.len() % 4, 0);
    assert_eq!(u.len(), l.len());
    let (vl, vu) = (lq.map(|x| f32x4_splat(x)), uq.map(|x| f32x4_splat(x)));
    let mut before = [i32x4_splat(0); Q];
    for group in (0..u.len()).step_by(64) {
        let end = (group + 64).min(u.len());
        let mut undecided = [i32x4_splat(0); Q];
        for at in (group..end).step_by(4) {
            // SAFETY: at + 4 ≤ u.len() = l.len() (whole blocks, asserted above).
            let (x, y) = unsafe { (v128_load(u.as_ptr().add(at).cast()), v128_load(l.as_ptr().add(at).cast())) };
            for q in 0..Q {
                let (b, a) = (f32x4_lt(x, vl[q]), f32x4_gt(y, vu[q]));
                before[q] = i32x4_sub(before[q], b);
                undecided[q] = v128_or(undecided[q], v128_not(v128_or(b, a)));
            }
        }
        for q in 0..Q {
            if v128_any_true(undecided[q]) {
                revisit(u, l, group..end, q, lq[q], uq[q], open);
            }
        }
    }
    before.map(|v| {
        u32x4_extract_lane::<0>(v)
            + u32x4_extract_lane::<1>(v)
            + u32x4_extract_lane::<2>(v)
            + u32x4_extract_lane::<3>(v)
    })
}

/// [`scan`] over whole blocks of 16 with AVX-512 compares into masks (the predicates of
/// [`scan_avx`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scan_avx512<F: FnMut(usize)>(x: &[f32], test: Test, f: &mut F) {
    use std::arch::x86_64::*;
    let mut visit = |b: usize, m: __mmask16| for_each_bit(b, u32::from(m), f);
    let px = x.as_ptr();
    // SAFETY (every load): b + 16 ≤ x.len() (the caller passes whole blocks).
    match test {
        Test::Below(t) => {
            let t = _mm512_set1_ps(t);
            for b in (0..x.len()).step_by(16) {
                visit(b, _mm512_cmp_ps_mask::<_CMP_LT_OQ>(unsafe { _mm512_loadu_ps(px.add(b)) }, t));
            }
        }
        Test::NotAbove(t) => {
            let t = _mm512_set1_ps(t);
            for b in (0..x.len()).step_by(16) {
                visit(b, _mm512_cmp_ps_mask::<_CMP_NGT_UQ>(unsafe { _mm512_loadu_ps(px.add(b)) }, t));
            }
        }
    }
}

/// [`scan`] over whole blocks of 8 with AVX compares (`_OQ` false on NaN, `_UQ` true on NaN,
/// matching [`Test::holds`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn scan_avx<F: FnMut(usize)>(x: &[f32], test: Test, f: &mut F) {
    use std::arch::x86_64::*;
    let mut visit = |b: usize, m: __m256| for_each_bit(b, _mm256_movemask_ps(m) as u32, f);
    let px = x.as_ptr();
    // SAFETY (every load): b + 8 ≤ x.len() (the caller passes whole blocks).
    match test {
        Test::Below(t) => {
            let t = _mm256_set1_ps(t);
            for b in (0..x.len()).step_by(8) {
                visit(b, _mm256_cmp_ps::<_CMP_LT_OQ>(unsafe { _mm256_loadu_ps(px.add(b)) }, t));
            }
        }
        Test::NotAbove(t) => {
            let t = _mm256_set1_ps(t);
            for b in (0..x.len()).step_by(8) {
                visit(b, _mm256_cmp_ps::<_CMP_NGT_UQ>(unsafe { _mm256_loadu_ps(px.add(b)) }, t));
            }
        }
    }
}

/// For Q queries at once, `#{l : U_l < L_q}` (false on NaN), calling `open(q, l)` for every l
/// that is neither certainly before (`U_l < L_q`) nor certainly after (`L_l > U_q`) — NaN
/// included —, in order of l for each q. The widest version the CPU runs.
fn count_before(u: &[f32], l: &[f32], lq: [f32; Q], uq: [f32; Q], open: impl FnMut(usize, usize)) -> [u32; Q] {
    count_before_in(Lanes::best(), u, l, lq, uq, open)
}

/// The versions of [`count_before`]: the same counts and calls, in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lanes {
    /// Lane by lane (the reference of the tests; the wasm build never picks it).
    #[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// wasm's 128-bit SIMD (a build-time feature: the wasm build always has it).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Lanes {
    /// Every version this CPU runs, the scalar one first.
    #[cfg(test)]
    fn available() -> Vec<Lanes> {
        #[allow(unused_mut)]
        let mut v = vec![Lanes::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Lanes::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                v.push(Lanes::Avx512);
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        v.push(Lanes::Simd128);
        v
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    fn best() -> Lanes {
        Lanes::Simd128
    }

    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    fn best() -> Lanes {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Lanes::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Lanes::Avx2;
            }
        }
        Lanes::Scalar
    }
}

/// [`count_before`] in the version `lanes` (it must be one of [`Lanes::available`]): whole
/// blocks in vector lanes, the rest one by one.
fn count_before_in(
    lanes: Lanes,
    u: &[f32],
    l: &[f32],
    lq: [f32; Q],
    uq: [f32; Q],
    mut open: impl FnMut(usize, usize),
) -> [u32; Q] {
    assert_eq!(u.len(), l.len());
    let (mut at, mut before) = (0, [0u32; Q]);
    match lanes {
        Lanes::Scalar => {}
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 => {
            assert!(std::arch::is_x86_feature_detected!("avx2"), "count_before: this CPU has no AVX2");
            at = u.len() / 8 * 8;
            // SAFETY: AVX2 was detected (asserted above); at ≤ u.len() = l.len().
            before = unsafe { count_before_avx2(&u[..at], &l[..at], lq, uq, &mut open) };
        }
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx512 => {
            assert!(std::arch::is_x86_feature_detected!("avx512f"), "count_before: this CPU has no AVX-512");
            at = u.len() / 16 * 16;
            // SAFETY: AVX-512F was detected (asserted above); at ≤ u.len() = l.len().
            before = unsafe { count_before_avx512(&u[..at], &l[..at], lq, uq, &mut open) };
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Lanes::Simd128 => {
            at = u.len() / 4 * 4;
            before = count_before_simd128(&u[..at], &l[..at], lq, uq, &mut open);
        }
    }
    for q in 0..Q {
        for t in at..u.len() {
            let (b, a) = (u[t] < lq[q], l[t] > uq[q]);
            before[q] += u32::from(b);
            if !b && !a {
                open(q, t);
            }
        }
    }
    before
}

/// [`count_before`] over whole blocks of 16 with AVX-512: each query's lane counters add 1
/// under the mask of points not before it (`!(U < L_q)`, true on NaN; before = points − those),
/// and a compare under that mask gives the undecided lanes (`!(L > U_q)` too), OR-ed over 64
/// points; the few groups of 64 with any are looked at again one by one, as in
/// [`count_before_avx2`]. Two compares, one add and one OR per query and 16 points.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn count_before_avx512<F: FnMut(usize, usize)>(
    u: &[f32],
    l: &[f32],
    lq: [f32; Q],
    uq: [f32; Q],
    open: &mut F,
) -> [u32; Q] {
    use std::arch::x86_64::*;
    let (vl, vu) = (lq.map(|x| _mm512_set1_ps(x)), uq.map(|x| _mm512_set1_ps(x)));
    let one = _mm512_set1_epi32(1);
    let mut not_before = [_mm512_setzero_si512(); Q];
    let (pu, pl) = (u.as_ptr(), l.as_ptr());
    for group in (0..u.len()).step_by(64) {
        let end = (group + 64).min(u.len());
        let mut undecided: [__mmask16; Q] = [0; Q];
        for at in (group..end).step_by(16) {
            // SAFETY: at + 16 ≤ u.len() = l.len() (whole blocks).
            let (x, y) = unsafe { (_mm512_loadu_ps(pu.add(at)), _mm512_loadu_ps(pl.add(at))) };
            for q in 0..Q {
                // Not before: !(U < L_q), true on NaN; counted, and before = points − these.
                let nb = _mm512_cmp_ps_mask::<_CMP_NLT_UQ>(x, vl[q]);
                not_before[q] = _mm512_mask_add_epi32(not_before[q], nb, not_before[q], one);
                // Where not before: not after either, !(L > U_q) (true on NaN), in one masked compare.
                undecided[q] |= _mm512_mask_cmp_ps_mask::<_CMP_NGT_UQ>(nb, y, vu[q]);
            }
        }
        for q in 0..Q {
            if undecided[q] != 0 {
                revisit(u, l, group..end, q, lq[q], uq[q], open);
            }
        }
    }
    not_before.map(|v| {
        let mut t = [0u32; 16];
        // SAFETY: t holds 16 u32.
        unsafe { _mm512_storeu_si512(t.as_mut_ptr().cast(), v) };
        (u.len() as u64 - t.iter().map(|&c| u64::from(c)).sum::<u64>()) as u32
    })
}

/// [`count_before`] over whole blocks of 8 with AVX2: ordered compares (false on NaN), the
/// all-ones masks subtracted from lane counters, and each query's undecided lanes (the
/// complement of both masks) OR-ed over 64 points; the few groups of 64 with any (the query's
/// own, and near-ties) are looked at again one by one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_before_avx2<F: FnMut(usize, usize)>(
    u: &[f32],
    l: &[f32],
    lq: [f32; Q],
    uq: [f32; Q],
    open: &mut F,
) -> [u32; Q] {
    use std::arch::x86_64::*;
    let (vl, vu) = (lq.map(|x| _mm256_set1_ps(x)), uq.map(|x| _mm256_set1_ps(x)));
    let ones = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    let mut before = [_mm256_setzero_si256(); Q];
    let (pu, pl) = (u.as_ptr(), l.as_ptr());
    for group in (0..u.len()).step_by(64) {
        let end = (group + 64).min(u.len());
        let mut undecided = [_mm256_setzero_ps(); Q];
        for at in (group..end).step_by(8) {
            // SAFETY: at + 8 ≤ u.len() = l.len() (whole blocks).
            let (x, y) = unsafe { (_mm256_loadu_ps(pu.add(at)), _mm256_loadu_ps(pl.add(at))) };
            for q in 0..Q {
                let (b, a) = (_mm256_cmp_ps::<_CMP_LT_OQ>(x, vl[q]), _mm256_cmp_ps::<_CMP_GT_OQ>(y, vu[q]));
                before[q] = _mm256_sub_epi32(before[q], _mm256_castps_si256(b));
                undecided[q] = _mm256_or_ps(undecided[q], _mm256_andnot_ps(_mm256_or_ps(b, a), ones));
            }
        }
        for q in 0..Q {
            if _mm256_movemask_ps(undecided[q]) != 0 {
                revisit(u, l, group..end, q, lq[q], uq[q], open);
            }
        }
    }
    before.map(|v| {
        let mut t = [0u32; 8];
        // SAFETY: t holds 8 u32.
        unsafe { _mm256_storeu_si256(t.as_mut_ptr().cast(), v) };
        t.iter().sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;
    use crate::splitmix::SplitMix64;

    /// The dispatched squared tile and each vector version the CPU has give the portable
    /// version's bits, continuing a running total.
    #[test]
    fn vectorised_chunk_squares_are_the_portable_bits() {
        super::super::assert_tile_versions_agree(chunk_squares, &SQUARES, 13, -2.0, 2.0);
    }

    /// Every pair's `[L, U]` holds the reference's own scaled sum (the bound's claim, checked on
    /// the CPU's f32 rows over spreads, duplicates and ties), and the tiles are the f32 sums.
    #[test]
    fn every_pair_lies_in_its_bracket() {
        let mut rng = SplitMix64(9);
        for (n, d, scale) in [(70usize, 9usize, 1.0f64), (45, 33, 1e-30), (33, 64, 1e40), (100, 3, 1.0)] {
            let mut v: Vec<f64> = (0..n * d).map(|t| if t % 7 == 0 { 3.0 } else { rng.normal() * scale }).collect();
            v.copy_within(0..d, d); // a duplicate
            for metric in [Metric::Euclidean, Metric::SqEuclidean] {
                let p = Points::from_vec("p", n, d, v.clone()).unwrap().with_metric(metric).unwrap();
                let prep = prepare_checked(&p).unwrap();
                let (lines, sq) = plan(&p).unwrap();
                let packed = super::super::floats(&lines);
                let mut out = vec![0.0f32; n * 2 * n];
                rows(&sq, packed, n, d, 0..n, &mut out);
                for i in 0..n {
                    for j in 0..n {
                        let (u, l) = (out[i * 2 * n + j], out[i * 2 * n + n + j]);
                        // The reference's sum before its root, in its order, scaled (exactly).
                        let (xi, xj) = (p.row(i), p.row(j));
                        let sigma = (1..d)
                            .fold((xi[0] - xj[0]) * (xi[0] - xj[0]), |a, c| a + (xi[c] - xj[c]) * (xi[c] - xj[c]));
                        let s_ref = sigma * prep.scale * prep.scale;
                        assert!(
                            f64::from(l) <= s_ref && s_ref <= f64::from(u),
                            "{metric} i={i} j={j}: {l} {s_ref} {u}"
                        );
                    }
                }
            }
        }
    }

    /// Every version's counts are the plain counts (NaN never before), and the undecided
    /// positions are listed in order for each query, at any length (whole blocks of 8 and 16,
    /// groups of 64, and the tails).
    #[test]
    fn before_counts_are_plain_counts() {
        let mut rng = SplitMix64(4);
        for n in [0usize, 5, 16, 17, 63, 64, 65, 100, 130, 1001] {
            let mut u: Vec<f32> = (0..n).map(|_| (rng.uniform() * 10.0).floor() as f32).collect();
            let l: Vec<f32> = u.iter().map(|&x| x - (rng.uniform() * 3.0).floor() as f32).collect();
            if n > 3 {
                u[3] = f32::NAN;
                u[1] = f32::INFINITY;
            }
            let (lq, uq) = ([4.0f32, 0.0, f32::NAN, -1.0], [6.0f32, 0.0, 3.0, f32::INFINITY]);
            for lanes in Lanes::available() {
                let mut got = vec![Vec::new(); Q];
                let before = count_before_in(lanes, &u, &l, lq, uq, |q, t| got[q].push(t));
                for q in 0..Q {
                    assert_eq!(before[q], u.iter().filter(|&&x| x < lq[q]).count() as u32, "{lanes:?} n={n} q={q}");
                    let open: Vec<usize> = (0..n).filter(|&t| !(u[t] < lq[q]) && !(l[t] > uq[q])).collect();
                    assert_eq!(got[q], open, "{lanes:?} n={n} q={q}");
                }
            }
        }
    }

    /// The vectorised scans report exactly the positions the scalar tests hold at, NaN included.
    #[test]
    fn scans_are_the_scalar_tests() {
        let mut rng = SplitMix64(6);
        for n in [0usize, 7, 8, 9, 15, 16, 17, 64, 333] {
            let mut x: Vec<f32> = (0..n).map(|_| (rng.uniform() * 6.0).floor() as f32).collect();
            if n > 5 {
                x[5] = f32::NAN;
                x[2] = f32::INFINITY;
            }
            for test in [Test::Below(3.0), Test::NotAbove(2.0), Test::NotAbove(f32::NAN), Test::Below(f32::NAN)] {
                let want: Vec<usize> = (0..n).filter(|&j| test.holds(x[j])).collect();
                for lanes in Lanes::available() {
                    let mut got = Vec::new();
                    scan_in(lanes, &x, test, |j| got.push(j));
                    assert_eq!(got, want, "{lanes:?} n={n}");
                }
            }
        }
    }

    #[test]
    fn kth_smallest_is_a_sort() {
        let mut rng = SplitMix64(3);
        let mut buf = Vec::new();
        for n in [3usize, 17, 100, 1000] {
            let mut g: Vec<f32> = (0..n).map(|_| (rng.uniform() * 8.0).floor() as f32).collect();
            g[n / 2] = f32::INFINITY;
            g[0] = f32::NAN;
            let mut sorted: Vec<f32> = g.iter().copied().filter(|x| x.is_finite()).collect();
            sorted.sort_by(f32::total_cmp);
            for k in [1, (n - 2) / 2, n - 2].into_iter().filter(|&k| k >= 1) {
                assert_eq!(kth_smallest(&g, k, &mut buf), sorted[k - 1], "n={n} k={k}");
            }
            assert_eq!(kth_smallest(&g, n - 1, &mut buf), f32::INFINITY, "n={n}: fewer than k finite");
        }
    }
}
