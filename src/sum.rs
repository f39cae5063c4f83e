//! Deterministic f64 summation that reproduces NumPy's pairwise `sum` bit for bit.
//!
//! The order depends only on the length, never on threads or blocks, so every mean in
//! faithful is reproducible and equals `np.mean` of the same local values.

/// NumPy's pairwise sum of a contiguous f64 slice (`np.sum`), bit for bit.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    lane_sums([a], |[v]| [v])[0]
}

/// NumPy's pairwise sum of `f(0), f(1), ..., f(len - 1)` (as `np.sum` of that contiguous array).
#[inline]
pub fn pairwise_sum_by(len: usize, f: &impl Fn(usize) -> f64) -> f64 {
    pairwise_sums(len, &|t| [f(t)])[0]
}

/// `K` pairwise sums at once: component c is NumPy's pairwise sum of `(0..len).map(|t| f(t)[c])`
/// bit for bit, in one sweep. The one implementation of NumPy's order in faithful: leaves of
/// fewer than 8 terms add in sequence, leaves of up to 128 in eight lanes combined as a tree,
/// longer runs split at half the length rounded down to a multiple of 8.
#[inline]
pub fn pairwise_sums<const K: usize>(len: usize, f: &impl Fn(usize) -> [f64; K]) -> [f64; K] {
    sums_range(0, len, f)
}

/// NumPy's `PW_BLOCKSIZE`: a run of at most this many terms is a leaf of the pairwise tree.
pub const LEAF: usize = 128;

/// Where NumPy splits a run of n > [`LEAF`] terms: half, rounded down to a multiple of 8 (the
/// one split rule of every walk of the tree here).
#[inline(always)]
pub fn split(n: usize) -> usize {
    let n2 = n / 2;
    n2 - n2 % 8
}

fn sums_range<const K: usize>(start: usize, n: usize, f: &impl Fn(usize) -> [f64; K]) -> [f64; K] {
    if n < 8 {
        let mut res = [0.0; K];
        for t in start..start + n {
            let v = f(t);
            for c in 0..K {
                res[c] += v[c];
            }
        }
        res
    } else if n <= LEAF {
        let mut r = [[0.0f64; 8]; K];
        for j in 0..8 {
            let v = f(start + j);
            for c in 0..K {
                r[c][j] = v[c];
            }
        }
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                let v = f(start + i + j);
                for c in 0..K {
                    r[c][j] += v[c];
                }
            }
            i += 8;
        }
        let mut res = [0.0; K];
        for c in 0..K {
            res[c] = lane_tree(r[c]);
        }
        while i < n {
            let v = f(start + i);
            for c in 0..K {
                res[c] += v[c];
            }
            i += 1;
        }
        res
    } else {
        let n2 = split(n);
        let a = sums_range(start, n2, f);
        let b = sums_range(start + n2, n - n2, f);
        let mut res = [0.0; K];
        for c in 0..K {
            res[c] = a[c] + b[c];
        }
        res
    }
}

/// NumPy's combination of a leaf's eight accumulators: the one tree every vectorised sum uses.
#[inline(always)]
pub fn lane_tree(r: [f64; 8]) -> f64 {
    ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
}

/// Eight f64 lanes: the terms of [`lane_sums`], eight at a time. Every operation is the scalar
/// IEEE operation lane by lane (no fused multiply-add, no reordering), so a lane holds the bits
/// the scalar expression would; the fixed arrays let the compiler use vector instructions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct L8(pub [f64; 8]);

impl L8 {
    /// Every lane `v`.
    #[inline(always)]
    pub fn splat(v: f64) -> L8 {
        L8([v; 8])
    }
    /// `f` lane by lane (inline it: a scalar body the compiler can vectorise).
    #[inline(always)]
    pub fn map(self, f: impl Fn(f64) -> f64) -> L8 {
        let mut v = self.0;
        for x in &mut v {
            *x = f(*x);
        }
        L8(v)
    }
    #[inline(always)]
    fn zip(self, o: L8, f: impl Fn(f64, f64) -> f64) -> L8 {
        let mut v = self.0;
        for (x, &y) in v.iter_mut().zip(&o.0) {
            *x = f(*x, y);
        }
        L8(v)
    }
    /// `|x|`.
    #[inline(always)]
    pub fn abs(self) -> L8 {
        self.map(f64::abs)
    }
    /// `then` where this lane is > 0, else +0.
    #[inline(always)]
    pub fn where_positive(self, then: L8) -> L8 {
        self.zip(then, |c, t| if c > 0.0 { t } else { 0.0 })
    }
}

macro_rules! l8_op {
    ($tr:ident, $f:ident, $op:tt) => {
        impl std::ops::$tr for L8 {
            type Output = L8;
            #[inline(always)]
            fn $f(self, o: L8) -> L8 {
                self.zip(o, |a, b| a $op b)
            }
        }
        impl std::ops::$tr<f64> for L8 {
            type Output = L8;
            #[inline(always)]
            fn $f(self, o: f64) -> L8 {
                self.map(|a| a $op o)
            }
        }
        impl std::ops::$tr<L8> for f64 {
            type Output = L8;
            #[inline(always)]
            fn $f(self, o: L8) -> L8 {
                o.map(|b| self $op b)
            }
        }
    };
}
l8_op!(Add, add, +);
l8_op!(Sub, sub, -);
l8_op!(Mul, mul, *);
l8_op!(Div, div, /);

/// `K` pairwise sums over the columns `cols` (all of one length) element by element: component
/// c is NumPy's pairwise sum of the c-th terms `f` gives for `(cols[0][t], cols[1][t], ...)`,
/// t = 0, 1, ..., bit for bit, as [`pairwise_sums`] gives it. `f` computes eight terms at once
/// ([`L8`]: lane j of each argument is the column's value at t + j), written like the scalar
/// expression; each leaf's eight lanes are NumPy's eight accumulators, so the sums are vector
/// adds in NumPy's order. The last terms of a leaf go through lane 0. Vector instructions are
/// those of the function this is inlined into: call it from a multiversioned function. The tree
/// over the leaves is walked with a fixed stack, so nothing here is out of line.
#[inline(always)]
pub fn lane_sums<const M: usize, const K: usize, F: Fn([L8; M]) -> [L8; K]>(cols: [&[f64]; M], f: F) -> [f64; K] {
    let len = cols.first().map_or(0, |c| c.len());
    assert!(cols.iter().all(|c| c.len() == len), "lane_sums: columns of one length");
    pairwise_leaves(len, |start, n| leaf(&cols, &f, start, n))
}

/// NumPy's pairwise tree over `len` terms with the leaves (start, n ≤ 128) summed by `leaf`:
/// the recursion of `sums_range`, post-order on a fixed stack of (start, n), n = usize::MAX
/// marking "add the last two results". Every split halves n (n > 128), so the depth is under
/// 58 and the stack holds at most 2 frames per level plus one. `leaf` is called at one place.
#[inline(always)]
pub fn pairwise_leaves<const K: usize>(len: usize, leaf: impl Fn(usize, usize) -> [f64; K]) -> [f64; K] {
    const COMBINE: usize = usize::MAX;
    // One leaf (the tiled sweep's calls): no stack to set up.
    if len <= LEAF {
        return leaf(0, len);
    }
    let mut todo = [(0usize, 0usize); 120];
    let mut vals = [[0.0f64; K]; 60];
    let (mut nt, mut nv) = (1usize, 0usize);
    todo[0] = (0, len);
    while nt > 0 {
        nt -= 1;
        let (start, n) = todo[nt];
        if n == COMBINE {
            nv -= 1;
            let b = vals[nv];
            let a = &mut vals[nv - 1];
            for c in 0..K {
                a[c] += b[c];
            }
        } else if n <= LEAF {
            vals[nv] = leaf(start, n);
            nv += 1;
        } else {
            let n2 = split(n);
            todo[nt] = (0, COMBINE);
            todo[nt + 1] = (start + n2, n - n2);
            todo[nt + 2] = (start, n2);
            nt += 3;
        }
    }
    vals[0]
}

/// The leaves of NumPy's pairwise tree over `len` terms in index order, each as
/// `(start, n, combines)`: after the leaf's sum is pushed on a stack of partial sums, the top
/// two are added (`below += top`) `combines` times. Pushing each leaf's sum in this order, however
/// it was found, leaves [`pairwise_leaves`]' result alone on the stack: the same tree.
pub fn leaf_schedule(len: usize) -> Vec<(usize, usize, usize)> {
    fn walk(start: usize, n: usize, out: &mut Vec<(usize, usize, usize)>) {
        if n <= LEAF {
            out.push((start, n, 0));
        } else {
            let n2 = split(n);
            walk(start, n2, out);
            walk(start + n2, n - n2, out);
            out.last_mut().expect("a leaf").2 += 1;
        }
    }
    let mut out = Vec::new();
    walk(0, len, &mut out);
    out
}

/// A leaf of NumPy's pairwise sum (n ≤ 128): in sequence below 8 terms, else eight lanes
/// combined as a tree and the last n mod 8 terms added in sequence. `f` is called at one place
/// only (so that it is inlined however large it is): the full chunks of eight, then the last
/// n mod 8 terms as one chunk padded with zeros (those lanes are dropped). The lanes start at
/// −0, which adding the first chunk turns into the chunk exactly (−0 + x = x for every x, −0
/// included), as NumPy starts them with the first eight terms.
#[inline(always)]
fn leaf<const M: usize, const K: usize, F: Fn([L8; M]) -> [L8; K]>(
    cols: &[&[f64]; M],
    f: &F,
    start: usize,
    n: usize,
) -> [f64; K] {
    let full = if n >= 8 { n - n % 8 } else { 0 };
    let rest = n - full;
    // The leaf's columns checked once and the last n mod 8 terms padded before the loop, so
    // that the lanes stay in registers (as in `lane_sums_avx512`).
    let leaf_cols: [&[f64]; M] = std::array::from_fn(|m| &cols[m][start..start + n]);
    let pad: [L8; M] = std::array::from_fn(|m| {
        let mut v = [0.0; 8];
        v[..rest].copy_from_slice(&leaf_cols[m][full..]);
        L8(v)
    });
    let mut r = [L8::splat(-0.0); K];
    let mut last = [L8::splat(0.0); K];
    let mut at = 0;
    loop {
        let tail = at >= full;
        if tail && rest == 0 {
            break;
        }
        let x: [L8; M] = if tail {
            pad
        } else {
            std::array::from_fn(|m| L8(*<&[f64; 8]>::try_from(&leaf_cols[m][at..at + 8]).expect("eight")))
        };
        let v = f(x);
        if tail {
            last = v;
            break;
        }
        for c in 0..K {
            r[c] = r[c] + v[c];
        }
        at += 8;
    }
    std::array::from_fn(|c| {
        let mut res = if n >= 8 { lane_tree(r[c].0) } else { 0.0 };
        for &v in &last[c].0[..rest] {
            res += v;
        }
        res
    })
}

/// [`lane_sums`] on AVX-512 vectors: `f` is written with the `std::arch` intrinsics on the eight
/// lanes (call this from a `#[target_feature(enable = "avx512f")]` function, whose closures
/// inherit the feature). The leaves, their single call of `f`, the −0 start of the lanes, the
/// zero-padded last chunk and the tree are `leaf`'s, and the intrinsics are the same IEEE
/// operations lane by lane (no fused multiply-add), so the sums are `lane_sums`' bits: the
/// callers' tests hold each version to the scalar sums.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub fn lane_sums_avx512<const M: usize, const K: usize, F>(cols: [&[f64]; M], f: F) -> [f64; K]
where
    F: Fn([std::arch::x86_64::__m512d; M]) -> [std::arch::x86_64::__m512d; K],
{
    use std::arch::x86_64::*;
    let len = cols.first().map_or(0, |c| c.len());
    assert!(cols.iter().all(|c| c.len() == len), "lane_sums: columns of one length");
    let lanes = |v: __m512d| {
        let mut a = [0.0f64; 8];
        // SAFETY: eight f64.
        unsafe { _mm512_storeu_pd(a.as_mut_ptr(), v) };
        a
    };
    pairwise_leaves(len, |start, n| {
        let full = if n >= 8 { n - n % 8 } else { 0 };
        let rest = n - full;
        // The leaf's columns as pointers (bounds checked here, once) and the last n mod 8
        // terms copied into zero-padded chunks before the loop: the loop's body loads from one
        // or the other, keeps the lanes in registers and calls `f` at one place.
        let ptrs: [*const f64; M] = std::array::from_fn(|m| cols[m][start..start + n].as_ptr());
        let pad: [[f64; 8]; M] = std::array::from_fn(|m| {
            let mut v = [0.0f64; 8];
            v[..rest].copy_from_slice(&cols[m][start + full..start + n]);
            v
        });
        let mut r = [_mm512_set1_pd(-0.0); K];
        let mut last = [_mm512_setzero_pd(); K];
        let mut at = 0;
        loop {
            let tail = at >= full;
            if tail && rest == 0 {
                break;
            }
            // SAFETY: a full chunk has at + 8 ≤ full ≤ n values from `ptrs` (n of them);
            // the tail reads its own eight.
            let x: [__m512d; M] = std::array::from_fn(|m| unsafe {
                _mm512_loadu_pd(if tail { pad[m].as_ptr() } else { ptrs[m].add(at) })
            });
            let v = f(x);
            if tail {
                last = v;
                break;
            }
            for c in 0..K {
                r[c] = _mm512_add_pd(r[c], v[c]);
            }
            at += 8;
        }
        std::array::from_fn(|c| {
            let mut res = if n >= 8 { lane_tree(lanes(r[c])) } else { 0.0 };
            for &v in &lanes(last[c])[..rest] {
                res += v;
            }
            res
        })
    })
}

/// Neumaier's compensated sum: error about one rounding of the total, in any length.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Compensated {
    sum: f64,
    c: f64,
}

impl Compensated {
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.c += (self.sum - t) + x;
        } else {
            self.c += (x - t) + self.sum;
        }
        self.sum = t;
    }
    pub fn value(&self) -> f64 {
        self.sum + self.c
    }
}

/// `np.mean`: the pairwise sum divided by the length.
pub fn mean(a: &[f64]) -> f64 {
    pairwise_sum(a) / a.len() as f64
}

/// `Σ_c term(c)` in the order of scipy's compiled `dot_product` and `_row_norms` (the x86-64
/// wheels' loops are vectorised over two lanes): the even and the odd coordinates below
/// `d & !1` each summed in order, the two lane sums added, then the last coordinate when d is
/// odd (`docs/exactness.md`, cosine).
#[inline(always)]
pub fn two_lane_sum(d: usize, term: impl Fn(usize) -> f64) -> f64 {
    let (mut even, mut odd) = (0.0, 0.0);
    let mut c = 0;
    while c + 1 < d {
        even += term(c);
        odd += term(c + 1);
        c += 2;
    }
    let mut h = even + odd;
    if d % 2 == 1 {
        h += term(d - 1);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NumPy's `pairwise_sum` (numpy/_core/src/umath/loops_utils.h.src) transcribed for a
    /// strided array of one f64 lane: the oracle the shared implementation is held to.
    fn numpy_oracle(a: &[f64]) -> f64 {
        let n = a.len();
        if n < 8 {
            let mut res = 0.0;
            for &v in a {
                res += v;
            }
            return res;
        }
        if n <= 128 {
            let mut r: [f64; 8] = a[..8].try_into().unwrap();
            let mut i = 8;
            while i < n - (n % 8) {
                for (j, rj) in r.iter_mut().enumerate() {
                    *rj += a[i + j];
                }
                i += 8;
            }
            let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
            for &v in &a[i..] {
                res += v;
            }
            return res;
        }
        let n2 = n / 2 - (n / 2) % 8;
        numpy_oracle(&a[..n2]) + numpy_oracle(&a[n2..])
    }

    #[test]
    fn sums_follow_numpy_bit_for_bit() {
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 100, 128, 129, 255, 1000, 4097] {
            let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 * 1e-3 + 1e6 * (i % 3) as f64 - 0.3).collect();
            let want = numpy_oracle(&v).to_bits();
            assert_eq!(pairwise_sum(&v).to_bits(), want, "n = {n}");
            assert_eq!(pairwise_sum_by(n, &|i| v[i]).to_bits(), want, "n = {n}");
        }
    }

    #[test]
    fn small_sums_are_exact() {
        assert_eq!(pairwise_sum(&[]), 0.0);
        assert_eq!(pairwise_sum(&[1.0, 2.0, 3.0]), 6.0);
        let v: Vec<f64> = (0..1000).map(f64::from).collect();
        assert_eq!(pairwise_sum(&v), 499_500.0);
    }

    #[test]
    fn fused_sums_equal_separate_sums() {
        for n in [0usize, 3, 8, 9, 100, 128, 129, 1000, 4099] {
            let x: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.731).sin() * 1e3 + 0.1).collect();
            let y: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.377).cos() * 7.0).collect();
            let got = pairwise_sums(n, &|t| [x[t] * x[t], x[t] * y[t], y[t] - x[t]]);
            let sep = |g: &dyn Fn(usize) -> f64| pairwise_sum(&(0..n).map(g).collect::<Vec<_>>());
            assert_eq!(got[0].to_bits(), sep(&|t| x[t] * x[t]).to_bits(), "n = {n}");
            assert_eq!(got[1].to_bits(), sep(&|t| x[t] * y[t]).to_bits(), "n = {n}");
            assert_eq!(got[2].to_bits(), sep(&|t| y[t] - x[t]).to_bits(), "n = {n}");
        }
    }

    #[test]
    fn lane_sums_are_the_pairwise_sums() {
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 100, 128, 129, 255, 256, 1000, 4097, 5000, 70_001] {
            let x: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.731).sin() * 1e3 + 0.1).collect();
            let y: Vec<f64> =
                (0..n).map(|i| if i % 5 == 0 { -0.0 } else { ((i as f64) * 0.377).cos() * 7.0 }).collect();
            let f = |[a, b]: [f64; 2]| [a * a, if a > 0.0 { (a - b) * (a - b) / a } else { 0.0 }, (a - b).abs()];
            let want = pairwise_sums(n, &|t| f([x[t], y[t]]));
            let got = lane_sums([&x, &y], |[a, b]| [a * a, a.where_positive((a - b) * (a - b) / a), (a - b).abs()]);
            for c in 0..3 {
                assert_eq!(got[c].to_bits(), want[c].to_bits(), "n = {n}, term {c}");
            }
            assert_eq!(lane_sums([&y], |[b]| [b])[0].to_bits(), numpy_oracle(&y).to_bits(), "n = {n}");
        }
    }

    #[test]
    fn order_is_pairwise_not_sequential() {
        // 1e16 + 1 + 1 ... : sequential loses the ones, pairwise keeps some of them.
        let mut v = vec![1.0; 256];
        v[0] = 1e16;
        let seq: f64 = v.iter().fold(0.0, |a, b| a + b);
        assert_ne!(pairwise_sum(&v), seq);
    }

    /// Leaf sums pushed and combined by the schedule are the pairwise sum, every tree shape.
    #[test]
    fn the_leaf_schedule_is_the_pairwise_tree() {
        let mut rng = crate::splitmix::SplitMix64(7);
        for len in [0usize, 1, 7, 8, 128, 129, 136, 257, 1000, 5000, 10_007] {
            let v: Vec<f64> = (0..len).map(|_| (rng.uniform() - 0.3) * 1e3).collect();
            let mut stack: Vec<f64> = Vec::new();
            let mut next = 0;
            for (start, n, combines) in leaf_schedule(len) {
                assert_eq!(start, next, "leaves in index order");
                next += n;
                stack.push(pairwise_sum(&v[start..start + n]));
                for _ in 0..combines {
                    let top = stack.pop().unwrap();
                    *stack.last_mut().unwrap() += top;
                }
            }
            assert_eq!(next, len);
            assert_eq!(stack.len(), 1, "one sum left");
            assert_eq!(stack[0].to_bits(), pairwise_sum(&v).to_bits(), "len {len}");
        }
    }
}
