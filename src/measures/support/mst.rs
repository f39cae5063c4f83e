//! The exact minimum spanning tree's edge lengths (Euclidean, or the original space's metric) by Prim's algorithm on the
//! reference distances, in O(n·D) memory (no n×n matrix): the lengths of the tree are the death
//! times of the Vietoris–Rips filtration's H0 classes.
//!
//! Every distance is the reference's (`docs/exactness.md`: `√(Σ_c (x_j[c] − x_i[c])²)`, the sum in
//! coordinate order, one rounding per operation, no FMA), computed here on a compacted
//! column-major copy of the points not yet in the tree (so that each step measures only those,
//! vectorised across points without changing any sum's order). The multiset of an MST's edge
//! lengths is the same for every minimum spanning tree, so which of several equally near points
//! joins first (here the lowest index) does not change the result; it is the same for any thread
//! count.

use rayon::prelude::*;

use crate::control::Control;
use crate::data::{Metric, Points};
use crate::error::Result;
use crate::reference::distance_pair;

/// Points per parallel task of one step.
const CHUNK: usize = 2048;

/// The n − 1 edge lengths of a Euclidean minimum spanning tree of `points`, ascending.
pub(in crate::measures) fn mst_lengths(points: &Points, ctl: &Control, phase: &'static str) -> Result<Vec<f64>> {
    let (n, dim) = (points.n(), points.dim());
    if n < 2 {
        return Ok(Vec::new());
    }
    // The points outside the tree, column-major and compacted: slot s holds point ids[s].
    // Euclidean coordinates: vectorised over a column-major copy; otherwise pair by pair.
    let euclidean = points.has_coordinates() && points.metric() == Metric::Euclidean;
    let dim = if euclidean { dim } else { 0 };
    let mut cols: Vec<Vec<f64>> = (0..dim).map(|c| points.col(c)[1..].to_vec()).collect();
    let mut ids: Vec<usize> = (1..n).collect();
    let mut key: Vec<f64> = vec![f64::INFINITY; n - 1];
    let mut lengths = Vec::with_capacity(n - 1);
    let mut joined = 0usize;
    while !ids.is_empty() {
        if lengths.len() % 256 == 0 {
            ctl.check()?;
            ctl.report(phase, lengths.len() as u64, (n - 1) as u64);
        }
        let xi: &[f64] = if euclidean { points.row(joined) } else { &[] };
        let m = ids.len();
        // Each chunk: the new vertex's distances lower its slots' keys; then the chunk's nearest
        // slot (smallest key, then smallest point id).
        let best = key
            .par_chunks_mut(CHUNK)
            .enumerate()
            .map(|(b, keys)| {
                let start = b * CHUNK;
                let mut acc = vec![0.0f64; keys.len()];
                if euclidean {
                    for (c, col) in cols.iter().enumerate() {
                        let (col, xc) = (&col[start..start + keys.len()], xi[c]);
                        if c == 0 {
                            for (a, &v) in acc.iter_mut().zip(col) {
                                let t = v - xc;
                                *a = t * t;
                            }
                        } else {
                            for (a, &v) in acc.iter_mut().zip(col) {
                                let t = v - xc;
                                *a += t * t;
                            }
                        }
                    }
                    acc.iter_mut().for_each(|a| *a = a.sqrt());
                } else {
                    // Another metric, or a distance matrix: the reference's own pair distance.
                    for (s, a) in acc.iter_mut().enumerate() {
                        *a = distance_pair(points, joined, ids[start + s]);
                    }
                }
                let mut best = (f64::INFINITY, usize::MAX, usize::MAX);
                for (s, (k, d)) in keys.iter_mut().zip(acc).enumerate() {
                    if d < *k {
                        *k = d;
                    }
                    let id = ids[start + s];
                    if *k < best.0 || (*k == best.0 && id < best.1) {
                        best = (*k, id, start + s);
                    }
                }
                best
            })
            .reduce(
                || (f64::INFINITY, usize::MAX, usize::MAX),
                |a, b| if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a },
            );
        let (length, id, slot) = best;
        debug_assert!(slot < m && length.is_finite());
        lengths.push(length);
        joined = id;
        // Remove the slot (swap with the last one, in every column).
        for col in &mut cols {
            col.swap_remove(slot);
        }
        ids.swap_remove(slot);
        key.swap_remove(slot);
    }
    lengths.sort_by(f64::total_cmp);
    Ok(lengths)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kruskal on every pair (dense), the lengths ascending.
    fn kruskal(p: &Points) -> Vec<f64> {
        let n = p.n();
        let mut edges: Vec<(f64, usize, usize)> =
            (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).map(|(i, j)| (distance_pair(p, i, j), i, j)).collect();
        edges.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let mut out = Vec::new();
        for (d, i, j) in edges {
            let (a, b) = (find(&mut parent, i), find(&mut parent, j));
            if a != b {
                parent[a] = b;
                out.push(d);
            }
        }
        out
    }

    #[test]
    fn prim_gives_kruskals_lengths_bit_for_bit() {
        let mut s = 7u64;
        let mut rnd = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for (n, dim, lattice) in [(2, 1, false), (3, 2, false), (300, 5, false), (2500, 3, false), (400, 2, true)] {
            let rows: Vec<f64> =
                (0..n * dim).map(|_| if lattice { (rnd() * 4.0).floor() } else { rnd() * 10.0 - 5.0 }).collect();
            let p = Points::from_vec("p", n, dim, rows).unwrap();
            // Euclidean (the vectorised path), and another metric (the pair-by-pair path).
            let others = [Metric::Cosine, Metric::Cityblock].map(|m| p.clone().with_metric(m));
            for p in std::iter::once(p.clone()).chain(others.into_iter().flatten().filter(|_| n <= 400)) {
                let got = mst_lengths(&p, &Control::default(), "test").unwrap();
                let want = kruskal(&p);
                assert_eq!(got.len(), n - 1);
                assert_eq!(
                    got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    "n = {n}, dim = {dim}, {:?}",
                    p.metric()
                );
            }
        }
    }
}
