//! An exact spatial index of a low-dimensional space (a projection, d ≤ 3): its kNN and the
//! ranks of given points with the brute-force reference's results, bit for bit, in about
//! O(k log n) and O(boundary) per row instead of O(n) (`docs/exactness.md` §4b).
//!
//! Why pruning is exact. A point l's distance from i is the reference's f64 value
//! `d = √(((t₀² + t₁²) + t₂²))` with `t_c = fl(x_lc − x_ic)`, each operation rounded once
//! (`distance_row`). Correctly rounded subtraction, squaring of a magnitude, addition of
//! non-negative terms and the square root are each monotone (non-decreasing) in their
//! arguments. So for a node whose points have coordinates in `[lo_c, hi_c]` (the points' own
//! smallest and largest), `fl(lo_c − x_ic) ≤ t_c ≤ fl(hi_c − x_ic)`, and the same operations in
//! the same order on the smallest and largest |t_c| give f64 values `dmin ≤ d ≤ dmax` for every
//! point of the node: bounds on the very bits the reference computes, with no error term. With
//! the node's smallest and largest point index, `key(dmin, min_id) ≤ key(d_l, l) ≤
//! key(dmax, max_id)` (keys order `(d, j)`, ties by index), so a node is skipped or counted
//! whole only when that holds for every point in it; every other comparison is the reference's
//! key comparison on the reference's distance bits.
//!
//! Counting a leaf's points against the queries without their roots. The root is correctly
//! rounded (IEEE 754: Rust's `f64::sqrt` and wasm's `f64.sqrt` alike), hence non-decreasing, so
//! the sums s ≥ 0 whose root is a query's distance d_q form an interval `[lo, hi]` of f64 values
//! around its own sum s_q ([`root_preimage`]: a few ulps wide, walked one ulp at a time, and a
//! row whose walk does not end within [`PREIMAGE_STEPS`] is counted over its full row instead).
//! For a point's sum s_p (the reference's operations before the root, [`KdTree::leaf_sums`]):
//! s_p < lo ⇔ d_p < d_q, and lo ≤ s_p ≤ hi ⇔ d_p = d_q, where the index decides. So a leaf's
//! points are compared with the few queries whose circles cross it in f64 sums, branch-free,
//! with the same outcome as the key comparison on the roots.

use super::box_tree::sums_at_most;
use super::key::{Key, key};
use super::rank::Placement;
use crate::data::{Kernel, Points};

/// The largest dimension the index serves (projections: scatterplots in 1, 2 or 3-D).
pub const MAX_DIM: usize = 3;

/// Points per leaf at most. 64: a leaf crossed by query circles costs its points once per such
/// circle, a node its bounds; measured on T&C at k = 20 (2-D projections of 50-D blobs), 64
/// against 32 counted ranks as fast at n = 5000 and 1.3–1.6× faster at n = 20 000 (wasm and
/// native), finding kNN 5–10 % slower; 128 was no faster.
const LEAF: usize = 64;

/// The most ulps [`root_preimage`] walks on either side (a correctly rounded root maps at most
/// about four consecutive sums to one distance).
const PREIMAGE_STEPS: usize = 8;

/// A k-d tree over a point set of dimension 1 to [`MAX_DIM`], built once per space and shared
/// by every row's queries (read-only).
#[derive(Debug)]
pub struct KdTree {
    dim: usize,
    n: usize,
    /// Coordinates in tree order, one column per dimension (unused ones empty).
    cols: [Vec<f64>; MAX_DIM],
    /// The point index of each tree position, and the tree position of each point.
    ids: Vec<u32>,
    pos: Vec<u32>,
    nodes: Vec<Node>,
    /// The most points in a leaf (more than `LEAF` only where they all coincide).
    max_leaf: usize,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    lo: [f64; MAX_DIM],
    hi: [f64; MAX_DIM],
    /// Tree positions `start..end`.
    start: u32,
    end: u32,
    min_id: u32,
    max_id: u32,
    /// The first child (the second follows it); 0 for a leaf.
    child: u32,
}

/// Scratch of the queries, reused across rows.
#[derive(Default)]
pub struct TreeScratch {
    stack: Vec<(u32, Key)>,
    top: Vec<Key>,
    sorted: Vec<(Key, usize)>,
    at: Vec<u32>,
    hist: Vec<u32>,
    /// One leaf's distances.
    leaf: Vec<f64>,
    /// The sorted queries' sum intervals `[lo, hi]` (their distances' preimages) and indices.
    thr: Vec<(f64, f64, u32)>,
    /// The queries' sums and indices in query order, before they are sorted into `thr`.
    by_query: Vec<(f64, u32)>,
}

impl KdTree {
    /// Builds the tree of `points` (dimension 1 to [`MAX_DIM`]; `None` beyond).
    pub fn build(points: &Points) -> Option<KdTree> {
        let (n, dim) = (points.n(), points.dim());
        // Euclidean coordinates only (a projection's space): the pruning bounds that metric.
        let euclidean = points.has_coordinates() && matches!(points.metric().kernel(), Kernel::Euclidean);
        if !euclidean || dim == 0 || dim > MAX_DIM || n > u32::MAX as usize {
            return None;
        }
        let mut ids: Vec<u32> = (0..n as u32).collect();
        let mut nodes = Vec::with_capacity(2 * n / LEAF + 2);
        nodes.push(Node { lo: [0.0; 3], hi: [0.0; 3], start: 0, end: n as u32, min_id: 0, max_id: 0, child: 0 });
        let mut todo = vec![0usize];
        let mut max_leaf = 0;
        while let Some(at) = todo.pop() {
            let (start, end) = (nodes[at].start as usize, nodes[at].end as usize);
            let part = &mut ids[start..end];
            let (mut lo, mut hi) = ([0.0; MAX_DIM], [0.0; MAX_DIM]);
            for c in 0..dim {
                let col = points.col(c);
                // Comparisons, not `f64::min`/`max`: wasm has no instruction with their NaN
                // rule and calls a library function per point (the coordinates are finite).
                let (a, b) = part.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &j| {
                    let x = col[j as usize];
                    (if x < a { x } else { a }, if x > b { x } else { b })
                });
                (lo[c], hi[c]) = (a, b);
            }
            let (min_id, max_id) = part.iter().fold((u32::MAX, 0), |(a, b), &j| (a.min(j), b.max(j)));
            let node = &mut nodes[at];
            (node.lo, node.hi, node.min_id, node.max_id) = (lo, hi, min_id, max_id);
            let widest = (0..dim).fold(0, |w, c| if hi[c] - lo[c] > hi[w] - lo[w] { c } else { w });
            if part.len() <= LEAF || hi[widest] == lo[widest] {
                // A leaf (all its points coincide on the widest axis: on every axis).
                max_leaf = max_leaf.max(part.len());
                continue;
            }
            let col = points.col(widest);
            let mid = part.len() / 2;
            part.select_nth_unstable_by(mid, |&a, &b| col[a as usize].total_cmp(&col[b as usize]).then(a.cmp(&b)));
            let child = nodes.len();
            nodes[at].child = child as u32;
            let split = (start + mid) as u32;
            let blank = Node { child: 0, ..nodes[at] };
            nodes.push(Node { start: start as u32, end: split, ..blank });
            nodes.push(Node { start: split, end: end as u32, ..blank });
            todo.push(child);
            todo.push(child + 1);
        }
        let cols = std::array::from_fn(|c| {
            if c < dim { ids.iter().map(|&j| points.col(c)[j as usize]).collect() } else { Vec::new() }
        });
        let mut pos = vec![0; n];
        for (p, &j) in ids.iter().enumerate() {
            pos[j as usize] = p as u32;
        }
        Some(KdTree { dim, n, cols, ids, pos, nodes, max_leaf })
    }

    /// Points indexed.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The first `k` of row `i`'s neighbour order (ascending `(d, j)`, self excluded): the same
    /// lists and distance bits as `select_knn` on the reference's distance row. `1 ≤ k < n`.
    pub fn knn(&self, points: &Points, i: usize, k: usize, s: &mut TreeScratch, idx: &mut [u32], dist: &mut [f64]) {
        match self.dim {
            1 => self.knn_d::<1>(points, i, k, s, idx, dist),
            2 => self.knn_d::<2>(points, i, k, s, idx, dist),
            _ => self.knn_d::<3>(points, i, k, s, idx, dist),
        }
    }

    /// For each query j in `queries` (distinct, none equal to i), writes `rank_i(j) = 1 + #{l ≠ i
    /// : (d_l, l) < (d_j, j)}` into `out`, the count of `count_ranks`. Gives up (false, `out`
    /// unspecified) once more than `budget` points were compared one by one: the caller then
    /// counts over the full row, which costs n.
    pub fn count_ranks(
        &self,
        points: &Points,
        i: usize,
        queries: &[u32],
        out: &mut [u32],
        s: &mut TreeScratch,
        budget: usize,
    ) -> bool {
        match self.dim {
            1 => self.ranks_d::<1>(points, i, queries, out, s, budget),
            2 => self.ranks_d::<2>(points, i, queries, out, s, budget),
            _ => self.ranks_d::<3>(points, i, queries, out, s, budget),
        }
    }

    /// The reference's sums of squares `((t₀² + t₁²) + t₂²)` (before the root) of the points at
    /// tree positions `start..start + out.len()`, bit for bit.
    #[inline(always)]
    fn leaf_sums<const D: usize>(&self, a: &[f64; MAX_DIM], start: usize, out: &mut [f64]) {
        let len = out.len();
        let c0 = &self.cols[0][start..start + len];
        for (o, &x) in out.iter_mut().zip(c0) {
            let t = x - a[0];
            *o = t * t;
        }
        for c in 1..D {
            let col = &self.cols[c][start..start + len];
            for (o, &x) in out.iter_mut().zip(col) {
                let t = x - a[c];
                *o += t * t;
            }
        }
    }

    /// `(dmin, dmax)`: bounds on `d(i, l)` for every point l of `node`, as the reference
    /// computes it (see the module docs).
    #[inline(always)]
    fn bounds<const D: usize>(node: &Node, a: &[f64; MAX_DIM]) -> (f64, f64) {
        let (mut smin, mut smax) = (0.0, 0.0);
        for c in 0..D {
            let (lt, ht) = (node.lo[c] - a[c], node.hi[c] - a[c]);
            let near = if lt > 0.0 {
                lt
            } else if ht < 0.0 {
                -ht
            } else {
                0.0
            };
            let far = if -lt > ht { -lt } else { ht };
            if c == 0 {
                (smin, smax) = (near * near, far * far);
            } else {
                smin += near * near;
                smax += far * far;
            }
        }
        (smin.sqrt(), smax.sqrt())
    }

    fn query_point(points: &Points, i: usize) -> [f64; MAX_DIM] {
        let mut a = [0.0; MAX_DIM];
        a[..points.dim()].copy_from_slice(points.row(i));
        a
    }

    fn knn_d<const D: usize>(
        &self,
        points: &Points,
        i: usize,
        k: usize,
        s: &mut TreeScratch,
        idx: &mut [u32],
        dist: &mut [f64],
    ) {
        debug_assert!(k >= 1 && k < self.n);
        let a = Self::query_point(points, i);
        let TreeScratch { stack, top, leaf, .. } = s;
        leaf.resize(self.max_leaf, 0.0);
        // `top`: the k smallest keys so far, ascending (k is small: insertion).
        top.clear();
        let mut worst = Key::MAX;
        // Every sum whose root could enter is at most this (`sums_at_most` of the worst kept
        // distance): the other points of a leaf skip the root and the key.
        let mut worst_sum = f64::INFINITY;
        stack.clear();
        stack.push((0, 0));
        while let Some((at, lower)) = stack.pop() {
            if lower >= worst {
                continue;
            }
            let node = &self.nodes[at as usize];
            if node.child == 0 {
                let (start, end) = (node.start as usize, node.end as usize);
                let sums = &mut leaf[..end - start];
                self.leaf_sums::<D>(&a, start, sums);
                if top.len() < k {
                    // Until k are held every point enters: the leaf's keys at once, then the
                    // k smallest of all held (keys are distinct: the same set as one by one).
                    top.extend(
                        sums.iter()
                            .zip(&self.ids[start..end])
                            .filter(|&(_, &l)| l as usize != i)
                            .map(|(&s, &l)| key(s.sqrt(), l as usize)),
                    );
                    if top.len() >= k {
                        top.select_nth_unstable(k - 1);
                        top.truncate(k);
                        top.sort_unstable();
                        worst = top[k - 1];
                        worst_sum = sums_at_most(f64::from_bits((worst >> 32) as u64));
                    }
                    continue;
                }
                for (&s, &l) in sums.iter().zip(&self.ids[start..end]) {
                    if !(s <= worst_sum) || l as usize == i {
                        continue;
                    }
                    let kk = key(s.sqrt(), l as usize);
                    if kk < worst {
                        let at = top.partition_point(|&t| t < kk);
                        if top.len() == k {
                            top.pop();
                        }
                        top.insert(at, kk);
                        if top.len() == k {
                            worst = top[k - 1];
                            worst_sum = sums_at_most(f64::from_bits((worst >> 32) as u64));
                        }
                    }
                }
                continue;
            }
            // The nearer child last, so it is searched first.
            let (c0, c1) = (node.child, node.child + 1);
            let lower_of = |c: u32| {
                let n = &self.nodes[c as usize];
                key(Self::bounds::<D>(n, &a).0, n.min_id as usize)
            };
            let (k0, k1) = (lower_of(c0), lower_of(c1));
            if k0 <= k1 {
                stack.push((c1, k1));
                stack.push((c0, k0));
            } else {
                stack.push((c0, k0));
                stack.push((c1, k1));
            }
        }
        debug_assert_eq!(top.len(), k);
        for (slot, &kk) in top.iter().enumerate() {
            idx[slot] = (kk & 0xFFFF_FFFF) as u32;
            dist[slot] = f64::from_bits((kk >> 32) as u64);
        }
    }

    fn ranks_d<const D: usize>(
        &self,
        points: &Points,
        i: usize,
        queries: &[u32],
        out: &mut [u32],
        s: &mut TreeScratch,
        budget: usize,
    ) -> bool {
        let m = queries.len();
        if m == 0 {
            return true;
        }
        let a = Self::query_point(points, i);
        let TreeScratch { stack, sorted, at, hist, leaf, thr, by_query, .. } = s;
        leaf.resize(self.max_leaf, 0.0);
        // s(i, j) and d(i, j) as the reference computes them: x_j − x_i, coordinate by coordinate.
        let query_sum = |j: u32| {
            let xj = points.row(j as usize);
            let t = xj[0] - a[0];
            let mut sum = t * t;
            for c in 1..D {
                let t = xj[c] - a[c];
                sum += t * t;
            }
            sum
        };
        by_query.clear();
        by_query.extend(queries.iter().map(|&j| (query_sum(j), j)));
        let p = Placement::new(by_query.iter().map(|&(sq, j)| key(sq.sqrt(), j as usize)), sorted, at);
        thr.clear();
        for &(_, q) in p.sorted() {
            let (sq, j) = by_query[q];
            match root_preimage(sq) {
                Some((lo, hi)) => thr.push((lo, hi, j)),
                None => return false,
            }
        }
        // A node whose smallest and largest possible keys fall between the same two queries
        // (before the first, or after the last) counts in that slot whole; a leaf crossed by
        // query circles slo..shi counts its points below each of them.
        hist.clear();
        hist.resize(m + 1, 0);
        let mut compared = 0usize;
        let own = self.pos[i] as usize;
        let own_key = key(0.0, i);
        stack.clear();
        stack.push((0, 0));
        while let Some((at, _)) = stack.pop() {
            let node = &self.nodes[at as usize];
            let (dmin, dmax) = Self::bounds::<D>(node, &a);
            let (start, end) = (node.start as usize, node.end as usize);
            // i itself (d(i, i) = 0) is no neighbour of its own.
            let own_here = (start..end).contains(&own);
            let slo = p.place(dmin, node.min_id as usize);
            let shi = p.place(dmax, node.max_id as usize);
            if slo == shi {
                hist[slo] += (end - start - usize::from(own_here)) as u32;
                continue;
            }
            if node.child != 0 {
                stack.push((node.child + 1, 0));
                stack.push((node.child, 0));
                continue;
            }
            let sums = &mut leaf[..end - start];
            self.leaf_sums::<D>(&a, start, sums);
            let ids = &self.ids[start..end];
            // Every point's slot lies in slo..=shi; c points precede the query at sorted position t.
            let mut before = 0u32;
            for (t, &(lo, hi, j)) in thr.iter().enumerate().take(shi).skip(slo) {
                let mut c = count_below(sums, lo);
                if count_at_most(sums, hi) != c {
                    // Points at the query's own distance: the index decides.
                    c += sums.iter().zip(ids).filter(|&(&x, &l)| lo <= x && x <= hi && l < j).count() as u32;
                }
                if own_here && own_key < p.sorted()[t].0 {
                    c -= 1;
                }
                hist[t] += c - before;
                before = c;
            }
            hist[shi] += (end - start - usize::from(own_here)) as u32 - before;
            compared += end - start;
            if compared > budget {
                return false;
            }
        }
        p.counts(|t| hist[t], 0, out);
        true
    }
}

/// The f64 sums s ≥ 0 whose root is `fl(√s0)` (s0 ≥ 0): an interval, as the root is monotone,
/// found by walking one ulp at a time from `s0`; `None` when a side is wider than
/// [`PREIMAGE_STEPS`] ulps (never, for a correctly rounded root: the caller then counts the row
/// without the index).
pub fn root_preimage(s0: f64) -> Option<(f64, f64)> {
    let d = s0.sqrt();
    // Non-negative f64s order like their bit patterns: one ulp is one step of the bits.
    let (down, up) = (|x: f64| f64::from_bits(x.to_bits() - 1), |x: f64| f64::from_bits(x.to_bits() + 1));
    let (mut lo, mut hi) = (s0, s0);
    let mut steps = 0;
    while lo > 0.0 && down(lo).sqrt() == d {
        lo = down(lo);
        steps += 1;
        if steps > PREIMAGE_STEPS {
            return None;
        }
    }
    steps = 0;
    while hi < f64::MAX && up(hi).sqrt() == d {
        hi = up(hi);
        steps += 1;
        if steps > PREIMAGE_STEPS {
            return None;
        }
    }
    Some((lo, hi))
}

/// Values below `lo` (branch-free: vectorised).
#[inline(always)]
fn count_below(v: &[f64], lo: f64) -> u32 {
    v.iter().map(|&x| u32::from(x < lo)).sum()
}

/// Values at most `hi`.
#[inline(always)]
fn count_at_most(v: &[f64], hi: f64) -> u32 {
    v.iter().map(|&x| u32::from(x <= hi)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{RankScratch, count_ranks, distance_row, select_knn};
    use crate::splitmix::SplitMix64;

    /// Every row's kNN and the ranks of a spread of queries, against the brute-force reference.
    fn check(points: &Points, k: usize) {
        let n = points.n();
        let tree = KdTree::build(points).unwrap();
        let mut s = TreeScratch::default();
        let (mut row, mut keys) = (vec![0.0; n], Vec::new());
        for i in 0..n {
            distance_row(points, i, &mut row);
            let (mut wi, mut wd) = (vec![0; k], vec![0.0; k]);
            select_knn(&row, i, k, &mut keys, &mut wi, &mut wd);
            let (mut gi, mut gd) = (vec![0; k], vec![0.0; k]);
            tree.knn(points, i, k, &mut s, &mut gi, &mut gd);
            assert_eq!(gi, wi, "kNN of row {i}");
            assert_eq!(
                gd.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                wd.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
            );
            let queries: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).step_by(1 + n / 40).collect();
            let mut want = vec![0; queries.len()];
            count_ranks(&row, i, &queries, &mut want, &mut RankScratch::default());
            let mut got = vec![0; queries.len()];
            assert!(tree.count_ranks(points, i, &queries, &mut got, &mut s, usize::MAX));
            assert_eq!(got, want, "ranks of row {i}");
        }
    }

    #[test]
    fn the_index_is_the_reference_on_ties_and_generic_data() {
        let mut rng = SplitMix64(0x51ab_1e5e_ed00_0001);
        let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        for dim in 1..=3 {
            // A lattice (every distance tied many times), duplicates, and generic points.
            let lattice: Vec<f64> = (0..300 * dim).map(|v| ((v * 7) % 5) as f64).collect();
            check(&Points::from_vec("lattice", 300, dim, lattice).unwrap(), 7);
            let generic: Vec<f64> = (0..400 * dim).map(|_| unit() * 10.0 - 5.0).collect();
            check(&Points::from_vec("generic", 400, dim, generic).unwrap(), 12);
            let same = vec![1.5; 50 * dim];
            check(&Points::from_vec("same", 50, dim, same).unwrap(), 49);
        }
        check(&Points::from_vec("two", 2, 2, vec![0.0, 0.0, 0.0, 0.0]).unwrap(), 1);
        // A deeper tree (many leaves, whole nodes counted between query circles).
        let wide: Vec<f64> = (0..3000 * 2).map(|_| unit() * 100.0).collect();
        check(&Points::from_vec("wide", 3000, 2, wide).unwrap(), 20);
    }

    /// Points on rings around a centre: their distances from it agree to an ulp or two, so many
    /// have different sums of squares but the same root (a preimage of several sums), where the
    /// leaf count's interval test and the index decide.
    #[test]
    fn the_index_is_the_reference_where_different_sums_share_a_root() {
        let mut rng = SplitMix64(0x51ab_1e5e_ed00_0002);
        let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let mut v = vec![0.0, 0.0];
        for r in [1.7, 1.7, 3.25, 1e-150, 1e150] {
            for _ in 0..150 {
                let a = unit() * std::f64::consts::TAU;
                v.extend([r * a.cos(), r * a.sin()]);
            }
        }
        let n = v.len() / 2;
        let points = Points::from_vec("rings", n, 2, v).unwrap();
        let mut row = vec![0.0; n];
        distance_row(&points, 0, &mut row);
        let ring: Vec<f64> = row[1..151].to_vec();
        let distinct = |f: &dyn Fn(f64) -> u64| {
            let mut b: Vec<u64> = ring.iter().map(|&d| f(d)).collect();
            b.sort_unstable();
            b.dedup();
            b.len()
        };
        // Few distinct roots, each shared by several points (the case this test is for).
        assert!(distinct(&|d| d.to_bits()) < 20, "the ring's distances are near-ties");
        check(&points, 30);
    }

    #[test]
    fn root_preimage_is_the_interval_of_sums_with_that_root() {
        let mut rng = SplitMix64(0x51ab_1e5e_ed00_0003);
        let mut samples = vec![0.0, f64::from_bits(1), f64::MIN_POSITIVE, 1.0, 2.0, 4.0, 1e-300, 1e300, f64::MAX];
        for _ in 0..20_000 {
            // Every binade: random exponent and mantissa bits of a positive finite f64.
            let bits = rng.next_u64() % 0x7FEF_FFFF_FFFF_FFFF;
            samples.push(f64::from_bits(bits));
        }
        let (down, up) = (|x: f64| f64::from_bits(x.to_bits() - 1), |x: f64| f64::from_bits(x.to_bits() + 1));
        for s0 in samples {
            let d = s0.sqrt();
            let (lo, hi) = root_preimage(s0).expect("a correctly rounded root's preimage is a few ulps");
            assert!(lo <= s0 && s0 <= hi);
            assert_eq!((lo.sqrt(), hi.sqrt()), (d, d), "{s0:e}");
            assert!(lo == 0.0 || down(lo).sqrt() < d, "{s0:e}: nothing below lo has the root");
            assert!(hi == f64::MAX || up(hi).sqrt() > d, "{s0:e}: nothing above hi has the root");
        }
    }

    #[test]
    fn a_budget_stops_the_count() {
        let v: Vec<f64> = (0..2000).map(|t| (t as f64 * 0.37).sin() * 100.0).collect();
        let p = Points::from_vec("p", 1000, 2, v).unwrap();
        let tree = KdTree::build(&p).unwrap();
        let queries: Vec<u32> = (1..1000).step_by(7).collect();
        let mut out = vec![0; queries.len()];
        let mut s = TreeScratch::default();
        assert!(!tree.count_ranks(&p, 0, &queries, &mut out, &mut s, 10));
        assert!(tree.count_ranks(&p, 0, &queries, &mut out, &mut s, usize::MAX));
        assert!(KdTree::build(&Points::from_vec("4d", 2, 4, vec![0.0; 8]).unwrap()).is_none());
    }
}
