//! Gabriel classification error (`gce`; Thrun, Märte & Stier 2023, R package DRquality 0.2.1,
//! `GabrielClassificationError`), transcribed from DRquality's R source:
//!
//! 1. The Gabriel graph of the 2-D projection: the Delaunay edges (`support::delaunay`, exact
//!    predicates) whose diametral circle holds no other point strictly inside, decided by the
//!    exact sign of `(p_k − p_i)·(p_k − p_j)` for the opposite vertices k of the edge's triangles
//!    (of coincident projected points only the first occurrence is a vertex).
//! 2. Each point's Gabriel neighbours j with `d^X(i, j) > 0` (DRquality turns a zero original
//!    distance into "no edge"), `a_i` of them, ordered by `d^X(i, j)` (ties by index, R's stable
//!    `order`); `inter_r` = 1 when the r-th is of another class.
//! 3. `nn = max_i a_i` and DRquality's harmonic decay weights for a point with `a = a_i`:
//!    `H_m = Σ_{l=m..nn} 1/min(l, a − 1)`, `w_1 = H_1`, `w_r = H_{r−1}` (r ≥ 2);
//!    `GCE_i = Σ_{r ≤ a} w_r inter_r`.
//! 4. A point with exactly one such neighbour has `min(l, 0) = 0`: its weights are infinite and
//!    DRquality's `GCEperPoint` is NaN, left out of the mean: here `null` (kind `partial_mean`).
//!    A point with none (a duplicate in the projection) scores 0, as in DRquality.
//!    `gabriel_classification_error` = the mean over the points with a value. Lower is better.

use super::support::delaunay::triangulate;
use super::support::pairwise::undefined;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::reference::distance_pair;
use crate::sum::pairwise_sum_by;

const ID: &str = "gce";

/// `a + b` exactly as (sum, error) (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The exact sign of `Σ_t p_t q_t` (products by FMA into a non-overlapping expansion, Shewchuk's
/// grow-expansion; the sign is that of its most significant non-zero component).
fn sign_of_sum_of_products(terms: &[(f64, f64)]) -> f64 {
    let mut e: Vec<f64> = Vec::with_capacity(2 * terms.len());
    let grow = |x: f64, e: &mut Vec<f64>| {
        let mut q = x;
        for c in e.iter_mut() {
            let (s, err) = two_sum(q, *c);
            *c = err;
            q = s;
        }
        e.push(q);
    };
    for &(a, b) in terms {
        let p = a * b;
        let err = a.mul_add(b, -p);
        grow(err, &mut e);
        grow(p, &mut e);
    }
    e.iter().rev().find(|&&c| c != 0.0).map_or(0.0, |c| c.signum())
}

/// Whether point k lies strictly inside the circle with diameter (i, j).
fn strictly_inside(y: &[f64], i: usize, j: usize, k: usize) -> bool {
    let (xi, yi, xj, yj, xk, yk) = (y[2 * i], y[2 * i + 1], y[2 * j], y[2 * j + 1], y[2 * k], y[2 * k + 1]);
    // (xk − xi)(xk − xj) + (yk − yi)(yk − yj), expanded into products of coordinates.
    let terms = [(xk, xk), (-xk, xj), (-xi, xk), (xi, xj), (yk, yk), (-yk, yj), (-yi, yk), (yi, yj)];
    sign_of_sum_of_products(&terms) < 0.0
}

/// The Gabriel neighbours of each point (sorted by index).
fn gabriel(y: &[f64], n: usize, tris: &[[usize; 3]]) -> Vec<Vec<usize>> {
    // Each Delaunay edge with the opposite vertices of its (one or two) triangles.
    let mut edges: Vec<(usize, usize, usize)> = Vec::with_capacity(3 * tris.len());
    for t in tris {
        for (a, b, c) in [(t[0], t[1], t[2]), (t[1], t[2], t[0]), (t[0], t[2], t[1])] {
            edges.push((a.min(b), a.max(b), c));
        }
    }
    edges.sort_unstable();
    let mut adj = vec![Vec::new(); n];
    let mut s = 0;
    while s < edges.len() {
        let (i, j) = (edges[s].0, edges[s].1);
        let run = edges[s..].iter().take_while(|e| (e.0, e.1) == (i, j)).count();
        if edges[s..s + run].iter().all(|&(_, _, k)| !strictly_inside(y, i, j, k)) {
            adj[i].push(j);
            adj[j].push(i);
        }
        s += run;
    }
    for a in &mut adj {
        a.sort_unstable();
    }
    adj
}

pub(super) fn compute(ctx: &Ctx, _r: &Resolved) -> Result<Output> {
    let (low, n) = (ctx.low, ctx.n());
    if low.dim() != 2 {
        return Err(undefined(
            ID,
            &format!("the Gabriel graph needs a 2-D projection, this one has {} columns", low.dim()),
        ));
    }
    if n < 3 {
        return Err(undefined(ID, "the Gabriel classification error needs at least 3 points (as DRquality)"));
    }
    let tris = triangulate(low.as_slice())
        .ok_or_else(|| undefined(ID, "the Gabriel graph needs at least three non-collinear projected points"))?;
    let adj = gabriel(low.as_slice(), n, &tris);
    let codes = ctx.labels().codes();
    // Per point: its neighbours with d^X > 0 by d^X (ties by index), as "another class?" flags.
    let inter: Vec<Vec<bool>> = (0..n)
        .map(|i| {
            let mut nb: Vec<(f64, usize)> =
                adj[i].iter().map(|&j| (distance_pair(ctx.high, i, j), j)).filter(|&(d, _)| d > 0.0).collect();
            nb.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            nb.iter().map(|&(_, j)| codes[j] != codes[i]).collect()
        })
        .collect();
    let nn = inter.iter().map(Vec::len).max().unwrap_or(0);
    let per_point: Vec<f64> = inter
        .iter()
        .map(|flags| {
            let a = flags.len();
            match a {
                0 => 0.0,
                1 => f64::NAN,
                _ => {
                    // H_m = Σ_{l=m..nn} 1/min(l, a − 1), summed in R's order (l ascending).
                    let h = |m: usize| (m..=nn).fold(0.0, |s, l| s + 1.0 / l.min(a - 1) as f64);
                    flags.iter().enumerate().filter(|&(_, &x)| x).map(|(r, _)| h(r.max(1))).fold(0.0, |s, w| s + w)
                }
            }
        })
        .collect();
    let counted = per_point.iter().filter(|v| !v.is_nan()).count();
    if counted == 0 {
        return Err(undefined(
            ID,
            "every point has exactly one Gabriel neighbour (DRquality leaves such points out of the mean)",
        ));
    }
    let total = pairwise_sum_by(n, &|i| if per_point[i].is_nan() { 0.0 } else { per_point[i] });
    Ok(Output::new().value("gabriel_classification_error", total / counted as f64).local("local_gce", per_point))
}
