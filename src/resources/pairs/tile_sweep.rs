//! [`tile_sweep`]: the full-row sweep's Sammon, CCA and average-local-error sums with each pair
//! measured once for both of its rows, where the full-row sweep measures it in each row.
//!
//! A row's sum is NumPy's pairwise sum over the whole row, a tree whose leaves are the same
//! runs of j for every row (`leaf_schedule`). The pairs are taken in tiles of one leaf of rows
//! by one leaf of points, A ≤ B: the tile's distances (both spaces' bits: d(i, j) = d(j, i), a
//! difference and its negation square alike) and terms are computed once, and each term goes to
//! its row's leaf sum (row a, leaf B) and, off the diagonal, to its column's (row b, leaf A),
//! each added in NumPy's leaf order: eight lanes by position in the leaf, their tree, then the
//! last n mod 8 terms in sequence. Each row receives its leaf sums in leaf order (tiles are
//! delivered by A, then B) and combines them by the schedule on a small stack, so every row sum
//! is the full-row sweep's bits, for any thread count (tested against it).
//!
//! Served when both spaces are Euclidean coordinates, the sweep covers every row and n ≥ 8
//! (every leaf has eight terms or more), and neither NeRV (not symmetric: a bandwidth per row)
//! nor the pair sums are asked with it, and the rows' stacks fit in 256 MiB. Memory: a few tiles
//! per worker, and per row a stack of at most one partial sum per tree level for each quantity.

use std::ops::Range;

use rayon::prelude::*;

use super::super::exp::exp_neg_over;
use super::super::scratch_pool::Pool;
use super::extent::Extent;
use super::row_terms::{CcaJob, CcaKernel, ale_squared_terms, ale_terms, sammon_terms, weighted_terms};
use crate::control::Control;
use crate::data::{Kernel, Points};
use crate::error::Result;
use crate::reference::{PaddedColumns, TILE_LANES, euclidean_tile, tile_stride};
#[cfg(target_arch = "x86_64")]
use crate::resources::isa::avx512;
use crate::sum::{L8, lane_tree, leaf_schedule};

/// Bytes of tile sums computed between two deliveries: every tile of n = 5000 at once (each
/// delivery waits for the slowest worker), a bounded share of memory at any n.
const BATCH_BYTES: usize = 16 << 20;

/// What the tiles sum, per projection: Sammon's two sums, each CCA weighting's two, each
/// average-local-error variant's one, in that order.
pub(super) struct TileJob<'a> {
    pub sammon: bool,
    pub cca: &'a [CcaJob],
    /// The original space's largest distance, each projection's, and the variants (squared?).
    pub ale: Option<(f64, &'a [f64], &'a [bool])>,
}

impl TileJob<'_> {
    /// Sums per row and projection.
    pub fn width(&self) -> usize {
        2 * usize::from(self.sammon) + 2 * self.cca.len() + self.ale.map_or(0, |(_, _, v)| v.len())
    }
}

/// The most the rows' stacks may take; beyond it (n in the millions with many quantities) the
/// full-row sweep, whose memory is O(n) per measure, serves.
const STACK_BYTES: usize = 256 << 20;

/// Whether [`tile_sweep`] serves a sweep of `range` for `width` sums per row (see the module's
/// conditions): each row's stack holds at most one entry per level of the tree, fewer than
/// log₂ n + 2.
pub(super) fn serves(high: &Points, lows: &[&Points], range: &Range<usize>, nerv_or_sums: bool, width: usize) -> bool {
    let euclidean = |p: &Points| matches!(p.metric().kernel(), Kernel::Euclidean);
    let n = high.n();
    let levels = usize::BITS as usize - n.leading_zeros() as usize + 2;
    let stacks = n.saturating_mul(levels).saturating_mul(width).saturating_mul(8);
    !nerv_or_sums
        && *range == (0..n)
        && n >= 8
        && stacks <= STACK_BYTES
        && euclidean(high)
        && lows.iter().all(|l| euclidean(l))
}

/// Per row its sums (row-major: row, projection, quantity); over all pairs i < j the extent of
/// each space's distances (the projections' in order) and the count at original distance 0.
pub(super) struct TileRows {
    pub width: usize,
    pub sums: Vec<f64>,
    pub high: Extent,
    pub zero_high: u64,
    pub low: Vec<Extent>,
}

/// One tile's results: rows of A over leaf B, and (off the diagonal) rows of B over leaf A.
struct TileOut {
    rows: Vec<f64>,
    cols: Vec<f64>,
    /// Over the tile's pairs i < j: the extents (the projections' in order) and the zeros of d^X.
    high: Extent,
    zero_high: u64,
    low: Vec<Extent>,
}

#[derive(Default)]
struct Scratch {
    dx: Vec<f64>,
    dy: Vec<f64>,
    w: Vec<f64>,
    /// The column sums' eight accumulators per chunk of B.
    col: Vec<f64>,
}

/// The sweep (see the module): every row's sums for `job`, per projection.
pub(super) fn tile_sweep(high: &Points, lows: &[&Points], job: &TileJob, ctl: &Control) -> Result<TileRows> {
    let (n, np) = (high.n(), lows.len());
    let width = np * job.width();
    let sched = leaf_schedule(n);
    let m = sched.len();
    // Stack depth before each leaf's push, and the deepest stack.
    let mut before = Vec::with_capacity(m);
    let mut depth = 0usize;
    let mut deepest = 1;
    for &(_, _, combines) in &sched {
        before.push(depth);
        deepest = deepest.max(depth + 1);
        depth = depth + 1 - combines;
    }
    let leaf = |l: usize| sched[l].0..sched[l].0 + sched[l].1;
    let hcols = PaddedColumns::new(high);
    let lcols: Vec<PaddedColumns> = lows.iter().map(|l| PaddedColumns::new(l)).collect();
    // `serves` bounded the stacks by log₂ n + 2 levels.
    debug_assert!(deepest <= usize::BITS as usize - n.leading_zeros() as usize + 2);
    let per_row = deepest * width;
    let mut stacks = vec![0.0f64; n * per_row];
    let mut out = TileRows { width, sums: Vec::new(), high: Extent::EMPTY, zero_high: 0, low: vec![Extent::EMPTY; np] };
    let pool: Pool<Scratch> = Pool::new();
    let (total, mut done) = (m * (m + 1) / 2, 0);
    let mut a0 = 0;
    while a0 < m {
        let (mut a1, mut count) = (a0, 0);
        // Each tile's sums: (|A| + |B|) rows of `width`, |A|, |B| ≤ 128.
        while a1 < m && (a1 == a0 || count * 256 * width * 8 < BATCH_BYTES) {
            count += m - a1;
            a1 += 1;
        }
        let pairs: Vec<(usize, usize)> = (a0..a1).flat_map(|a| (a..m).map(move |b| (a, b))).collect();
        let tiles: Vec<TileOut> = pairs
            .par_iter()
            .map(|&(a, b)| {
                ctl.check()?;
                Ok(pool.with(|s| tile(high, &hcols, lows, &lcols, job, leaf(a), leaf(b), s)))
            })
            .collect::<Result<_>>()?;
        // The batch's first tile of outer leaf a.
        let first = |a: usize| (a0..a).map(|x| m - x).sum::<usize>();
        for t in &tiles {
            out.high = out.high.join(t.high);
            out.zero_high += t.zero_high;
            for (o, &l) in out.low.iter_mut().zip(&t.low) {
                *o = o.join(l);
            }
        }
        // Deliver, each leaf of rows on its own: its rows take their leaf sums in leaf order.
        let mut parts = Vec::with_capacity(m);
        let mut st = &mut stacks[..];
        for c in 0..m {
            let (s1, s2) = st.split_at_mut(sched[c].1 * per_row);
            parts.push((c, s1));
            st = s2;
        }
        parts.into_par_iter().for_each(|(c, st)| {
            let push = |st: &mut [f64], r: usize, l: usize, vals: &[f64]| {
                push_leaf(&mut st[r * per_row..(r + 1) * per_row], width, before[l], sched[l].2, vals)
            };
            for a in a0..a1.min(c + 1) {
                if a < c {
                    let t = &tiles[first(a) + (c - a)];
                    for r in 0..sched[c].1 {
                        push(st, r, a, &t.cols[r * width..(r + 1) * width]);
                    }
                } else {
                    for b in c..m {
                        let t = &tiles[first(c) + (b - c)];
                        for r in 0..sched[c].1 {
                            push(st, r, b, &t.rows[r * width..(r + 1) * width]);
                        }
                    }
                }
            }
        });
        done += pairs.len();
        ctl.report("all-pairs sweep (tiles)", done as u64, total as u64);
        a0 = a1;
    }
    // Nothing to sum (only the extents asked for, e.g. an average local error that a space of
    // zero distances leaves undefined) leaves no stacks.
    if per_row > 0 {
        out.sums = stacks.chunks(per_row).flat_map(|s| s[..width].iter().copied()).collect();
    }
    Ok(out)
}

/// Pushes one leaf's sums on a row's stack (`depth` entries of `width` below it) and adds the
/// top two `combines` times, as the schedule says.
fn push_leaf(stack: &mut [f64], width: usize, depth: usize, combines: usize, vals: &[f64]) {
    stack[depth * width..(depth + 1) * width].copy_from_slice(vals);
    let mut top = depth + 1;
    for _ in 0..combines {
        let (below, above) = stack[(top - 2) * width..top * width].split_at_mut(width);
        for (b, a) in below.iter_mut().zip(above.iter()) {
            *b += *a;
        }
        top -= 1;
    }
}

/// The tile of rows `a` by points `b` (a.start ≤ b.start; equal on the diagonal).
#[allow(clippy::too_many_arguments)]
fn tile(
    high: &Points,
    hcols: &PaddedColumns,
    lows: &[&Points],
    lcols: &[PaddedColumns],
    job: &TileJob,
    a: Range<usize>,
    b: Range<usize>,
    s: &mut Scratch,
) -> TileOut {
    let diag = a == b;
    let (na, nb, np) = (a.len(), b.len(), lows.len());
    let q = job.width();
    let width = np * q;
    let stride = tile_stride(nb);
    s.dx.resize(na * stride, 0.0);
    s.dy.resize(na * stride, 0.0);
    euclidean_tile(high, hcols, a.clone(), b.clone(), &mut s.dx);
    // The pairs i < j belong to row i: all of the tile off the diagonal (one run of the buffer
    // when the rows have no padding), b > a on it.
    let runs: Vec<Range<usize>> = if !diag && nb == stride {
        std::iter::once(0..na * stride).collect()
    } else {
        (0..na).map(|r| r * stride + if diag { r + 1 } else { 0 }..r * stride + nb).collect()
    };
    let extent = |d: &[f64]| runs.iter().fold(Extent::EMPTY, |e, r| e.join(Extent::of(&d[r.clone()])));
    let mut t = TileOut {
        rows: vec![0.0; na * width],
        cols: if diag { Vec::new() } else { vec![0.0; nb * width] },
        high: extent(&s.dx),
        zero_high: runs.iter().map(|r| s.dx[r.clone()].iter().filter(|&&d| d == 0.0).count() as u64).sum(),
        low: Vec::with_capacity(np),
    };
    let mut sums = Sums { na, nb, stride, diag, width, rows: &mut t.rows, cols: &mut t.cols, col: &mut s.col };
    for (p, (low, lc)) in lows.iter().zip(lcols).enumerate() {
        euclidean_tile(low, lc, a.clone(), b.clone(), &mut s.dy);
        t.low.push(extent(&s.dy));
        let mut at = p * q;
        if job.sammon {
            sammon_tile(&s.dx, &s.dy, &mut sums, at);
            at += 2;
        }
        for c in job.cca {
            s.w.resize(s.dy.len(), 0.0);
            match c.kernel {
                CcaKernel::Exponential => exp_neg_over(&s.dy, c.lambda, &mut s.w),
                CcaKernel::Step => {
                    for (f, &d) in s.w.iter_mut().zip(&s.dy) {
                        *f = if d <= c.lambda { 1.0 } else { 0.0 };
                    }
                }
            }
            cca_tile(&s.dx, &s.dy, &s.w, &mut sums, at);
            at += 2;
        }
        if let Some((mx, my, variants)) = job.ale {
            for &sq in variants {
                ale_tile(&s.dx, &s.dy, mx, my[p], sq, &mut sums, at);
                at += 1;
            }
        }
    }
    t
}

/// Where a tile's sums go: row r's quantity k at `rows[r · width + at + k]`, column t's at
/// `cols[t · width + at + k]`; `col` is scratch.
struct Sums<'a> {
    na: usize,
    nb: usize,
    stride: usize,
    diag: bool,
    width: usize,
    rows: &'a mut [f64],
    cols: &'a mut [f64],
    col: &'a mut Vec<f64>,
}

fn sammon_tile(dx: &[f64], dy: &[f64], out: &mut Sums, at: usize) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::sammon(dx, dy, out, at) };
    }
    sammon_portable(dx, dy, out, at)
}

fn cca_tile(dx: &[f64], dy: &[f64], w: &[f64], out: &mut Sums, at: usize) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::weighted(dx, dy, w, out, at) };
    }
    cca_portable(dx, dy, w, out, at)
}

fn ale_tile(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool, out: &mut Sums, at: usize) {
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { simd::ale(dx, dy, max_x, max_y, squared, out, at) };
    }
    ale_portable(dx, dy, max_x, max_y, squared, out, at)
}

#[multiversion::multiversion(targets("x86_64+avx2"))]
fn sammon_portable(dx: &[f64], dy: &[f64], out: &mut Sums, at: usize) {
    tile_sums([dx, dy], out, at, sammon_terms);
}

#[multiversion::multiversion(targets("x86_64+avx2"))]
fn cca_portable(dx: &[f64], dy: &[f64], w: &[f64], out: &mut Sums, at: usize) {
    tile_sums([dx, dy, w], out, at, weighted_terms);
}

#[multiversion::multiversion(targets("x86_64+avx2"))]
fn ale_portable(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool, out: &mut Sums, at: usize) {
    if squared {
        let (mx, my) = (max_x * max_x, max_y * max_y);
        tile_sums([dx, dy], out, at, |t| ale_squared_terms(t, mx, my));
    } else {
        tile_sums([dx, dy], out, at, |t| ale_terms(t, max_x, max_y));
    }
}

/// NumPy's leaf sums of the terms `f` over a tile's rows and (off the diagonal) its columns.
/// Row r over the tile's points: its eight lanes are the terms' positions in leaf B mod 8
/// (the tile's chunks start on leaf B's start, a multiple of 8), from −0, added chunk by chunk,
/// their tree, then the last nb mod 8 terms in sequence: `lane_sums`' leaf. Column t over the
/// rows: lane r mod 8, the same tree; the rows' leaf A is not the last leaf (A < B off the
/// diagonal), so its length is a multiple of 8 and no terms follow the tree. Both leaves have
/// eight terms or more (the sweep serves n ≥ 8). `col` holds, per accumulator l and chunk c, K
/// vectors whose lane is the column.
#[inline(always)]
fn tile_sums<const M: usize, const K: usize>(
    tiles: [&[f64]; M],
    o: &mut Sums,
    at: usize,
    f: impl Fn([L8; M]) -> [L8; K],
) {
    const L: usize = TILE_LANES;
    let (na, nb, stride) = (o.na, o.nb, o.stride);
    let chunks = stride / L;
    let full_b = nb - nb % L;
    o.reset::<K>(chunks);
    let get = |v: &[f64], i: usize| L8(v[i * L..i * L + L].try_into().expect("eight values"));
    for r in 0..na {
        let mut acc = [L8::splat(-0.0); K];
        let mut last = [L8::splat(0.0); K];
        for c in 0..chunks {
            let x: [L8; M] = std::array::from_fn(|k| get(tiles[k], r * chunks + c));
            let v = f(x);
            if c * L < full_b {
                for k in 0..K {
                    acc[k] = acc[k] + v[k];
                }
            } else {
                last = v;
            }
            if !o.diag {
                for k in 0..K {
                    let i = ((r % L) * chunks + c) * K + k;
                    let cur = get(o.col, i) + v[k];
                    o.col[i * L..i * L + L].copy_from_slice(&cur.0);
                }
            }
        }
        for k in 0..K {
            o.put_row(r, at + k, acc[k].0, &last[k].0[..nb - full_b]);
        }
    }
    if !o.diag {
        for c in 0..chunks {
            for k in 0..K {
                let l = |x: usize| get(o.col, (x * chunks + c) * K + k);
                let res = ((l(0) + l(1)) + (l(2) + l(3))) + ((l(4) + l(5)) + (l(6) + l(7)));
                o.put_cols(c, at + k, &res.0);
            }
        }
    }
}

impl Sums<'_> {
    /// Clears the column sums for K quantities: the accumulators at −0 (NumPy starts them with
    /// the first terms; −0 + x is x). Off the diagonal the rows' leaf is not the last one: its
    /// length is a multiple of 8 (checked: the column sums have no terms after the tree).
    fn reset<const K: usize>(&mut self, chunks: usize) {
        if !self.diag {
            assert_eq!(self.na % TILE_LANES, 0, "off the diagonal, the rows' leaf is a whole number of lanes");
            self.col.clear();
            self.col.resize(TILE_LANES * chunks * K * TILE_LANES, -0.0);
        }
    }
    /// Row r's sum from its eight lanes and its last terms (NumPy's leaf).
    fn put_row(&mut self, r: usize, q: usize, lanes: [f64; 8], last: &[f64]) {
        let mut res = lane_tree(lanes);
        for &v in last {
            res += v;
        }
        self.rows[r * self.width + q] = res;
    }
    /// Columns 8c, 8c + 1, ... (those inside the tile): their sums, one per lane.
    fn put_cols(&mut self, c: usize, q: usize, sums: &[f64; 8]) {
        for (lane, t) in (c * TILE_LANES..self.nb.min(c * TILE_LANES + TILE_LANES)).enumerate() {
            self.cols[t * self.width + q] = sums[lane];
        }
    }
}

/// The tile sums on AVX-512 vectors: `tile_sums`' steps, each lane the same IEEE operation, with
/// the row terms' own vector expressions.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;

    use super::super::row_terms::simd::{ale_squared_v, ale_v, sammon_v, weighted_v};
    use super::{Sums, TILE_LANES as L};

    #[target_feature(enable = "avx512f")]
    pub(super) fn sammon(dx: &[f64], dy: &[f64], o: &mut Sums, at: usize) {
        tile_sums([dx, dy], o, at, |t| sammon_v(t));
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn weighted(dx: &[f64], dy: &[f64], w: &[f64], o: &mut Sums, at: usize) {
        tile_sums([dx, dy, w], o, at, |t| weighted_v(t));
    }

    #[target_feature(enable = "avx512f")]
    pub(super) fn ale(dx: &[f64], dy: &[f64], max_x: f64, max_y: f64, squared: bool, o: &mut Sums, at: usize) {
        if squared {
            let (mx, my) = (_mm512_set1_pd(max_x * max_x), _mm512_set1_pd(max_y * max_y));
            tile_sums([dx, dy], o, at, |t| ale_squared_v(t, mx, my));
        } else {
            let (mx, my) = (_mm512_set1_pd(max_x), _mm512_set1_pd(max_y));
            tile_sums([dx, dy], o, at, |t| ale_v(t, mx, my));
        }
    }

    fn lanes(v: __m512d) -> [f64; 8] {
        let mut a = [0.0f64; 8];
        // SAFETY: eight f64.
        unsafe { _mm512_storeu_pd(a.as_mut_ptr(), v) };
        a
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn tile_sums<const M: usize, const K: usize, F>(tiles: [&[f64]; M], o: &mut Sums, at: usize, f: F)
    where
        F: Fn([__m512d; M]) -> [__m512d; K],
    {
        let (na, nb, stride) = (o.na, o.nb, o.stride);
        let chunks = stride / L;
        let full_b = nb - nb % L;
        o.reset::<K>(chunks);
        for t in &tiles {
            assert!(t.len() >= na * stride, "a whole tile");
        }
        let col = o.col.as_mut_ptr();
        for r in 0..na {
            let mut acc = [_mm512_set1_pd(-0.0); K];
            let mut last = [_mm512_setzero_pd(); K];
            for c in 0..chunks {
                // SAFETY: r · stride + 8c + 8 ≤ na · stride ≤ each tile's length (asserted).
                let x: [__m512d; M] =
                    std::array::from_fn(|k| unsafe { _mm512_loadu_pd(tiles[k].as_ptr().add(r * stride + c * L)) });
                let v = f(x);
                if c * L < full_b {
                    for k in 0..K {
                        acc[k] = _mm512_add_pd(acc[k], v[k]);
                    }
                } else {
                    last = v;
                }
                if !o.diag {
                    for k in 0..K {
                        // SAFETY: `reset` sized col for 8 accumulators × chunks × K vectors.
                        unsafe {
                            let p = col.add((((r % L) * chunks + c) * K + k) * L);
                            _mm512_storeu_pd(p, _mm512_add_pd(_mm512_loadu_pd(p), v[k]));
                        }
                    }
                }
            }
            for k in 0..K {
                o.put_row(r, at + k, lanes(acc[k]), &lanes(last[k])[..nb - full_b]);
            }
        }
        if o.diag {
            return;
        }
        for c in 0..chunks {
            for k in 0..K {
                // SAFETY: as above.
                let l = |x: usize| unsafe { _mm512_loadu_pd(col.add(((x * chunks + c) * K + k) * L)) };
                let res = _mm512_add_pd(
                    _mm512_add_pd(_mm512_add_pd(l(0), l(1)), _mm512_add_pd(l(2), l(3))),
                    _mm512_add_pd(_mm512_add_pd(l(4), l(5)), _mm512_add_pd(l(6), l(7))),
                );
                o.put_cols(c, at + k, &lanes(res));
            }
        }
    }
}
