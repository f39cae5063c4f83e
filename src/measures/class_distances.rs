//! `ivm`'s distance-based class separation measures, from the projection's exact distances
//! (the reference distances of `docs/exactness.md`, each pair once: row i's pairs j > i):
//!
//! - `dunn` (Dunn 1974): the smallest distance between two points of different classes over
//!   the largest class diameter (the largest distance between two points of one class);
//! - `average_between_within`: the mean distance over the pairs of different classes over the
//!   mean distance over the pairs of one class.
//!
//! Minima and maxima do not depend on the order they are taken in; the sums are NumPy's
//! pairwise sums of each row's terms, then of the rows' sums in row order, so the values are
//! the same bits for any thread count.

use rayon::prelude::*;

use super::support::pairwise::undefined;
use crate::data::{Labels, Points};
use crate::error::Result;
use crate::reference::distance_row_from;
use crate::sum::pairwise_sum_by;

const ID: &str = "ivm";

/// Runs `f(i, d)` for every row i with `d[t] = d(i, i + 1 + t)`, in parallel, keeping row order.
fn upper_rows<T: Send>(y: &Points, f: impl Fn(usize, &[f64]) -> T + Sync + Send) -> Vec<T> {
    let n = y.n();
    (0..n)
        .into_par_iter()
        .map_init(Vec::new, |row, i| {
            row.resize(n - i - 1, 0.0);
            if i + 1 < n {
                distance_row_from(y, i, i + 1, row);
            }
            f(i, row)
        })
        .collect()
}

/// Dunn's index: `min_{c(i) ≠ c(j)} d(i,j) / max_{c(i) = c(j)} d(i,j)`.
pub(super) fn dunn(y: &Points, labels: &Labels) -> Result<f64> {
    let codes = labels.codes();
    let per_row = upper_rows(y, |i, d| {
        let (mut sep, mut diam) = (f64::INFINITY, 0.0f64);
        for (t, &v) in d.iter().enumerate() {
            if codes[i + 1 + t] == codes[i] {
                diam = diam.max(v);
            } else {
                sep = sep.min(v);
            }
        }
        (sep, diam)
    });
    let sep = per_row.iter().fold(f64::INFINITY, |m, r| m.min(r.0));
    let diam = per_row.iter().fold(0.0f64, |m, r| m.max(r.1));
    if diam == 0.0 {
        return Err(undefined(
            ID,
            "dunn: every class has diameter 0 in the projection (its points coincide, or it has one point)",
        ));
    }
    Ok(sep / diam)
}

/// Mean between-class distance over mean within-class distance.
pub(super) fn average_between_within(y: &Points, labels: &Labels) -> Result<f64> {
    let codes = labels.codes();
    let per_row = upper_rows(y, |i, d| {
        let same = |t: usize| codes[i + 1 + t] == codes[i];
        let within = pairwise_sum_by(d.len(), &|t| if same(t) { d[t] } else { 0.0 });
        let between = pairwise_sum_by(d.len(), &|t| if same(t) { 0.0 } else { d[t] });
        let w = (0..d.len()).filter(|&t| same(t)).count() as u64;
        (within, between, w, d.len() as u64 - w)
    });
    let within = pairwise_sum_by(per_row.len(), &|i| per_row[i].0);
    let between = pairwise_sum_by(per_row.len(), &|i| per_row[i].1);
    let w: u64 = per_row.iter().map(|r| r.2).sum();
    let b: u64 = per_row.iter().map(|r| r.3).sum();
    if w == 0 || within == 0.0 {
        return Err(undefined(
            ID,
            "average_between_within: no two points of one class lie apart in the projection (the mean within-class distance is 0)",
        ));
    }
    if b == 0 {
        return Err(undefined(ID, "average_between_within: there is no pair of points of different classes"));
    }
    Ok((between / b as f64) / (within / w as f64))
}
