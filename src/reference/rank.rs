//! Rank counting for selected pairs: `rank_i(j) = 1 + #{l ≠ i : (d_l, l) < (d_j, j)}`.

use multiversion::multiversion;

use super::buckets::BitBuckets;
use super::key::{Key, key};

/// Up to this many queries per row, each query's count is one vectorised scan of the row;
/// beyond it, one pass places every l among the sorted queries (O(n log m)).
const SCAN_MAX_QUERIES: usize = 48;

/// Scratch for [`count_ranks`], reused across rows.
#[derive(Default)]
pub struct RankScratch {
    sorted: Vec<(Key, usize)>,
    hist: Vec<u32>,
    before: Vec<u32>,
}

/// For each query j in `queries` (distinct, none equal to i), writes `rank_i(j)` into `out`.
/// Both strategies count exactly the same set; they differ only in speed.
pub fn count_ranks(dist_row: &[f64], i: usize, queries: &[u32], out: &mut [u32], s: &mut RankScratch) {
    if queries.len() <= SCAN_MAX_QUERIES {
        count_by_scan(dist_row, i, queries, out);
    } else {
        count_by_placement(dist_row, i, queries, out, s);
    }
}

/// Per query: `#{l < j : d_l ≤ d_j} + #{l > j : d_l < d_j}`, minus self if counted. Both
/// counts are branch-free comparisons that the compiler vectorises.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn count_by_scan(dist_row: &[f64], i: usize, queries: &[u32], out: &mut [u32]) {
    for (slot, &j) in queries.iter().enumerate() {
        let j = j as usize;
        let dj = dist_row[j];
        let before: u64 = dist_row[..j].iter().map(|&d| u64::from(d <= dj)).sum();
        let after: u64 = dist_row[j + 1..].iter().map(|&d| u64::from(d < dj)).sum();
        let di = dist_row[i];
        let self_counted = if i < j { di <= dj } else { di < dj };
        out[slot] = (before + after) as u32 - u32::from(self_counted) + 1;
    }
}

/// One pass: each l is placed among the sorted query keys; a prefix sum turns placements into
/// counts. Blocks of the row with no distance up to the largest query's precede no query and
/// are skipped whole by one vectorised test (in a projection's row most points are farther than
/// every query). The rest are placed in O(1) on average ([`Placement`]).
pub fn count_by_placement(dist_row: &[f64], i: usize, queries: &[u32], out: &mut [u32], s: &mut RankScratch) {
    let m = queries.len();
    if m == 0 {
        return;
    }
    let RankScratch { sorted, hist, before } = s;
    let p = Placement::new(queries.iter().map(|&j| key(dist_row[j as usize], j as usize)), sorted, before);
    let d_hi = p.d_hi();
    // Four interleaved histograms (by l mod 4): consecutive points in the same slot would
    // otherwise chain through one counter's store and load. Slot m (after every query) is
    // never read.
    hist.clear();
    hist.resize(4 * (m + 1), 0);
    const B: usize = 16;
    for (c, block) in dist_row.chunks(B).enumerate() {
        if !block.iter().fold(false, |any, &d| any | (d <= d_hi)) {
            continue;
        }
        for (off, &d) in block.iter().enumerate() {
            let l = c * B + off;
            hist[(l & 3) * (m + 1) + p.place(d, l)] += 1;
        }
    }
    // i itself was placed too when its block passed, which d(i, i) ≤ d_hi ensures (for a
    // distance row d(i, i) = 0); beyond d_hi it went to the unread slot m, if at all.
    if dist_row[i] <= d_hi {
        hist[(i & 3) * (m + 1) + p.place(dist_row[i], i)] -= 1;
    }
    p.counts(|t| (0..4).map(|h| hist[h * (m + 1) + t]).sum::<u32>(), 0, out);
}

/// Query keys sorted, with a lookup table that places a point `(d, l)` among them in O(1) on
/// average: the queries' distance bit patterns (which order like the values) span [lo, hi],
/// cut into `BUCKETS` equal buckets; a table gives the queries before each bucket, and only
/// the few buckets that hold a query compare keys `(d, j)` with those inside it.
pub struct Placement<'a> {
    sorted: &'a [(Key, usize)],
    at: &'a [u32],
    buckets: BitBuckets,
}

impl<'a> Placement<'a> {
    /// The placement of the query keys `keys` (query q's key is the q-th), in the scratch
    /// `sorted` and `at`. At least one key.
    pub fn new(keys: impl Iterator<Item = Key>, sorted: &'a mut Vec<(Key, usize)>, at: &'a mut Vec<u32>) -> Self {
        sorted.clear();
        sorted.extend(keys.enumerate().map(|(q, k)| (k, q)));
        sorted.sort_unstable();
        let m = sorted.len();
        let bits = |k: Key| (k >> 32) as u64;
        let (lo, hi) = (bits(sorted[0].0), bits(sorted[m - 1].0));
        let buckets = BitBuckets::new(lo, hi, BUCKETS.trailing_zeros());
        // at[x + 1]: the queries in buckets before x, for x in 0..=BUCKETS; at[0] (below lo) =
        // 0 and at[BUCKETS + 2] (past the last bucket) = m, so that every (start, end) window
        // exists. Filled by runs between the queries' buckets (no prefix sum over the table).
        at.resize(BUCKETS + 3, 0);
        let mut x = 0;
        for (q, &(k, _)) in sorted.iter().enumerate() {
            let end = buckets.of(bits(k)) + 2;
            if end > x {
                at[x..end].fill(q as u32);
                x = end;
            }
        }
        at[x..].fill(m as u32);
        Placement { sorted, at, buckets }
    }

    /// The largest query distance.
    pub fn d_hi(&self) -> f64 {
        f64::from_bits((self.sorted[self.sorted.len() - 1].0 >> 32) as u64)
    }

    /// The sorted query keys and their query numbers.
    pub fn sorted(&self) -> &[(Key, usize)] {
        self.sorted
    }

    /// `#{query keys <= (d, l)}`: l precedes the query at sorted position t iff that is ≤ t.
    /// No branch but the rare refinement: bits below lo take window 0, past the buckets the
    /// last.
    #[inline(always)]
    pub fn place(&self, d: f64, l: usize) -> usize {
        let b = self.buckets;
        let diff = d.to_bits() as i64 - b.lo as i64;
        let x = ((diff >> b.shift) + 1).clamp(0, BUCKETS as i64 + 1) as usize;
        let (mut p, end) = (self.at[x] as usize, self.at[x + 1] as usize);
        if p < end {
            let kl = key(d, l);
            while p < end && self.sorted[p].0 <= kl {
                p += 1;
            }
        }
        p
    }

    /// Writes each query's rank into `out` (by query number): `base` plus the points placed at
    /// sorted positions up to its own (`placed(t)` were placed at t), plus one.
    pub fn counts(&self, placed: impl Fn(usize) -> u32, base: u32, out: &mut [u32]) {
        let mut before = base;
        for (t, &(_, q)) in self.sorted.iter().enumerate() {
            before += placed(t);
            out[q] = before + 1;
        }
    }
}

/// Buckets of [`count_by_placement`]'s lookup table (a power of two).
const BUCKETS: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// Both strategies agree with a full sort, on a row full of ties.
    #[test]
    fn strategies_agree_with_sorting() {
        let n = 300;
        let row: Vec<f64> = (0..n).map(|j| if j == 17 { 0.0 } else { ((j * 7919) % 13) as f64 }).collect();
        let i = 17;
        let mut order: Vec<usize> = (0..n).filter(|&j| j != i).collect();
        order.sort_by(|&a, &b| row[a].total_cmp(&row[b]).then(a.cmp(&b)));
        let mut rank = vec![0u32; n];
        for (p, &j) in order.iter().enumerate() {
            rank[j] = p as u32 + 1;
        }
        let queries: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).step_by(3).collect();
        let want: Vec<u32> = queries.iter().map(|&j| rank[j as usize]).collect();
        let mut a = vec![0; queries.len()];
        let mut b = vec![0; queries.len()];
        count_by_scan(&row, i, &queries, &mut a);
        count_by_placement(&row, i, &queries, &mut b, &mut RankScratch::default());
        assert_eq!(a, want);
        assert_eq!(b, want);
    }

    /// Placement's bucket table on rows whose distances span many binades, with ties, zeros
    /// and queries at both ends.
    #[test]
    fn placement_agrees_with_scanning_on_wide_rows() {
        let mut rng = crate::splitmix::SplitMix64(0x2545_f491_4f6c_dd1du64);
        let mut next = move || rng.next_u64();
        for case in 0..40 {
            let n = 50 + case * 37;
            let row: Vec<f64> = (0..n)
                .map(|_| match next() % (5 + 20 * (case % 2) as u64) {
                    // Even cases: a fifth +inf (overflowed sums), so queries at +inf too.
                    4 if case % 2 == 0 => f64::INFINITY,
                    0 => 0.0,
                    1 => 1.0,
                    2 => f64::from_bits(next() >> 2) % 1e300,
                    _ => (next() % 1000) as f64 * 1e-3,
                })
                .collect();
            let i = (next() as usize) % n;
            let m = 1 + (next() as usize) % 60.min(n - 1);
            let mut queries: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).collect();
            for t in 0..m {
                let u = t + (next() as usize) % (queries.len() - t);
                queries.swap(t, u);
            }
            queries.truncate(m);
            let mut a = vec![0; m];
            let mut b = vec![0; m];
            count_by_scan(&row, i, &queries, &mut a);
            count_by_placement(&row, i, &queries, &mut b, &mut RankScratch::default());
            assert_eq!(a, b, "case {case}");
        }
    }
}
