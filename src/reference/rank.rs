//! Rank counting for selected pairs.

use super::key::{key, Key};

/// For each query j in `queries`, writes `rank_i(j) = 1 + #{l ≠ i : (d_l, l) < (d_j, j)}` into
/// `out` (same order as `queries`). One pass over the row: each l is placed among the sorted
/// query keys by binary search, and a prefix sum turns those placements into counts.
pub fn count_ranks(dist_row: &[f64], i: usize, queries: &[u32], out: &mut [u32], sorted: &mut Vec<(Key, usize)>, hist: &mut Vec<u32>) {
    let m = queries.len();
    if m == 0 {
        return;
    }
    sorted.clear();
    sorted.extend(queries.iter().enumerate().map(|(q, &j)| (key(dist_row[j as usize], j as usize), q)));
    sorted.sort_unstable();
    hist.clear();
    hist.resize(m + 1, 0);
    let (lo, hi) = (sorted[0].0, sorted[m - 1].0);
    for (l, &d) in dist_row.iter().enumerate() {
        if l == i {
            continue;
        }
        let kl = key(d, l);
        // p = number of query keys <= kl; l is before query q (sorted position s) iff p <= s.
        let p = if kl < lo {
            0
        } else if kl >= hi {
            m
        } else {
            sorted.partition_point(|&(kq, _)| kq <= kl)
        };
        hist[p] += 1;
    }
    let mut before = 0u32;
    for (s, &(_, q)) in sorted.iter().enumerate() {
        before += hist[s];
        out[q] = before + 1;
    }
}
