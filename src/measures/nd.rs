//! Neighbour dissimilarity (`nd`).
//!
//! A = symmetrised binary kNN graph, S = A·A with a zero diagonal (shared-neighbour counts),
//! Δ = S^X - S^Y over ordered pairs i ≠ j; `nd = max(√Σ_{Δ>0} Δ², √Σ_{Δ<0} Δ²) / k`.
//! S is never formed: each row of S is accumulated sparsely in O(n) scratch, and the sums of
//! Δ² are exact integers, so the result does not depend on order or threads.

use rayon::prelude::*;

use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::resources::Neighbours;

/// Adjacency lists of the symmetrised kNN graph (sorted, no duplicates).
fn symmetrised(knn: &Neighbours, k: usize, n: usize) -> Vec<Vec<u32>> {
    let mut adj: Vec<Vec<u32>> = (0..n).map(|i| knn.row(i, k).to_vec()).collect();
    for i in 0..n {
        for &j in knn.row(i, k) {
            adj[j as usize].push(i as u32);
        }
    }
    for a in &mut adj {
        a.sort_unstable();
        a.dedup();
    }
    adj
}

/// Adds row i of A·A into `counts`, recording touched columns.
fn shared_row(adj: &[Vec<u32>], i: usize, counts: &mut [i64], sign: i64, touched: &mut Vec<u32>) {
    for &m in &adj[i] {
        for &j in &adj[m as usize] {
            if counts[j as usize] == 0 {
                touched.push(j);
            }
            counts[j as usize] += sign;
        }
    }
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n) = (r.k, ctx.n());
    let ax = symmetrised(ctx.knn_high(), k, n);
    let ay = symmetrised(ctx.knn_low(), k, n);
    let block = 256;
    let (pos, neg) = (0..n.div_ceil(block))
        .into_par_iter()
        .map(|b| {
            let mut counts = vec![0i64; n];
            let mut touched = Vec::new();
            let (mut pos, mut neg) = (0u128, 0u128);
            for i in b * block..((b + 1) * block).min(n) {
                touched.clear();
                shared_row(&ax, i, &mut counts, 1, &mut touched);
                // Columns hit by X only may reach zero from Y and be re-pushed: dedup below.
                let mut tx = std::mem::take(&mut touched);
                shared_row(&ay, i, &mut counts, -1, &mut tx);
                tx.sort_unstable();
                tx.dedup();
                for &j in &tx {
                    let d = counts[j as usize];
                    counts[j as usize] = 0;
                    if j as usize == i {
                        continue;
                    }
                    let sq = (d * d) as u128;
                    if d > 0 {
                        pos += sq;
                    } else {
                        neg += sq;
                    }
                }
                touched = tx;
            }
            (pos, neg)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let kk = (k * k) as f64;
    let nd = (pos as f64 / kk).sqrt().max((neg as f64 / kk).sqrt());
    Ok(Output::new().value("neighbor_dissimilarity", nd))
}
