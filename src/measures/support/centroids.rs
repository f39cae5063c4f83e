//! Class centroids and nearest-centroid classification, as ZADU's distance consistency computes
//! them (`np.mean(X[labels == c], axis=0)`, `np.linalg.norm(X[:, None] - C[None], axis=2)`,
//! `np.argmin`: ties go to the lowest class).

use rayon::prelude::*;

use super::numpy::{mean_rows, sq_dist};
use crate::data::Points;

/// The points of each class, in point order; `codes` are dense class codes `0..classes`.
pub(in crate::measures) fn class_rows(rows: &[usize], codes: &[u32], classes: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); classes];
    for (&r, &c) in rows.iter().zip(codes) {
        out[c as usize].push(r);
    }
    out
}

/// The centroid of each class (every class must have at least one point).
pub(in crate::measures) fn centroids(points: &Points, members: &[Vec<usize>]) -> Vec<Vec<f64>> {
    members.iter().map(|m| mean_rows(points, m)).collect()
}

/// How many of `rows` (with class codes `codes`, dense in `0..classes`, each class present) have
/// their own class's centroid as the nearest one: ZADU's distance consistency, unnormalised.
pub(in crate::measures) fn consistent(points: &Points, rows: &[usize], codes: &[u32], classes: usize) -> usize {
    let cents = centroids(points, &class_rows(rows, codes, classes));
    rows.par_iter()
        .zip(codes.par_iter())
        .filter(|&(&r, &code)| {
            let x = points.row(r);
            let mut best = 0;
            let mut best_d = sq_dist(x, &cents[0]).sqrt();
            for (c, cent) in cents.iter().enumerate().skip(1) {
                let d = sq_dist(x, cent).sqrt();
                if d < best_d {
                    best_d = d;
                    best = c;
                }
            }
            best == code as usize
        })
        .count()
}
