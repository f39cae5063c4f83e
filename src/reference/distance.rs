//! Distance rows: `d(i, j)` for one i and every j, under the points' [`Metric`].
//!
//! Every distance of the original space is computed here ([`distance_row`],
//! [`distance_row_from`], [`distance_pair`]), under the metric its [`Points`] carry: the row
//! pass, the rank table, the all-pairs resources, densities, co-ranking and the measures that
//! read distances all go through these three functions, so each follows the metric. A
//! projection's points are Euclidean.
//!
//! [`Metric`]: crate::data::Metric

use multiversion::multiversion;

use crate::data::{Kernel, Points};
use crate::sum::two_lane_sum;

/// Writes `d(i, j)` for every j into `out` (length n), under the points' metric.
///
/// Euclidean: `sqrt(Σ_c (x[i][c] - x[j][c])²)`. Each sum runs in coordinate order
/// c = 0..D-1 with one rounding per operation and no FMA, exactly as `docs/exactness.md`
/// defines it (scipy's `cdist`); so do the other metrics' sums, each in scipy's formula
/// ([`distance_row_from`]). Points go in blocks of 32 whose
/// sums stay in registers while c runs over the coordinates (the column-major copy), the
/// innermost loop running over the block's points: it vectorises across points without changing
/// any sum's order.
/// `(x_j - x_i)²` equals `(x_i - x_j)²` bit for bit, so `d(i,j) = d(j,i)`. Wider SIMD (chosen
/// at run time) changes nothing: Rust never fuses a multiply and an add.
#[inline]
pub fn distance_row(points: &Points, i: usize, out: &mut [f64]) {
    distance_row_from(points, i, 0, out);
}

/// [`distance_row`] for the points j ≥ `from` only: `out[j - from] = d(i, j)`, the same bits.
///
/// The metrics, each as scipy 1.17's `cdist` computes it (sums from 0 in coordinate order):
/// sqeuclidean `Σ (u_c − v_c)²`; cityblock `Σ |u_c − v_c|`; chebyshev `max |u_c − v_c|`;
/// minkowski `(Σ |u_c − v_c|^p)^(1/p)` with `1/p` rounded once and the platform's `pow`;
/// cosine `1 − c` with `c = (Σ u_c v_c) / (‖u‖ ‖v‖)` clipped to ±1 when |c| > 1, the norms
/// `sqrt(Σ u_c²)`; correlation the cosine of the centred rows. A distance matrix's row is read.
pub fn distance_row_from(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    debug_assert_eq!(out.len(), points.n() - from);
    match points.metric().kernel() {
        Kernel::Euclidean => euclidean_row_from(points, i, from, out),
        Kernel::Precomputed => {
            points.distances().expect("the planner reads rows only of a space that has them").row_from(i, from, out)
        }
        Kernel::SqEuclidean => sqeuclidean_row(points, i, from, out),
        Kernel::Cityblock => cityblock_row(points, i, from, out),
        Kernel::Chebyshev => chebyshev_row(points, i, from, out),
        Kernel::Minkowski(p) => minkowski_row(points, i, from, out, p),
        Kernel::Cosine => cosine_row(points, i, from, out),
    }
}

/// The sums of squares under [`distance_row_from`]'s Euclidean roots, for the points j ≥
/// `from` of a Euclidean space: `d(i, j) = out[j − from].sqrt()` bit for bit (scipy's
/// sqeuclidean sums are the same operations in the same order, and `(u − v)² = (v − u)²`). A
/// correctly rounded root is non-decreasing, so the smallest and largest distances of a row
/// are the roots of its smallest and largest sums: a pass that needs only those skips a root
/// per pair.
pub fn squared_row_from(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    assert!(matches!(points.metric().kernel(), Kernel::Euclidean), "squared_row_from: a Euclidean space");
    debug_assert_eq!(out.len(), points.n() - from);
    sqeuclidean_row(points, i, from, out)
}

/// The Euclidean rows (the projections' metric and the default).
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn euclidean_row_from(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    let xi = points.row(i);
    let n = points.n();
    debug_assert_eq!(out.len(), n - from);
    if points.dim() == 2 {
        return row_2d(points, i, from, out);
    }
    // The column slices, collected once per row: taking `points.col(c)` lazily inside the block
    // loop keeps LLVM from vectorising it (measured 3× slower).
    let cols: Vec<&[f64]> = (0..points.dim()).map(|c| points.col(c)).collect();
    let x0 = xi[0];
    // Blocks of W points keep their W sums in registers across all coordinates.
    let mut j = from;
    while j + W <= n {
        let mut acc = [0.0f64; W];
        let c0: &[f64; W] = cols[0][j..j + W].try_into().expect("W values");
        for (a, &v) in acc.iter_mut().zip(c0) {
            let t = v - x0;
            *a = t * t;
        }
        for (col, &xc) in cols[1..].iter().zip(&xi[1..]) {
            let cv: &[f64; W] = col[j..j + W].try_into().expect("W values");
            for (a, &v) in acc.iter_mut().zip(cv) {
                let t = v - xc;
                *a += t * t;
            }
        }
        for (o, a) in out[j - from..j - from + W].iter_mut().zip(acc) {
            *o = a.sqrt();
        }
        j += W;
    }
    for (o, jj) in out[j - from..].iter_mut().zip(j..n) {
        let t = cols[0][jj] - x0;
        let mut s = t * t;
        for (col, &xc) in cols[1..].iter().zip(&xi[1..]) {
            let t = col[jj] - xc;
            s += t * t;
        }
        *o = s.sqrt();
    }
}

/// [`distance_row_from`] in two dimensions (projections): the same operations in the same
/// order, `(x_j0 − x_i0)² + (x_j1 − x_i1)²` then the root, one point at a time (two sums fit
/// in registers without blocks, and nothing is allocated).
#[inline(always)]
fn row_2d(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    let (c0, c1) = (&points.col(0)[from..], &points.col(1)[from..]);
    let (a, b) = (points.row(i)[0], points.row(i)[1]);
    for ((o, &u), &v) in out.iter_mut().zip(c0).zip(c1) {
        let (t, w) = (u - a, v - b);
        let mut s = t * t;
        s += w * w;
        *o = s.sqrt();
    }
}

/// Points per register block of [`distance_row_from`].
const W: usize = 32;

/// Points per vector of [`euclidean_tile`], and the rounding of its rows' stride.
pub const TILE_LANES: usize = 8;

/// A tile row's stride in [`euclidean_tile`]'s output: `len` rounded up to [`TILE_LANES`].
pub fn tile_stride(len: usize) -> usize {
    len.div_ceil(TILE_LANES) * TILE_LANES
}

/// The columns of a set of points copied with zeros past the last point, so that a tile's last
/// vector reads inside the copy (its lanes past the tile hold values no caller reads).
pub struct PaddedColumns {
    data: Vec<f64>,
    len: usize,
}

impl PaddedColumns {
    pub fn new(points: &Points) -> Self {
        let len = tile_stride(points.n()) + TILE_LANES;
        let mut data = vec![0.0; len * points.dim()];
        for (c, col) in data.chunks_mut(len).enumerate() {
            col[..points.n()].copy_from_slice(points.col(c));
        }
        PaddedColumns { data, len }
    }
}

/// The Euclidean distances of the points `rows` to the points `js`:
/// `out[r · s + t] = d(rows.start + r, js.start + t)` for `t < js.len()`, `s` =
/// [`tile_stride`]`(js.len())`, the same bits as [`distance_row`] (each pair's squares summed
/// from 0 in coordinate order, then the root); `out[r · s + t]` for `t ≥ js.len()` is scratch.
/// Row by row, 32 points at a time (four independent vectors of sums), then 8 at a time.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn euclidean_tile(
    points: &Points,
    cols: &PaddedColumns,
    rows: std::ops::Range<usize>,
    js: std::ops::Range<usize>,
    out: &mut [f64],
) {
    debug_assert!(matches!(points.metric().kernel(), Kernel::Euclidean));
    let stride = tile_stride(js.len());
    assert!(out.len() >= rows.len() * stride && js.end <= points.n(), "euclidean_tile: the tile fits");
    for (r, i) in rows.enumerate() {
        let (xi, o) = (points.row(i), &mut out[r * stride..(r + 1) * stride]);
        let mut t = 0;
        while t + 32 <= stride {
            tile_run::<32>(cols, xi, js.start + t, &mut o[t..t + 32]);
            t += 32;
        }
        while t < stride {
            tile_run::<TILE_LANES>(cols, xi, js.start + t, &mut o[t..t + TILE_LANES]);
            t += TILE_LANES;
        }
    }
}

/// W distances from the point `xi` to the points from `j`, as [`distance_row_from`]'s blocks.
#[inline(always)]
fn tile_run<const W: usize>(cols: &PaddedColumns, xi: &[f64], j: usize, out: &mut [f64]) {
    let col =
        |c: usize| -> &[f64; W] { cols.data[c * cols.len + j..c * cols.len + j + W].try_into().expect("W values") };
    let mut acc = [0.0f64; W];
    let x0 = xi[0];
    for (a, &v) in acc.iter_mut().zip(col(0)) {
        let t = v - x0;
        *a = t * t;
    }
    for (c, &xc) in xi.iter().enumerate().skip(1) {
        for (a, &v) in acc.iter_mut().zip(col(c)) {
            let t = v - xc;
            *a += t * t;
        }
    }
    for (o, a) in out.iter_mut().zip(acc) {
        *o = a.sqrt();
    }
}

/// [`distance_pair`] for each j of `js` (`out[t] = d(i, js[t])`, the same bits): Euclidean four
/// pairs at a time, each its own sum in coordinate order, so the four chains of additions overlap
/// instead of waiting on one another (a pair alone is latency-bound in high dimension).
pub fn distance_pairs(points: &Points, i: usize, js: &[u32], out: &mut [f64]) {
    if matches!(points.metric().kernel(), Kernel::Cosine) {
        return cosine_pairs(points, i, js, out);
    }
    if !matches!(points.metric().kernel(), Kernel::Euclidean) {
        // The other metrics (and a distance matrix): pair by pair under the points' metric.
        for (o, &j) in out.iter_mut().zip(js) {
            *o = distance_pair(points, i, j as usize);
        }
        return;
    }
    let xi = points.row(i);
    let mut chunks = js.chunks_exact(4);
    let mut at = 0;
    for q in &mut chunks {
        let rows = [0, 1, 2, 3].map(|t| points.row(q[t] as usize));
        let mut s = [0.0f64; 4];
        for t in 0..4 {
            let d = rows[t][0] - xi[0];
            s[t] = d * d;
        }
        for c in 1..xi.len() {
            for t in 0..4 {
                let d = rows[t][c] - xi[c];
                s[t] += d * d;
            }
        }
        for t in 0..4 {
            out[at + t] = s[t].sqrt();
        }
        at += 4;
    }
    for (o, &j) in out[at..].iter_mut().zip(chunks.remainder()) {
        *o = distance_pair(points, i, j as usize);
    }
}

/// [`distance_pairs`] under cosine and correlation: four pairs at a time, each with its own two
/// accumulators (the even and the odd coordinates, as [`two_lane_sum`]), so eight chains of
/// additions overlap; each pair's operations and order are [`distance_pair`]'s.
fn cosine_pairs(points: &Points, i: usize, js: &[u32], out: &mut [f64]) {
    let (rows, norms) = cosine_parts(points);
    let d = points.dim();
    let xi = &rows[i * d..(i + 1) * d];
    let de = d & !1;
    let mut chunks = js.chunks_exact(4);
    let mut at = 0;
    for q in &mut chunks {
        let xs = [0, 1, 2, 3].map(|t| &rows[q[t] as usize * d..(q[t] as usize + 1) * d]);
        let (mut even, mut odd) = ([0.0f64; 4], [0.0f64; 4]);
        for c in (0..de).step_by(2) {
            for t in 0..4 {
                even[t] += xi[c] * xs[t][c];
                odd[t] += xi[c + 1] * xs[t][c + 1];
            }
        }
        for t in 0..4 {
            let mut h = even[t] + odd[t];
            if d % 2 == 1 {
                h += xi[d - 1] * xs[t][d - 1];
            }
            out[at + t] = cosine_finish(h, norms[i], norms[q[t] as usize]);
        }
        at += 4;
    }
    for (o, &j) in out[at..].iter_mut().zip(chunks.remainder()) {
        *o = distance_pair(points, i, j as usize);
    }
}

/// `d(i, j)` for one pair, bit-identical to `distance_row(points, i, ..)[j]`.
pub fn distance_pair(points: &Points, i: usize, j: usize) -> f64 {
    let (xi, xj) = (points.row(i), points.row(j));
    let pair = |step: &dyn Fn(f64, f64, f64) -> f64| xi.iter().zip(xj).fold(0.0, |a, (&u, &v)| step(a, u, v));
    match points.metric().kernel() {
        Kernel::Euclidean => {
            let t = xj[0] - xi[0];
            let mut s = t * t;
            for c in 1..xi.len() {
                let t = xj[c] - xi[c];
                s += t * t;
            }
            s.sqrt()
        }
        Kernel::Precomputed => {
            points.distances().expect("the planner reads pairs only of a space that has them").get(i, j)
        }
        Kernel::SqEuclidean => pair(&sq_step),
        Kernel::Cityblock => pair(&abs_step),
        Kernel::Chebyshev => pair(&max_step),
        Kernel::Minkowski(p) => pair(&|a, u, v| pow_step(a, u, v, p)).powf(1.0 / p),
        Kernel::Cosine => {
            let (rows, norms) = cosine_parts(points);
            let d = points.dim();
            let (xi, xj) = (&rows[i * d..(i + 1) * d], &rows[j * d..(j + 1) * d]);
            cosine_finish(two_lane_sum(d, |c| xi[c] * xj[c]), norms[i], norms[j])
        }
    }
}

// The terms of each metric's sum: `step(acc, u_c, v_c)` with u the row i, v the point j, in
// scipy's formula (`(u − v)²` and `|u − v|` equal `(v − u)²` and `|v − u|` bit for bit).
#[inline(always)]
fn sq_step(a: f64, u: f64, v: f64) -> f64 {
    let t = u - v;
    a + t * t
}
#[inline(always)]
fn abs_step(a: f64, u: f64, v: f64) -> f64 {
    a + (u - v).abs()
}
#[inline(always)]
fn max_step(a: f64, u: f64, v: f64) -> f64 {
    // std::max(a, d) of scipy's ChebyshevDistance: exact, and no NaN can occur.
    let d = (u - v).abs();
    if a < d { d } else { a }
}
#[inline(always)]
fn pow_step(a: f64, u: f64, v: f64, p: f64) -> f64 {
    a + (u - v).abs().powf(p)
}
/// scipy's `1 − c`, `c = dot / (‖u‖ ‖v‖)` clipped to ±1 when |c| > 1 (rounding can pass 1).
#[inline(always)]
fn cosine_finish(dot: f64, nu: f64, nv: f64) -> f64 {
    let mut c = dot / (nu * nv);
    if c.abs() > 1.0 {
        c = 1.0f64.copysign(c);
    }
    1.0 - c
}

/// The rows the cosine kernel reads (the centred rows under correlation) and their norms.
fn cosine_parts(points: &Points) -> (&[f64], &[f64]) {
    let prep = points.prepared().expect("cosine and correlation points carry their norms");
    match &prep.centred {
        Some((rows, _)) => (rows, &prep.norms),
        None => (points.as_slice(), &prep.norms),
    }
}

/// One row of a metric whose terms are `step`: points in blocks of [`W`] whose sums stay in
/// registers while c runs over the coordinates (from 0, as scipy's accumulators start), then
/// `finish(sum, j)`. Inlined into each metric's multiversioned kernel.
#[inline(always)]
fn blocked_row(
    cols: &[&[f64]],
    xi: &[f64],
    from: usize,
    out: &mut [f64],
    step: impl Fn(f64, f64, f64) -> f64,
    finish: impl Fn(f64, usize) -> f64,
) {
    let n = from + out.len();
    let mut j = from;
    while j + W <= n {
        let mut acc = [0.0f64; W];
        for (col, &xc) in cols.iter().zip(xi) {
            let cv: &[f64; W] = col[j..j + W].try_into().expect("W values");
            for (a, &v) in acc.iter_mut().zip(cv) {
                *a = step(*a, xc, v);
            }
        }
        for (t, (o, a)) in out[j - from..j - from + W].iter_mut().zip(acc).enumerate() {
            *o = finish(a, j + t);
        }
        j += W;
    }
    for (o, jj) in out[j - from..].iter_mut().zip(j..n) {
        let mut a = 0.0;
        for (col, &xc) in cols.iter().zip(xi) {
            a = step(a, xc, col[jj]);
        }
        *o = finish(a, jj);
    }
}

fn columns(points: &Points) -> Vec<&[f64]> {
    (0..points.dim()).map(|c| points.col(c)).collect()
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn sqeuclidean_row(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    blocked_row(&columns(points), points.row(i), from, out, sq_step, |a, _| a);
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn cityblock_row(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    blocked_row(&columns(points), points.row(i), from, out, abs_step, |a, _| a);
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn chebyshev_row(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    blocked_row(&columns(points), points.row(i), from, out, max_step, |a, _| a);
}

fn minkowski_row(points: &Points, i: usize, from: usize, out: &mut [f64], p: f64) {
    // scipy rounds 1/p once (`invp`) and raises the sum to it.
    let invp = 1.0 / p;
    blocked_row(&columns(points), points.row(i), from, out, |a, u, v| pow_step(a, u, v, p), |a, _| a.powf(invp));
}

/// Cosine rows: the dot products of [`two_lane_sum`] for blocks of [`W`] points at once (two
/// accumulators per point, the even and the odd coordinates), then scipy's quotient.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn cosine_row(points: &Points, i: usize, from: usize, out: &mut [f64]) {
    let prep = points.prepared().expect("cosine and correlation points carry their norms");
    let (n, d) = (points.n(), points.dim());
    let (xi, cols): (&[f64], Vec<&[f64]>) = match &prep.centred {
        Some((rows, cm)) => (&rows[i * d..(i + 1) * d], (0..d).map(|c| &cm[c * n..(c + 1) * n]).collect()),
        None => (points.row(i), columns(points)),
    };
    let (norms, ni) = (&prep.norms, prep.norms[i]);
    let de = d & !1;
    let mut j = from;
    while j + W <= n {
        let (mut even, mut odd) = ([0.0f64; W], [0.0f64; W]);
        for c in (0..de).step_by(2) {
            let (ce, co): (&[f64; W], &[f64; W]) =
                (cols[c][j..j + W].try_into().expect("W values"), cols[c + 1][j..j + W].try_into().expect("W values"));
            let (ue, uo) = (xi[c], xi[c + 1]);
            for t in 0..W {
                even[t] += ue * ce[t];
                odd[t] += uo * co[t];
            }
        }
        for t in 0..W {
            let mut h = even[t] + odd[t];
            if d % 2 == 1 {
                h += xi[d - 1] * cols[d - 1][j + t];
            }
            out[j - from + t] = cosine_finish(h, ni, norms[j + t]);
        }
        j += W;
    }
    for (o, jj) in out[j - from..].iter_mut().zip(j..n) {
        *o = cosine_finish(two_lane_sum(d, |c| xi[c] * cols[c][jj]), ni, norms[jj]);
    }
}

/// Rows per call of [`distance_rows`] in the row pass: a block of 32 points' coordinates
/// (32·D values, in the L2 cache) serves this many rows before the next block is read.
pub const ROW_TILE: usize = 16;

/// [`distance_row`] for the rows `rows` at once: `out[(i − rows.start)·n + j] = d(i, j)`, the
/// same bits. Euclidean (D > 2), cosine and correlation go block of 32 points by block, every
/// row against the block while its coordinates are in cache (a row at a time streams the whole
/// n×D data once per row from memory); each sum is [`distance_row_from`]'s, in its order.
/// Other metrics go row by row.
pub fn distance_rows(points: &Points, rows: std::ops::Range<usize>, out: &mut [f64]) {
    let n = points.n();
    debug_assert_eq!(out.len(), rows.len() * n);
    match points.metric().kernel() {
        Kernel::Euclidean if points.dim() > 2 => euclidean_rows(points, rows, out),
        Kernel::Cosine => cosine_rows(points, rows, out),
        _ => {
            for (i, o) in rows.zip(out.chunks_mut(n)) {
                distance_row(points, i, o);
            }
        }
    }
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn euclidean_rows(points: &Points, rows: std::ops::Range<usize>, out: &mut [f64]) {
    let n = points.n();
    let cols = columns(points);
    let mut j = 0;
    while j + W <= n {
        for (r, i) in rows.clone().enumerate() {
            let xi = points.row(i);
            let x0 = xi[0];
            let mut acc = [0.0f64; W];
            let c0: &[f64; W] = cols[0][j..j + W].try_into().expect("W values");
            for (a, &v) in acc.iter_mut().zip(c0) {
                let t = v - x0;
                *a = t * t;
            }
            for (col, &xc) in cols[1..].iter().zip(&xi[1..]) {
                let cv: &[f64; W] = col[j..j + W].try_into().expect("W values");
                for (a, &v) in acc.iter_mut().zip(cv) {
                    let t = v - xc;
                    *a += t * t;
                }
            }
            for (o, a) in out[r * n + j..r * n + j + W].iter_mut().zip(acc) {
                *o = a.sqrt();
            }
        }
        j += W;
    }
    for (r, i) in rows.enumerate() {
        euclidean_row_from(points, i, j, &mut out[r * n + j..(r + 1) * n]);
    }
}

#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn cosine_rows(points: &Points, rows: std::ops::Range<usize>, out: &mut [f64]) {
    let prep = points.prepared().expect("cosine and correlation points carry their norms");
    let (n, d) = (points.n(), points.dim());
    let (data, cols): (&[f64], Vec<&[f64]>) = match &prep.centred {
        Some((rows, cm)) => (rows, (0..d).map(|c| &cm[c * n..(c + 1) * n]).collect()),
        None => (points.as_slice(), columns(points)),
    };
    let norms = &prep.norms;
    let de = d & !1;
    let mut j = 0;
    while j + W <= n {
        for (r, i) in rows.clone().enumerate() {
            let xi = &data[i * d..(i + 1) * d];
            let (mut even, mut odd) = ([0.0f64; W], [0.0f64; W]);
            for c in (0..de).step_by(2) {
                let (ce, co): (&[f64; W], &[f64; W]) = (
                    cols[c][j..j + W].try_into().expect("W values"),
                    cols[c + 1][j..j + W].try_into().expect("W values"),
                );
                let (ue, uo) = (xi[c], xi[c + 1]);
                for t in 0..W {
                    even[t] += ue * ce[t];
                    odd[t] += uo * co[t];
                }
            }
            for t in 0..W {
                let mut h = even[t] + odd[t];
                if d % 2 == 1 {
                    h += xi[d - 1] * cols[d - 1][j + t];
                }
                out[r * n + j + t] = cosine_finish(h, norms[i], norms[j + t]);
            }
        }
        j += W;
    }
    for (r, i) in rows.enumerate() {
        cosine_row(points, i, j, &mut out[r * n + j..(r + 1) * n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;

    /// Four pairs at a time are each pair's own bits, remainders included, in 1 to 60 dimensions.
    #[test]
    fn pairs_are_the_row_bits() {
        let mut rng = crate::splitmix::SplitMix64(11);
        for d in [1, 2, 3, 7, 60] {
            let n = 23;
            let v: Vec<f64> = (0..n * d).map(|_| (rng.next_u64() >> 11) as f64 * 1e-12 - 3e3).collect();
            let p = Points::from_vec("p", n, d, v).unwrap();
            let mut row = vec![0.0; n];
            distance_row(&p, 5, &mut row);
            for len in [0, 3, 4, 9, 22] {
                let js: Vec<u32> = (0..n as u32).filter(|&j| j != 5).take(len).collect();
                let mut out = vec![0.0; len];
                distance_pairs(&p, 5, &js, &mut out);
                for (t, &j) in js.iter().enumerate() {
                    assert_eq!(out[t].to_bits(), row[j as usize].to_bits(), "d={d} j={j}");
                }
            }
        }
    }

    /// The roots of `squared_row_from`'s sums are the Euclidean rows' bits, from any point on,
    /// in 1, 2 (the projections' own loop), 3, 10 and 60 dimensions, with duplicates and huge
    /// and tiny scales.
    #[test]
    fn roots_of_the_squared_rows_are_the_rows() {
        let mut rng = crate::splitmix::SplitMix64(41);
        for d in [1, 2, 3, 10, 60] {
            for scale in [1e-150, 1.0, 1e150] {
                let n = 70;
                let mut v: Vec<f64> = (0..n * d).map(|_| (rng.uniform() * 2.0 - 1.0) * scale).collect();
                v.copy_within(0..d, 5 * d);
                let p = Points::from_vec("p", n, d, v).unwrap();
                for (i, from) in [(0, 1), (5, 6), (0, 0), (33, 34), (n - 2, n - 1), (n - 1, n)] {
                    let (mut sq, mut want) = (vec![0.0; n - from], vec![0.0; n - from]);
                    squared_row_from(&p, i, from, &mut sq);
                    distance_row_from(&p, i, from, &mut want);
                    for (t, (s, w)) in sq.iter().zip(&want).enumerate() {
                        assert_eq!(s.sqrt().to_bits(), w.to_bits(), "d={d} scale={scale} i={i} j={}", from + t);
                    }
                }
            }
        }
    }

    /// Rows at once give the row kernel's bits, for every metric, odd and even D, n not a
    /// multiple of the block, any run of rows; a duplicate point and a near-duplicate included.
    #[test]
    fn rows_at_once_are_the_row_kernels_bits() {
        let mut rng = crate::splitmix::SplitMix64(25);
        for (n, d) in [(5, 3), (37, 7), (75, 384), (19, 2), (24, 1), (70, 11)] {
            let mut v: Vec<f64> = (0..n * d).map(|_| rng.uniform() * 2.0 - 1.0).collect();
            v.copy_within(0..d, d);
            let near: Vec<f64> = v[..d].iter().map(|x| x * (1.0 + f64::EPSILON)).collect();
            v[2 * d..3 * d].copy_from_slice(&near);
            let metrics = [Metric::Euclidean, Metric::Cosine, Metric::Correlation, Metric::Cityblock];
            for metric in metrics.into_iter().chain([Metric::minkowski(3.0).unwrap()]) {
                // One coordinate has no correlation (its centred rows are zero): refused.
                let Ok(p) = Points::from_vec("p", n, d, v.clone()).unwrap().with_metric(metric) else {
                    assert_eq!((metric, d), (Metric::Correlation, 1));
                    continue;
                };
                let mut want = vec![0.0; n];
                for (start, end) in [(0, n), (1, n.min(6)), (n - 1, n), (3, n.min(3 + ROW_TILE))] {
                    let mut got = vec![0.0; (end - start) * n];
                    distance_rows(&p, start..end, &mut got);
                    for i in start..end {
                        distance_row(&p, i, &mut want);
                        let row = &got[(i - start) * n..(i - start + 1) * n];
                        let same = row.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(same, "{metric} n={n} d={d} row {i}");
                    }
                }
            }
        }
    }

    /// Tiles give the row kernel's bits for any block of rows and points (ends of the set, a
    /// duplicate, a near-duplicate, huge and tiny scales, 1 to 60 dimensions).
    #[test]
    fn tiles_are_the_row_kernels_bits() {
        let mut rng = crate::splitmix::SplitMix64(41);
        for (n, d, scale) in [(9, 1, 1.0), (37, 2, 1e150), (70, 11, 1e-150), (130, 60, 1.0), (41, 3, 1.0)] {
            let mut v: Vec<f64> = (0..n * d).map(|_| (rng.uniform() * 2.0 - 1.0) * scale).collect();
            v.copy_within(0..d, d);
            let near: Vec<f64> = v[..d].iter().map(|x| x * (1.0 + f64::EPSILON)).collect();
            v[2 * d..3 * d].copy_from_slice(&near);
            let p = Points::from_vec("p", n, d, v).unwrap();
            let cols = PaddedColumns::new(&p);
            let mut want = vec![0.0; n];
            for (rows, js) in
                [(0..n, 0..n), (1..n.min(10), 3..n), (n - 1..n, n - 1..n), (2..n, 0..1), (5..n.min(17), 7..n.min(30))]
            {
                let stride = tile_stride(js.len());
                let mut got = vec![f64::NAN; rows.len() * stride];
                euclidean_tile(&p, &cols, rows.clone(), js.clone(), &mut got);
                for (r, i) in rows.clone().enumerate() {
                    distance_row(&p, i, &mut want);
                    for (t, j) in js.clone().enumerate() {
                        assert_eq!(got[r * stride + t].to_bits(), want[j].to_bits(), "n={n} d={d} ({i}, {j})");
                    }
                }
            }
        }
    }
}
