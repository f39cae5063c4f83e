//! Stable exact kNN selection for one row.

use multiversion::multiversion;

use super::key::{Key, key};

/// Writes the first `k` of row `i`'s neighbour order (ascending `(d, j)`, self excluded) into
/// `idx` and their distances into `dist`. `dist_row` is `d(i, ·)`; `top` is reused scratch.
///
/// One pass in index order keeps the k smallest keys seen so far (the first k of `top`), with
/// the candidates met since the last compaction appended after them. Since j only grows, a
/// later j with a distance equal to the current k-th has a larger key, so a candidate must have
/// a strictly smaller distance than the k-th of the last compaction: on generic data almost
/// every j is rejected by a single f64 comparison. A compaction (when 3k more candidates are
/// waiting: fewer, larger selections cut an lcmc run, mostly kNN, by 8–10 % of its CPU time at
/// k = 44 and 100 on the golden blobs_2000 set, and left it unchanged at k = 10)
/// selects the k smallest keys in linear time; keys are unique, so the result is the same as
/// sorting the whole row.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn select_knn(dist_row: &[f64], i: usize, k: usize, top: &mut Vec<Key>, idx: &mut [u32], dist: &mut [f64]) {
    let n = dist_row.len();
    debug_assert!(k >= 1 && k < n);
    top.clear();
    let mut j = 0;
    while top.len() < k {
        if j != i {
            top.push(key(dist_row[j], j));
        }
        j += 1;
    }
    let compact = |top: &mut Vec<Key>| {
        if top.len() > k {
            top.select_nth_unstable(k - 1);
            top.truncate(k);
        }
        f64::from_bits((*top.iter().max().expect("k >= 1") >> 32) as u64)
    };
    let mut worst = compact(top);
    let limit = 4 * k.max(16);
    // Blocks of 16 are first tested as a whole (vectorised): most blocks hold no candidate.
    const B: usize = 16;
    let mut start = j;
    while start < n {
        let end = (start + B).min(n);
        let block = &dist_row[start..end];
        if block.iter().fold(false, |any, &d| any | (d < worst)) {
            for (off, &d) in block.iter().enumerate() {
                let jj = start + off;
                if d < worst && jj != i {
                    top.push(key(d, jj));
                }
            }
            if top.len() >= limit {
                worst = compact(top);
            }
        }
        start = end;
    }
    compact(top);
    top.sort_unstable();
    for (slot, &kk) in top.iter().enumerate() {
        let jj = (kk & 0xFFFF_FFFF) as usize;
        idx[slot] = jj as u32;
        dist[slot] = dist_row[jj];
    }
}

/// Every row's first k neighbours and distances by the reference (full distance rows and
/// [`select_knn`]): the tests' oracle for the indexes' lists.
#[cfg(test)]
pub(crate) fn rows_knn(points: &crate::data::Points, k: usize) -> (Vec<u32>, Vec<f64>) {
    let n = points.n();
    let (mut idx, mut dist) = (vec![0u32; n * k], vec![0.0; n * k]);
    let (mut row, mut top) = (vec![0.0; n], Vec::new());
    for i in 0..n {
        super::distance_row(points, i, &mut row);
        select_knn(&row, i, k, &mut top, &mut idx[i * k..(i + 1) * k], &mut dist[i * k..(i + 1) * k]);
    }
    (idx, dist)
}
