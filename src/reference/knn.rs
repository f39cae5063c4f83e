//! Stable exact kNN selection for one row.

use super::key::{key, Key};

/// Writes the first `k` of row `i`'s neighbour order (ascending `(d, j)`, self excluded) into
/// `idx` and their distances into `dist`. `dist_row` is `d(i, ·)`; `scratch` is reused.
///
/// Keys are distinct (indices are), so the unstable select and sort are deterministic.
pub fn select_knn(dist_row: &[f64], i: usize, k: usize, scratch: &mut Vec<Key>, idx: &mut [u32], dist: &mut [f64]) {
    let n = dist_row.len();
    debug_assert!(k >= 1 && k < n);
    scratch.clear();
    scratch.extend(dist_row.iter().enumerate().filter(|&(j, _)| j != i).map(|(j, &d)| key(d, j)));
    if k < scratch.len() {
        scratch.select_nth_unstable(k - 1);
    }
    let top = &mut scratch[..k];
    top.sort_unstable();
    for (slot, &kk) in top.iter().enumerate() {
        let j = (kk & 0xFFFF_FFFF) as usize;
        idx[slot] = j as u32;
        dist[slot] = dist_row[j];
    }
}
