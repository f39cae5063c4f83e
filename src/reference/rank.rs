//! Rank counting for selected pairs: `rank_i(j) = 1 + #{l ≠ i : (d_l, l) < (d_j, j)}`.

use multiversion::multiversion;

use super::key::{Key, key};

/// Up to this many queries per row, each query's count is one vectorised scan of the row;
/// beyond it, one pass places every l among the sorted queries (O(n log m)).
const SCAN_MAX_QUERIES: usize = 48;

/// Scratch for [`count_ranks`], reused across rows.
#[derive(Default)]
pub struct RankScratch {
    sorted: Vec<(Key, usize)>,
    hist: Vec<u32>,
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

/// One pass: each l is placed among the sorted query keys by binary search (with a fast path
/// for l before every query); a prefix sum turns placements into counts. Blocks of the row
/// with no distance up to the largest query's precede no query and are skipped whole by one
/// vectorised test: in a projection's row most points are farther than every query.
pub fn count_by_placement(dist_row: &[f64], i: usize, queries: &[u32], out: &mut [u32], s: &mut RankScratch) {
    let m = queries.len();
    if m == 0 {
        return;
    }
    s.sorted.clear();
    s.sorted.extend(queries.iter().enumerate().map(|(q, &j)| (key(dist_row[j as usize], j as usize), q)));
    s.sorted.sort_unstable();
    s.hist.clear();
    s.hist.resize(m + 1, 0);
    let (lo, hi) = (s.sorted[0].0, s.sorted[m - 1].0);
    let d_hi = dist_row[queries[s.sorted[m - 1].1] as usize];
    const B: usize = 16;
    for (b, block) in dist_row.chunks(B).enumerate() {
        if !block.iter().fold(false, |any, &d| any | (d <= d_hi)) {
            continue;
        }
        for (off, &d) in block.iter().enumerate() {
            let l = b * B + off;
            if d > d_hi || l == i {
                continue;
            }
            let kl = key(d, l);
            // p = #{query keys <= kl}; l precedes the query at sorted position t iff p <= t.
            let p = if kl < lo {
                0
            } else if kl >= hi {
                m
            } else {
                s.sorted.partition_point(|&(kq, _)| kq <= kl)
            };
            s.hist[p] += 1;
        }
    }
    let mut before = 0u32;
    for (t, &(_, q)) in s.sorted.iter().enumerate() {
        before += s.hist[t];
        out[q] = before + 1;
    }
}

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
}
