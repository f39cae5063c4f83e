//! Deterministic f64 summation that reproduces NumPy's pairwise `sum` bit for bit.
//!
//! The order depends only on the length, never on threads or blocks, so every mean in
//! faithful is reproducible and equals `np.mean` of the same local values.

/// NumPy's pairwise sum of a contiguous f64 slice (`np.sum`), bit for bit.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    pairwise_sum_by(a.len(), &|t| a[t])
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
    } else if n <= 128 {
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
            let r = &r[c];
            res[c] = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
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
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        let a = sums_range(start, n2, f);
        let b = sums_range(start + n2, n - n2, f);
        let mut res = [0.0; K];
        for c in 0..K {
            res[c] = a[c] + b[c];
        }
        res
    }
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
    fn order_is_pairwise_not_sequential() {
        // 1e16 + 1 + 1 ... : sequential loses the ones, pairwise keeps some of them.
        let mut v = vec![1.0; 256];
        v[0] = 1e16;
        let seq: f64 = v.iter().fold(0.0, |a, b| a + b);
        assert_ne!(pairwise_sum(&v), seq);
    }
}
