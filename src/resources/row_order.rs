//! One row's full neighbour order: every j ≠ i ascending by `(d(i, j), j)`, the reference's
//! order (ties by index), as a list of indices.
//!
//! A bucket sort on the distances' bit patterns (for finite non-negative f64 they order like
//! the values): the row's range `[min, max]` of bits is cut into two to eight equal buckets per
//! entry, the (bits, index) entries are counted and scattered into them in ascending index
//! order (so the scatter is stable and ties stay by index), a bucket with many entries (a
//! skewed or heavy-tailed row) gets the same step on its own range, and one stable insertion
//! pass over the row finishes it, each entry moving only within its bucket. Equal distances
//! need no work, and the result is the unique order of the distinct keys `(d, j)`. Against
//! the 128-bit MSD radix sort of `(d, j)` keys (the former way) it moves 12 bytes per entry
//! instead of 16 in two contiguous passes, with no per-bucket calls.

use crate::reference::BitBuckets;

/// Buckets from this size up get their own range before the final insertion pass.
const BIG: usize = 24;

/// Scratch reused across rows: the entries' bit patterns, bucket counts and the scatter's
/// targets.
#[derive(Default)]
pub struct RowOrder {
    keys: Vec<u64>,
    counts: Vec<u32>,
    tmp_keys: Vec<u64>,
    tmp: Vec<u32>,
}

impl RowOrder {
    /// Fills `order` with every j ≠ i of the row `dist` (`dist[j] = d(i, j)`), ascending by
    /// `(d, j)`.
    pub fn sort(&mut self, dist: &[f64], i: usize, order: &mut Vec<u32>) {
        self.sort_bits(dist.len(), i, order, |j| {
            let d = dist[j];
            debug_assert!(d >= 0.0 && d.is_sign_positive(), "distances are non-negative");
            d.to_bits()
        });
    }

    /// [`RowOrder::sort`] for integer keys: `keys[j]` orders j, ties by index.
    pub fn sort_keys(&mut self, keys: &[u32], i: usize, order: &mut Vec<u32>) {
        self.sort_bits(keys.len(), i, order, |j| u64::from(keys[j]));
    }

    /// The rank (from 1) of every j ≠ i by `(keys[j], j)` into `rank[j]` (`rank[i] = 0`), by
    /// counting: one count, one prefix sum over the key range and one pass in index order (which
    /// keeps ties by index). Only when the range (`max_key` bounds every key: the row's largest is
    /// best) is small against the
    /// row: else nothing is written and the answer is false.
    pub fn rank_keys(&mut self, keys: &[u32], i: usize, max_key: u32, rank: &mut [u32]) -> bool {
        let n = keys.len();
        if (max_key as usize) > COUNTING_RANGE * n.max(64) {
            return false;
        }
        assert!(i < n && n <= u32::MAX as usize && rank.len() >= n, "row {i} of {n}");
        debug_assert!(keys.iter().all(|&k| k <= max_key), "a key above its bound");
        // A power-of-two table indexed by `key & mask` (the key itself: every key ≤ max_key ≤
        // mask), so that no access needs a bounds check; only 0 ..= max_key is used.
        let size = (max_key as usize + 1).next_power_of_two();
        if self.counts.len() < size {
            self.counts.resize(size, 0);
        }
        let (counts, mask) = (&mut self.counts[..size], size - 1);
        counts[..=max_key as usize].fill(0);
        for &k in keys {
            counts[k as usize & mask] += 1;
        }
        counts[keys[i] as usize & mask] -= 1;
        // Exclusive prefix from 1: counts[k] becomes the rank of key k's first entry.
        let mut c = 1u32;
        for v in counts[..=max_key as usize].iter_mut() {
            let t = *v;
            *v = c;
            c += t;
        }
        for (r, &k) in rank[..i].iter_mut().zip(&keys[..i]) {
            let at = &mut counts[k as usize & mask];
            *r = *at;
            *at += 1;
        }
        rank[i] = 0;
        for (r, &k) in rank[i + 1..n].iter_mut().zip(&keys[i + 1..]) {
            let at = &mut counts[k as usize & mask];
            *r = *at;
            *at += 1;
        }
        true
    }

    /// The bucket sort of every j ≠ i of a row of n by the order-preserving bits `bits(j)`.
    fn sort_bits(&mut self, n: usize, i: usize, order: &mut Vec<u32>, bits: impl Fn(usize) -> u64) {
        assert!(n <= u32::MAX as usize, "row indices fit in u32");
        order.clear();
        order.extend((0..n as u32).filter(|&j| j as usize != i));
        self.keys.clear();
        self.keys.extend((0..i.min(n)).chain(i + 1..n).map(bits));
        self.tmp.resize(order.len(), 0);
        self.tmp_keys.resize(order.len(), 0);
        distribute(&mut self.keys, order, &mut self.tmp_keys, &mut self.tmp, &mut self.counts);
        insertion(&mut self.keys, order);
    }
}

/// Key ranges up to this many times the row's length are counted rather than bucket-sorted.
const COUNTING_RANGE: usize = 4;

/// Moves the entries `(keys, v)` (ascending by index on entry) into buckets of their key
/// range, ascending by bucket and stably within one, so that a final insertion pass moves
/// each entry only within its bucket. Buckets with many entries are distributed again.
fn distribute(keys: &mut [u64], v: &mut [u32], tmp_keys: &mut [u64], tmp: &mut [u32], counts: &mut Vec<u32>) {
    if v.len() < BIG {
        return;
    }
    let (lo, hi) = keys.iter().fold((u64::MAX, 0), |(lo, hi), &b| (lo.min(b), hi.max(b)));
    if lo == hi {
        return; // all equal: already by index
    }
    // Two to eight buckets per entry (four to eight up to 2^14 entries, whose counts stay in a
    // core's cache): few buckets hold two entries, so the insertion pass rarely moves one and
    // its comparisons are predictable (the f64 co-ranking pass at n = 8000 ran ~20 % faster than
    // with one to two per entry, alternating the two builds on a loaded machine; no receipt).
    let bits = usize::BITS - v.len().leading_zeros();
    let by = BitBuckets::new(lo, hi, bits + if bits <= 14 { 2 } else { 1 });
    let buckets = by.of(hi) + 1;
    counts.clear();
    counts.resize(buckets + 1, 0);
    for &b in keys.iter() {
        counts[by.of(b) + 1] += 1;
    }
    for b in 1..=buckets {
        counts[b] += counts[b - 1];
    }
    // counts[b] is bucket b's start; after the scatter it is bucket b's end.
    let (tmp_keys, tmp) = (&mut tmp_keys[..v.len()], &mut tmp[..v.len()]);
    for (&b, &j) in keys.iter().zip(v.iter()) {
        let c = &mut counts[by.of(b)];
        tmp_keys[*c as usize] = b;
        tmp[*c as usize] = j;
        *c += 1;
    }
    keys.copy_from_slice(tmp_keys);
    v.copy_from_slice(tmp);
    // Rare (skewed rows): a bucket with many entries gets its own range.
    let mut big: Vec<(usize, usize)> = Vec::new();
    let mut start = 0usize;
    for &end in &counts[..buckets] {
        if end as usize - start >= BIG {
            big.push((start, end as usize));
        }
        start = end as usize;
    }
    for (s, e) in big {
        distribute(&mut keys[s..e], &mut v[s..e], &mut tmp_keys[s..e], &mut tmp[s..e], counts);
    }
}

/// Stable insertion sort by key: equal keys keep their order (ascending index).
fn insertion(keys: &mut [u64], v: &mut [u32]) {
    for t in 1..v.len() {
        let b = keys[t];
        if keys[t - 1] <= b {
            continue;
        }
        let j = v[t];
        let mut s = t;
        while s > 0 && keys[s - 1] > b {
            keys[s] = keys[s - 1];
            v[s] = v[s - 1];
            s -= 1;
        }
        keys[s] = b;
        v[s] = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(dist: &[f64], i: usize) {
        let mut want: Vec<u32> = (0..dist.len() as u32).filter(|&j| j as usize != i).collect();
        want.sort_by(|&a, &b| dist[a as usize].total_cmp(&dist[b as usize]).then(a.cmp(&b)));
        let mut got = Vec::new();
        RowOrder::default().sort(dist, i, &mut got);
        assert_eq!(got, want, "row {i} of {} distances", dist.len());
    }

    #[test]
    fn orders_like_the_keys() {
        let mut rng = crate::splitmix::SplitMix64(0x9e37_79b9_7f4a_7c15u64);
        let mut next = move || rng.next_u64();
        let mut unit = || (next() >> 11) as f64 / (1u64 << 53) as f64;
        let smooth: Vec<f64> = (0..20_000).map(|_| (unit() * 40.0).sqrt() + 1.0).collect();
        check(&smooth, 0);
        check(&smooth, 19_999);
        check(&smooth, 777);
        // Ties: few distinct values, and zeros (duplicate points) among them.
        let tied: Vec<f64> = (0..5000).map(|_| [0.0, 1.0, 2.5, 2.5, 7.0][(unit() * 5.0) as usize]).collect();
        check(&tied, 3);
        // Heavy tail and outliers: most of the row in a few buckets of the whole range.
        let heavy: Vec<f64> = (0..8000).map(|_| (1.0 / (unit() + 1e-12)).powi(3)).collect();
        check(&heavy, 10);
        let mut outlier = smooth[..3000].to_vec();
        outlier[5] = f64::MAX;
        outlier[6] = f64::INFINITY;
        outlier[7] = 5e-324;
        check(&outlier, 8);
        // Every entry equal, tiny rows.
        check(&[3.0; 100], 50);
        check(&[0.0, 0.0, 0.0], 1);
        check(&[0.0, 2.0], 0);
        check(&[1.0 + f64::EPSILON, 1.0, 1.0 + 2.0 * f64::EPSILON, 1.0], 2);
    }

    /// Integer keys order like their values, ties by index, bucket-sorted or (a small range)
    /// ranked by counting.
    #[test]
    fn orders_integer_keys() {
        let mut rng = crate::splitmix::SplitMix64(3);
        for (n, range) in [(5000usize, 40u32), (5000, 19_602), (3000, 3_000_000), (2, 1), (3, 0), (100, u32::MAX)] {
            let keys: Vec<u32> =
                (0..n).map(|_| if range == 0 { 0 } else { (rng.next_u64() % (u64::from(range) + 1)) as u32 }).collect();
            for i in [0, n / 2, n - 1] {
                let mut want: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).collect();
                want.sort_by_key(|&j| (keys[j as usize], j));
                let mut got = Vec::new();
                RowOrder::default().sort_keys(&keys, i, &mut got);
                assert_eq!(got, want, "n {n}, range {range}, row {i}");
                let mut want_rank = vec![0u32; n];
                for (p, &j) in want.iter().enumerate() {
                    want_rank[j as usize] = p as u32 + 1;
                }
                let max = keys.iter().copied().max().unwrap();
                for bound in [max, max.saturating_add(1000).max(range)] {
                    let mut rank = vec![7u32; n];
                    let counted = RowOrder::default().rank_keys(&keys, i, bound, &mut rank);
                    assert_eq!(counted, bound as usize <= COUNTING_RANGE * n.max(64), "n {n}, bound {bound}");
                    if counted {
                        assert_eq!(rank, want_rank, "n {n}, range {range}, row {i}, bound {bound}");
                    }
                }
            }
        }
    }
}
