//! The exact kNN of a Euclidean (or sqeuclidean) space of any dimension through a tree of
//! boxed leaves: the brute-force reference's lists and distances bit for bit
//! ([`select_knn`](super::select_knn) on [`distance_row`](super::distance_row)), computing only
//! the leaves that the row's current k-th neighbour does not rule out (`docs/exactness.md` §4c).
//!
//! Why pruning is exact (the argument of `kdtree.rs`, in any dimension). A distance is the
//! reference's f64 value `d = √(Σ_c t_c²)` (sqeuclidean: the sum itself), `t_c = fl(x_ic − y_c)`,
//! the sum from 0 in coordinate order, each operation rounded once. Correctly rounded
//! subtraction is non-decreasing in its first argument and non-increasing in its second,
//! `fl(b − a) = −fl(a − b)`, and squaring a magnitude, adding non-negative terms and the root are
//! non-decreasing. A leaf's box holds its points' own smallest and largest coordinates
//! `[lo_c, hi_c]`; so for x outside the box in c, `|t_c| ≥ fl(lo_c − x_c)` (or `fl(x_c − hi_c)`),
//! and for x in a box Q and y in a box B, `|t_c| ≥ fl(B.lo_c − Q.hi_c)` where that is positive
//! (or `fl(Q.lo_c − B.hi_c)`). The same operations in the same order on these gaps (0 where the
//! boxes overlap in c) give an f64 value `dmin ≤ d` for every such pair: a bound on the very
//! bits the reference computes, with no error term. A leaf whose `dmin` is above the current
//! k-th distance holds only points at a larger distance, hence a larger key `(d, j)` whatever
//! their indices: skipping it changes nothing. Every other point's distance is the reference's
//! own bits (the same sum, lane by lane), and the k smallest keys are kept exactly.
//!
//! No premise about the data beyond the reference's: overflowing squares give +∞ in both (a
//! bound of +∞ prunes nothing that the reference would keep: `+∞ > d_k` only when d_k is finite,
//! and then every point of the leaf is at +∞ > d_k too); the padding lanes hold NaN, whose
//! distance is never `≤ d_k`.

use super::key::{Key, key};
use crate::data::{Kernel, Points};

/// Points per leaf at most (a leaf is 32 lanes of every coordinate, padded with NaN).
pub const LEAF: usize = 32;

/// A tree of boxed leaves over a Euclidean or sqeuclidean point set, built once and read by
/// every row (read-only; the rows of one leaf share its order of the other leaves).
#[derive(Debug)]
pub struct BoxTree {
    dim: usize,
    /// Distances are the sums themselves (sqeuclidean), not their roots.
    squared: bool,
    /// Point of each leaf lane (leaf b, lane t at `b·LEAF + t`); `u32::MAX` pads.
    ids: Vec<u32>,
    /// Points in each leaf.
    lens: Vec<u32>,
    /// Leaf b's coordinate c in lanes `(b·dim + c)·LEAF ..` (NaN in padding lanes).
    cols: Vec<f64>,
    /// Leaf b's box: `lo[b·dim + c]`, `hi[b·dim + c]`.
    lo: Vec<f64>,
    hi: Vec<f64>,
}

/// A row's kNN state and a leaf's order, reused across rows.
#[derive(Default)]
pub struct BoxScratch {
    order: Vec<(f64, u32)>,
    /// Each row's k smallest keys so far, ascending.
    best: Vec<Vec<Key>>,
}

impl BoxTree {
    /// The tree of a Euclidean or sqeuclidean space with coordinates (others: `None`). Runs
    /// split near the median of the coordinate with the largest spread (ties by index), down to
    /// leaves of [`LEAF`] points (one leaf may hold fewer).
    pub fn build(points: &Points) -> Option<BoxTree> {
        let squared = match points.metric().kernel() {
            Kernel::Euclidean => false,
            Kernel::SqEuclidean => true,
            _ => return None,
        };
        let (n, dim) = (points.n(), points.dim());
        if n == 0 || dim == 0 || n > u32::MAX as usize {
            return None;
        }
        let mut ids: Vec<u32> = (0..n as u32).collect();
        let leaves = split(points, &mut ids, 0);
        let nl = leaves.len();
        let mut t = BoxTree {
            dim,
            squared,
            ids: vec![u32::MAX; nl * LEAF],
            lens: Vec::with_capacity(nl),
            cols: vec![f64::NAN; nl * dim * LEAF],
            lo: vec![0.0; nl * dim],
            hi: vec![0.0; nl * dim],
        };
        for (b, &(start, len)) in leaves.iter().enumerate() {
            t.lens.push(len as u32);
            for (lane, &j) in ids[start..start + len].iter().enumerate() {
                t.ids[b * LEAF + lane] = j;
                for (c, &v) in points.row(j as usize).iter().enumerate() {
                    t.cols[(b * dim + c) * LEAF + lane] = v;
                }
            }
            for c in 0..dim {
                let lanes = &t.cols[(b * dim + c) * LEAF..][..len];
                t.lo[b * dim + c] = lanes.iter().copied().fold(f64::INFINITY, |a, v| if v < a { v } else { a });
                t.hi[b * dim + c] = lanes.iter().copied().fold(f64::NEG_INFINITY, |a, v| if v > a { v } else { a });
            }
        }
        Some(t)
    }

    /// Number of leaves.
    pub fn leaves(&self) -> usize {
        self.lens.len()
    }

    /// The points of leaf `b`.
    pub fn leaf_ids(&self, b: usize) -> &[u32] {
        &self.ids[b * LEAF..b * LEAF + self.lens[b] as usize]
    }

    /// Bytes the tree of n points in `dim` dimensions holds (every leaf full but one).
    pub fn bytes_for(n: usize, dim: usize) -> usize {
        let leaves = n.div_ceil(LEAF);
        leaves.saturating_mul(LEAF * 4 + 4 + (LEAF + 2).saturating_mul(dim).saturating_mul(8))
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.ids.len() * 4 + self.lens.len() * 4 + (self.cols.len() + self.lo.len() + self.hi.len()) * 8
    }

    /// The distance of a sum of squares: its root, or itself (sqeuclidean).
    #[inline(always)]
    fn dist(&self, s: f64) -> f64 {
        if self.squared { s } else { s.sqrt() }
    }

    /// `dmin` of every pair of a point of leaf `q` and a point of leaf `b` (module docs).
    fn box_gap(&self, q: usize, b: usize) -> f64 {
        let d = self.dim;
        let (ql, qh, bl, bh) =
            (&self.lo[q * d..][..d], &self.hi[q * d..][..d], &self.lo[b * d..][..d], &self.hi[b * d..][..d]);
        let mut s = 0.0;
        for c in 0..d {
            let g = gap(ql[c], qh[c], bl[c], bh[c]);
            s += g * g;
        }
        self.dist(s)
    }

    /// The kNN of every point of leaf `q` (k < n), each row's `k` indices and distances written
    /// in the leaf's lane order into `idx` and `dist` (`len × k`); returns the number of point
    /// distances computed. The leaf's rows go together: the other leaves in order of their
    /// bound from q's box, each one's distances to all of q's rows in one register tile, until
    /// the bound exceeds every row's k-th distance.
    pub fn knn_leaf(
        &self,
        points: &Points,
        q: usize,
        k: usize,
        sc: &mut BoxScratch,
        idx: &mut [u32],
        dist: &mut [f64],
    ) -> u64 {
        assert!(k >= 1 && k < points.n(), "box tree: 1 ≤ k < n");
        let rows = self.leaf_ids(q);
        let m = rows.len();
        assert!(idx.len() == m * k && dist.len() == m * k, "box tree: len × k outputs");
        sc.order.clear();
        sc.order.extend((0..self.leaves()).map(|b| (self.box_gap(q, b), b as u32)));
        sc.order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        sc.best.resize_with(m.max(sc.best.len()), Vec::new);
        sc.best.iter_mut().for_each(Vec::clear);
        // Each row's k-th distance and the largest sum whose distance is at most it.
        let (mut dk, mut top) = ([f64::INFINITY; LEAF], [f64::INFINITY; LEAF]);
        let mut out = Tile::new();
        let mut visited = 0u64;
        let span = self.dim * LEAF;
        let qcols = &self.cols[q * span..(q + 1) * span];
        for &(gap, b) in &sc.order {
            let b = b as usize;
            // Sorted by bound: this leaf and every later one are farther than every row's k-th.
            if dk[..m].iter().all(|&d| gap > d) {
                break;
            }
            // Rows whose k-th this leaf cannot improve (their own bound to its box above their
            // k-th's largest sum) are left out, four at a time.
            let near = self.row_gaps(qcols, b);
            let active = (0..m).fold(0u32, |a, r| a | (u32::from(!(near[r] > top[r])) << r));
            let groups = tile(qcols, &self.cols[b * span..(b + 1) * span], &top, active, &mut out);
            visited += groups as u64 * 4 * u64::from(self.lens[b]);
            for r in 0..m {
                let mut mask = out.masks[r];
                if mask == 0 {
                    continue;
                }
                let i = rows[r];
                let best = &mut sc.best[r];
                let mut changed = false;
                if best.len() < k {
                    // Until k are held every point enters: the leaf's keys at once, then the k
                    // smallest of all held (keys are distinct: the same set as one by one).
                    while mask != 0 {
                        let t = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        let j = self.ids[b * LEAF + t];
                        if j != i {
                            best.push(key(self.dist(out.sums[r][t]), j as usize));
                        }
                    }
                    if best.len() >= k {
                        best.select_nth_unstable(k - 1);
                        best.truncate(k);
                        best.sort_unstable();
                        changed = true;
                    }
                }
                while mask != 0 {
                    let t = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    let j = self.ids[b * LEAF + t];
                    if j != i {
                        changed |= insert(best, k, key(self.dist(out.sums[r][t]), j as usize));
                    }
                }
                if changed && best.len() == k {
                    dk[r] = f64::from_bits((best[k - 1] >> 32) as u64);
                    top[r] = self.largest_sum(dk[r]);
                }
            }
        }
        for (r, best) in sc.best[..m].iter().enumerate() {
            debug_assert_eq!(best.len(), k);
            for (s, &kk) in best.iter().enumerate() {
                idx[r * k + s] = kk as u32;
                dist[r * k + s] = f64::from_bits((kk >> 32) as u64);
            }
        }
        visited
    }

    /// For each lane of a leaf's rows (`qcols`, `[c][row]`), the sum of squares of its gaps to
    /// leaf b's box: at most the reference's sum to every point of b (module docs). Branch-free
    /// across the rows.
    fn row_gaps(&self, qcols: &[f64], b: usize) -> [f64; LEAF] {
        let d = self.dim;
        let mut s = [0.0f64; LEAF];
        for ((x, &lo), &hi) in qcols.chunks_exact(LEAF).zip(&self.lo[b * d..][..d]).zip(&self.hi[b * d..][..d]) {
            for (s, &x) in s.iter_mut().zip(x) {
                let g = gap(x, x, lo, hi);
                *s += g * g;
            }
        }
        s
    }

    /// A sum at least the largest whose distance is at most `d` ([`sums_at_most`]; for a
    /// sqeuclidean tree, d itself).
    fn largest_sum(&self, d: f64) -> f64 {
        if self.squared { d } else { sums_at_most(d) }
    }
}

/// A sum of squares at least the largest whose correctly rounded root is at most `d`, and at
/// most a few ulps above it (+∞ when d is, or where the walk does not end within 64 ulps:
/// more values then pass to the key comparison, never fewer). The root is non-decreasing, so
/// every sum whose root is at most d is at most this one: a filter on sums that keeps every
/// point whose distance is at most d, without computing its root.
pub(super) fn sums_at_most(d: f64) -> f64 {
    if d.is_nan() || d == f64::INFINITY {
        return f64::INFINITY;
    }
    // Away from the ends of the range, a bound a few ulps above, without a root:
    // fl(√s) ≤ d gives √s ≤ d + u/2 (u = ulp(d) > d·2⁻⁵³; below a power of two the step is
    // u/2 and the bound only looser), so s ≤ (d + u/2)² = (d + u)² − (u·d + ¾u²); and
    // fl((d + u)²) ≥ (d + u)²(1 − 2⁻⁵³) > (d + u)² − u·d − 2u², so fl((d + u)²) + 2u² covers
    // s, and one ulp of fl((d + u)²) (≥ its value·2⁻⁵³ ≈ d²·2⁻⁵³ ≫ 2u² ≈ d²·2⁻¹⁰⁴) is more.
    // The range keeps every value normal and the square finite.
    if (1e-140..1e140).contains(&d) {
        let up = d.next_up();
        return (up * up).next_up();
    }
    sums_at_most_walk(d)
}

/// The largest sum whose root is at most `d` exactly: from `d²`, one ulp at a time (+∞ as
/// [`sums_at_most`]).
fn sums_at_most_walk(d: f64) -> f64 {
    if d.is_nan() || d == f64::INFINITY {
        return f64::INFINITY;
    }
    // Non-negative f64s order like their bit patterns: one ulp is one step of the bits.
    let (down, up) = (|x: f64| f64::from_bits(x.to_bits() - 1), |x: f64| f64::from_bits(x.to_bits() + 1));
    let mut s = d * d;
    for _ in 0..64 {
        if s > 0.0 && s.sqrt() > d {
            s = down(s);
        } else {
            break;
        }
    }
    if s.sqrt() > d {
        return f64::INFINITY;
    }
    for _ in 0..64 {
        let next = up(s);
        if next == f64::INFINITY || next.sqrt() > d {
            return s;
        }
        s = next;
    }
    f64::INFINITY
}

/// The gap between the intervals [a_lo, a_hi] and [b_lo, b_hi] (0 where they meet), one
/// subtraction of the reference's: at most |a − b| for any a of the first and b of the second
/// (rounding is monotone; module docs). Inlined: `row_gaps` stays branch-free across rows.
#[inline(always)]
fn gap(a_lo: f64, a_hi: f64, b_lo: f64, b_hi: f64) -> f64 {
    if b_lo > a_hi {
        b_lo - a_hi
    } else if a_lo > b_hi {
        a_lo - b_hi
    } else {
        0.0
    }
}

/// What [`tile`] computes for a leaf's rows against another leaf's points.
struct Tile {
    /// `sums[r][t]`: row r's sum of squares to point t.
    sums: [[f64; LEAF]; LEAF],
    /// Row r's points whose sum is at most its threshold, one bit each.
    masks: [u32; LEAF],
}

impl Tile {
    fn new() -> Tile {
        Tile { sums: [[0.0; LEAF]; LEAF], masks: [0; LEAF] }
    }
}

/// The sums of squares of one leaf's rows (q: coordinates in lanes, `[c][row]`) to another
/// leaf's points (b: `[c][point]`), `sums[r][t] = Σ_c (q_rc − b_tc)²` from 0 in coordinate
/// order, the reference's operations (no fused multiply-add) in every version, and each row's
/// mask of the points with `sums[r][t] ≤ top[r]` (false on NaN: the padding).
/// Only the groups of four rows with a bit in `active` are computed (the others' masks are
/// 0, their sums left as they were); returns how many groups were.
fn tile(q: &[f64], b: &[f64], top: &[f64; LEAF], active: u32, out: &mut Tile) -> u32 {
    assert!(q.len() == b.len() && q.len().is_multiple_of(LEAF), "tile: whole leaves");
    let groups = (0..LEAF / 4).filter(|g| (active >> (4 * g)) & 0xF != 0).count() as u32;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: AVX-512F was detected; the lengths are whole leaves (asserted above).
        unsafe { tile_avx512(q, b, top, active, out) };
        return groups;
    }
    tile_portable(q, b, top, active, out);
    groups
}

/// [`tile`] for any target, a row at a time (vectorised across the points).
fn tile_portable(q: &[f64], b: &[f64], top: &[f64; LEAF], active: u32, out: &mut Tile) {
    for (r, (o, mask)) in out.sums.iter_mut().zip(out.masks.iter_mut()).enumerate() {
        if (active >> (r / 4 * 4)) & 0xF == 0 {
            *mask = 0;
            continue;
        }
        let mut acc = [0.0f64; LEAF];
        for (qc, bc) in q.chunks_exact(LEAF).zip(b.chunks_exact(LEAF)) {
            let x = qc[r];
            for (s, &y) in acc.iter_mut().zip(bc) {
                let t = x - y;
                *s += t * t;
            }
        }
        *mask = acc.iter().enumerate().fold(0, |m, (t, &v)| m | (u32::from(v <= top[r]) << t));
        *o = acc;
    }
}

/// [`tile`] on AVX-512: four rows × the leaf's 32 points in 16 registers across the
/// coordinates (sub, mul, add: the scalar operations lane by lane), the masks by ordered
/// compares (false on NaN).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tile_avx512(q: &[f64], b: &[f64], top: &[f64; LEAF], active: u32, out: &mut Tile) {
    use std::arch::x86_64::*;
    let dim = q.len() / LEAF;
    let (pq, pb) = (q.as_ptr(), b.as_ptr());
    for r0 in (0..LEAF).step_by(4) {
        if (active >> r0) & 0xF == 0 {
            out.masks[r0..r0 + 4].fill(0);
            continue;
        }
        let mut acc = [[_mm512_setzero_pd(); 4]; 4];
        for c in 0..dim {
            // SAFETY: c < dim and r0 + 3 < LEAF, so every load is within q and b (whole leaves).
            let y = unsafe { [0, 8, 16, 24].map(|t| _mm512_loadu_pd(pb.add(c * LEAF + t))) };
            for (rr, a) in acc.iter_mut().enumerate() {
                let x = _mm512_set1_pd(unsafe { *pq.add(c * LEAF + r0 + rr) });
                for (s, &yv) in a.iter_mut().zip(&y) {
                    let t = _mm512_sub_pd(x, yv);
                    *s = _mm512_add_pd(*s, _mm512_mul_pd(t, t));
                }
            }
        }
        for (rr, a) in acc.iter().enumerate() {
            let limit = _mm512_set1_pd(top[r0 + rr]);
            let mut mask = 0u32;
            for (v, s) in a.iter().enumerate() {
                // SAFETY: out.sums[r0 + rr] holds 32 f64; v·8 + 8 ≤ 32.
                unsafe { _mm512_storeu_pd(out.sums[r0 + rr].as_mut_ptr().add(v * 8), *s) };
                mask |= u32::from(_mm512_cmp_pd_mask::<_CMP_LE_OQ>(*s, limit)) << (v * 8);
            }
            out.masks[r0 + rr] = mask;
        }
    }
}

/// Puts `kk` into the ascending `best` (at most k held); whether it went in.
#[inline]
fn insert(best: &mut Vec<Key>, k: usize, kk: Key) -> bool {
    if best.len() == k {
        if kk >= best[k - 1] {
            return false;
        }
        best.pop();
    }
    let at = best.partition_point(|&b| b < kk);
    best.insert(at, kk);
    true
}

/// Splits `ids[..]` (positions `start..` of the tree order) into leaves `(start, len)` of at most [`LEAF`]
/// points, in order: at the whole leaf nearest the median of the widest coordinate (ties by
/// index), or in the index order when every coordinate is constant (coincident points).
fn split(points: &Points, ids: &mut [u32], start: usize) -> Vec<(usize, usize)> {
    let len = ids.len();
    if len <= LEAF {
        return vec![(start, len)];
    }
    let dim = points.dim();
    // Each point's row once (one or two cache lines), not a column's entry per coordinate.
    let (mut lo, mut hi) = (vec![f64::INFINITY; dim], vec![f64::NEG_INFINITY; dim]);
    for &j in ids.iter() {
        for ((l, h), &v) in lo.iter_mut().zip(hi.iter_mut()).zip(points.row(j as usize)) {
            *l = if v < *l { v } else { *l };
            *h = if v > *h { v } else { *h };
        }
    }
    let mut widest = (0.0f64, usize::MAX);
    for (c, (l, h)) in lo.iter().zip(&hi).enumerate() {
        let spread = h - l;
        if spread > widest.0 {
            widest = (spread, c);
        }
    }
    // Whole leaves on the left (about half of them): every leaf full but the last, so the
    // tiles compute few padding lanes.
    let mid = len.div_ceil(LEAF) / 2 * LEAF;
    if widest.1 != usize::MAX {
        let col = points.col(widest.1);
        ids.select_nth_unstable_by(mid, |&a, &b| col[a as usize].total_cmp(&col[b as usize]).then(a.cmp(&b)));
    }
    let (left, right) = ids.split_at_mut(mid);
    // Large runs' halves on two threads (the leaves in the same order either way).
    let (mut leaves, right) = if len > 4096 {
        rayon::join(|| split(points, left, start), || split(points, right, start + mid))
    } else {
        (split(points, left, start), split(points, right, start + mid))
    };
    leaves.extend(right);
    leaves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;
    use crate::reference::rows_knn as brute;

    fn by_tree(p: &Points, k: usize) -> (Vec<u32>, Vec<f64>, u64) {
        let t = BoxTree::build(p).unwrap();
        let n = p.n();
        let (mut idx, mut dist) = (vec![0u32; n * k], vec![0.0; n * k]);
        let mut sc = BoxScratch::default();
        let mut visited = 0;
        for b in 0..t.leaves() {
            let ids = t.leaf_ids(b).to_vec();
            let (mut li, mut ld) = (vec![0u32; ids.len() * k], vec![0.0; ids.len() * k]);
            visited += t.knn_leaf(p, b, k, &mut sc, &mut li, &mut ld);
            for (r, &i) in ids.iter().enumerate() {
                let i = i as usize;
                idx[i * k..(i + 1) * k].copy_from_slice(&li[r * k..(r + 1) * k]);
                dist[i * k..(i + 1) * k].copy_from_slice(&ld[r * k..(r + 1) * k]);
            }
        }
        (idx, dist, visited)
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Data built to break the pruning: coincident points (more than a leaf), integer lattices
    /// (ties everywhere), 1e-9 jitter at f64's resolution, huge and tiny scales, one dimension
    /// and many, blobs far apart (pruned leaves) and uniform cubes (few pruned).
    fn hostile() -> Vec<(String, Points)> {
        let mut out = Vec::new();
        let mut seed = 7u64;
        for &(n, d) in &[(2usize, 1usize), (3, 2), (40, 1), (97, 3), (300, 5), (700, 10), (1500, 24), (500, 60)] {
            for kind in 0..6 {
                let mut v = Vec::with_capacity(n * d);
                for i in 0..n {
                    for c in 0..d {
                        let u = lcg(&mut seed);
                        v.push(match kind {
                            0 => u,
                            1 => (u * 4.0).floor(),
                            2 => ((i % 5) as f64) * 10.0 + if lcg(&mut seed) < 0.5 { 0.0 } else { 1e-9 * u },
                            3 => {
                                if i % 3 == 0 {
                                    1.0
                                } else {
                                    (u * 3.0).floor() * 3e149
                                }
                            }
                            4 => u * 1e-300,
                            _ => ((i % 4) * 100) as f64 + u + c as f64,
                        });
                    }
                }
                out.push((format!("n={n} D={d} kind {kind}"), Points::from_vec("hostile", n, d, v).unwrap()));
            }
        }
        out
    }

    #[test]
    fn tree_lists_are_the_reference_lists() {
        let mut pruned = 0;
        for (name, p) in hostile() {
            let n = p.n();
            for &k in &[1usize, 2, 10, 33, n - 1] {
                if k == 0 || k >= n {
                    continue;
                }
                for metric in [Metric::Euclidean, Metric::SqEuclidean] {
                    let p = p.clone().with_metric(metric).unwrap();
                    let (wi, wd) = brute(&p, k);
                    let (gi, gd, visited) = by_tree(&p, k);
                    assert_eq!(gi, wi, "{name} k={k} {metric:?}: indices");
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&gd), bits(&wd), "{name} k={k} {metric:?}: distances");
                    if visited < (n * n) as u64 / 2 {
                        pruned += 1;
                    }
                }
            }
        }
        // The pruning did prune (blobs and lattices), so the test exercises it.
        assert!(pruned > 20, "{pruned} cases pruned");
    }

    #[test]
    fn every_tile_version_is_the_scalar_sum() {
        let mut seed = 3u64;
        for dim in [1usize, 2, 7, 10, 33] {
            let q: Vec<f64> = (0..dim * LEAF).map(|_| (lcg(&mut seed) - 0.5) * 1e3).collect();
            let b: Vec<f64> = (0..dim * LEAF).map(|_| (lcg(&mut seed) - 0.5) * 1e-3).collect();
            let mut want = [[0.0; LEAF]; LEAF];
            for (r, row) in want.iter_mut().enumerate() {
                for (t, w) in row.iter_mut().enumerate() {
                    let mut s = 0.0;
                    for c in 0..dim {
                        let d = q[c * LEAF + r] - b[c * LEAF + t];
                        s += d * d;
                    }
                    *w = s;
                }
            }
            let bits = |o: &[[f64; LEAF]; LEAF]| o.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            // Thresholds at, just below and just above some sums; NaN (no lane) and +∞ (all).
            let mut top = [0.0; LEAF];
            for (r, t) in top.iter_mut().enumerate() {
                let w = want[r][r % LEAF];
                *t = match r % 5 {
                    0 => w,
                    1 => f64::from_bits(w.to_bits() - 1),
                    2 => f64::from_bits(w.to_bits() + 1),
                    3 => f64::NAN,
                    _ => f64::INFINITY,
                };
            }
            let want_masks: Vec<u32> =
                (0..LEAF).map(|r| (0..LEAF).fold(0, |m, t| m | (u32::from(want[r][t] <= top[r]) << t))).collect();
            let mut out = Tile::new();
            tile_portable(&q, &b, &top, u32::MAX, &mut out);
            assert_eq!(bits(&out.sums), bits(&want), "portable, D = {dim}");
            assert_eq!(out.masks.to_vec(), want_masks, "portable masks, D = {dim}");
            let mut out = Tile::new();
            assert_eq!(tile(&q, &b, &top, u32::MAX, &mut out), 8);
            assert_eq!(bits(&out.sums), bits(&want), "dispatched, D = {dim}");
            assert_eq!(out.masks.to_vec(), want_masks, "dispatched masks, D = {dim}");
            // Rows 4–7 and 20 only: those groups computed, the others' masks 0.
            let active = 0xF0 | (1 << 20);
            let part = |m: &[u32; LEAF]| {
                (0..LEAF).map(|r| if matches!(r, 4..8 | 20..24) { m[r] } else { 0 }).collect::<Vec<_>>()
            };
            for portable in [true, false] {
                let mut out = Tile { masks: [u32::MAX; LEAF], ..Tile::new() };
                if portable {
                    tile_portable(&q, &b, &top, active, &mut out);
                } else {
                    assert_eq!(tile(&q, &b, &top, active, &mut out), 2);
                }
                let wm: Vec<u32> =
                    (0..LEAF).map(|r| if matches!(r, 4..8 | 20..24) { want_masks[r] } else { 0 }).collect();
                assert_eq!(out.masks.to_vec(), wm, "active groups, D = {dim}");
                assert_eq!(part(&out.masks), wm);
                assert_eq!(bits(&out.sums)[20 * LEAF..24 * LEAF], bits(&want)[20 * LEAF..24 * LEAF]);
            }
        }
    }

    #[test]
    fn sums_at_most_covers_the_last_sum_whose_root_is_at_most_the_distance() {
        let mut seed = 5u64;
        let mut ds: Vec<f64> = (0..20_000).map(|_| (lcg(&mut seed) * 40.0 - 20.0).exp2() * lcg(&mut seed)).collect();
        ds.extend([0.0, 1.0, 2.0, 4.0, 0.5, f64::MIN_POSITIVE, 5e-324, 1e-160, 1e160, 1.3e154, 1.4e154, f64::MAX]);
        ds.extend([1.0f64, 2.0, 1e100].map(|x| x.next_down()));
        for d in ds {
            let s = sums_at_most_walk(d);
            let fast = sums_at_most(d);
            if s == f64::INFINITY {
                assert!((d * 1.0000001).powi(2) == f64::INFINITY, "{d}: +∞ only where the squares overflow");
                assert_eq!(fast, f64::INFINITY);
                continue;
            }
            assert!(s.sqrt() <= d, "{d}: √{s} ≤ d");
            assert!(s.next_up().sqrt() > d, "{d}: the next sum's root is above d");
            // The bound without a root: never below the walk's, at most 8 ulps above.
            assert!(fast >= s && fast.to_bits() - s.to_bits() <= 8, "{d}: {fast} against {s}");
        }
        assert_eq!(sums_at_most(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn coincident_points_split_into_leaves() {
        let p = Points::from_vec("same", 100, 3, vec![2.5; 300]).unwrap();
        let t = BoxTree::build(&p).unwrap();
        assert!(t.leaves() >= 4);
        let (gi, _, _) = by_tree(&p, 7);
        assert_eq!(gi, brute(&p, 7).0);
    }

    #[test]
    fn only_euclidean_and_sqeuclidean_spaces() {
        let p = Points::from_vec("four", 4, 2, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]).unwrap();
        assert!(BoxTree::build(&p.clone().with_metric(Metric::Cityblock).unwrap()).is_none());
        assert!(BoxTree::build(&p).is_some());
    }
}
