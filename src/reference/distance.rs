//! Distance rows: `d(i, j)` for one i and every j.

use multiversion::multiversion;

use crate::data::Points;

/// Writes `d(i, j) = sqrt(Σ_c (x[i][c] - x[j][c])²)` for every j into `out` (length n).
///
/// Each sum runs in coordinate order c = 0..D-1 with one rounding per operation and no FMA,
/// exactly as `docs/exactness.md` defines it (scipy's `cdist`). Points go in blocks of 32 whose
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
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
pub fn distance_row_from(points: &Points, i: usize, from: usize, out: &mut [f64]) {
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

/// [`distance_pair`] for each j of `js` (`out[t] = d(i, js[t])`, the same bits): four pairs at
/// a time, each its own sum in coordinate order, so the four chains of additions overlap
/// instead of waiting on one another (a pair alone is latency-bound in high dimension).
pub fn distance_pairs(points: &Points, i: usize, js: &[u32], out: &mut [f64]) {
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

/// `d(i, j)` for one pair, bit-identical to `distance_row(points, i, ..)[j]`.
pub fn distance_pair(points: &Points, i: usize, j: usize) -> f64 {
    let (xi, xj) = (points.row(i), points.row(j));
    let t = xj[0] - xi[0];
    let mut s = t * t;
    for c in 1..xi.len() {
        let t = xj[c] - xi[c];
        s += t * t;
    }
    s.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
