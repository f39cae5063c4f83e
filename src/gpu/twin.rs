//! CPU twins of the WGSL kernels: the same inputs, the same outputs, the same algorithm (the 64
//! threads of a workgroup simulated in order), in f32. Raw f32 values may differ from a GPU's
//! (drivers fuse and reorder), within the proven bound; what certification and refinement make
//! of them must not. The twins are also the reference the GPU parity tests compare against.

use super::bound::Params;
use super::distances_tiled::{REGISTER_BLOCK, Tiles};
use super::prepare::Prepared;

use super::shaders::{KT_MAX, POOL, WG};

/// `sqdist` in bound.wgsl: coordinate order, one rounding per operation.
pub fn sqdist(prep: &Prepared, i: usize, j: usize) -> f32 {
    let d = prep.dim;
    let (a, b) = (&prep.pts[i * d..(i + 1) * d], &prep.pts[j * d..(j + 1) * d]);
    let mut s = 0.0f32;
    for c in 0..d {
        let t = a[c] - b[c];
        s += t * t;
    }
    s
}

/// Twin of `sqdist.wgsl` for one row: (s̃(i, ·), ε(i, ·)).
pub fn sqdist_row(p: &Params, prep: &Prepared, i: usize) -> (Vec<f32>, Vec<f32>) {
    (0..prep.n)
        .map(|j| {
            let s = sqdist(prep, i, j);
            (s, p.eps_of(s, prep.norms[i], prep.norms[j]))
        })
        .unzip()
}

/// Twin of `knn_candidates.wgsl` for row i: the count and the first `p.cap` candidates (j, s̃).
pub fn knn_candidates(p: &Params, prep: &Prepared, i: usize) -> (u32, Vec<(u32, f32)>) {
    let (n, k, kt) = (prep.n, p.k as usize, p.kt as usize);
    let ni = prep.norms[i];
    let up = |j: usize| {
        let s = sqdist(prep, i, j);
        (s, s + p.eps_of(s, ni, prep.norms[j]), s - p.eps_of(s, ni, prep.norms[j]))
    };
    let mut tau1 = 0.0f32;
    for t in 0..WG {
        let mut top = [1.0e38f32; KT_MAX];
        for j in (t..n).step_by(WG).filter(|&j| j != i) {
            let u = up(j).1;
            if u < top[kt - 1] {
                let mut q = kt - 1;
                while q > 0 && top[q - 1] > u {
                    top[q] = top[q - 1];
                    q -= 1;
                }
                top[q] = u;
            }
        }
        tau1 = tau1.max(top[kt - 1]);
    }
    let pool: Vec<f32> = (0..n).filter(|&j| j != i).map(|j| up(j).1).filter(|&u| u <= tau1).collect();
    let mut tau = tau1;
    if pool.len() <= POOL {
        for &x in &pool {
            let less = pool.iter().filter(|&&y| y < x).count();
            let leq = pool.iter().filter(|&&y| y <= x).count();
            if less < k && leq >= k {
                tau = tau.min(x);
            }
        }
    }
    let cands: Vec<(u32, f32)> = (0..n)
        .filter(|&j| j != i)
        .filter_map(|j| {
            let (s, _, lo) = up(j);
            (!(lo > tau)).then_some((j as u32, s))
        })
        .collect();
    let count = cands.len() as u32;
    (count, cands.into_iter().take(p.cap as usize).collect())
}

/// What `rank_counts.wgsl` returns for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub certain: Vec<u32>,
    pub fast: Vec<u32>,
    /// (query slot, l), at most `p.cap` of them.
    pub overlaps: Vec<(u32, u32)>,
    pub count: u32,
}

/// Twin of `rank_counts.wgsl` for row i and its queries.
pub fn rank_counts(p: &Params, prep: &Prepared, i: usize, queries: &[u32]) -> RankRow {
    let ni = prep.norms[i];
    let iv = |j: usize| {
        let s = sqdist(prep, i, j);
        let e = p.eps_of(s, ni, prep.norms[j]);
        (s, s - e, s + e)
    };
    let q: Vec<(f32, f32, f32)> = queries.iter().map(|&j| iv(j as usize)).collect();
    let mut row =
        RankRow { certain: vec![0; queries.len()], fast: vec![0; queries.len()], overlaps: Vec::new(), count: 0 };
    for l in (0..prep.n).filter(|&l| l != i) {
        let (sl, lo, hi) = iv(l);
        for (slot, (&j, &(sq, lq, uq))) in queries.iter().zip(&q).enumerate() {
            if hi < lq {
                row.certain[slot] += 1;
            } else if !(lo > uq) && l as u32 != j {
                if (row.count as usize) < p.cap as usize {
                    row.overlaps.push((slot as u32, l as u32));
                }
                row.count += 1;
                if sl < sq || (sl == sq && (l as u32) < j) {
                    row.fast[slot] += 1;
                }
            }
        }
    }
    row
}

/// Twin of `pair_stats.wgsl` for row i: the 14 values, with the projection's distances in the
/// original space's scaled units (`y_to_x`).
pub fn pair_stats_row(px: &Prepared, py: &Prepared, y_to_x: f32, i: usize) -> [f32; 14] {
    let n = px.n;
    let d: Vec<(f32, f32)> = (i + 1..n).map(|j| (sqdist(px, i, j).sqrt(), sqdist(py, i, j).sqrt() * y_to_x)).collect();
    let count = d.len().max(1) as f32;
    let (sx, sy) = d.iter().fold((0.0f32, 0.0f32), |a, &(x, y)| (a.0 + x, a.1 + y));
    let (mx, my) = (sx / count, sy / count);
    let mut v = [0.0f32; 14];
    v[0] = sx;
    v[1] = sy;
    for &(x, y) in &d {
        v[2] += x * x;
        v[3] += y * y;
        v[4] += x * y;
        v[5] += (x - y) * (x - y);
        v[7] += (x - mx) * (x - mx);
        v[8] += (y - my) * (y - my);
        v[9] += (x - mx) * (y - my);
    }
    v[6] = if v[3] > 0.0 {
        let alpha = v[4] / v[3];
        d.iter().map(|&(x, y)| (x - alpha * y) * (x - alpha * y)).sum()
    } else {
        v[2]
    };
    v[10] = d.iter().fold(0.0f32, |m, &(x, _)| m.max(x));
    v[11] = d.iter().fold(0.0f32, |m, &(_, y)| m.max(y));
    v[12] = d.iter().fold(1.0e38f32, |m, &(x, _)| m.min(x));
    v[13] = d.iter().fold(1.0e38f32, |m, &(_, y)| m.min(y));
    v
}

/// Twin of `density.wgsl` for row i: Σ_j exp(−(d/max)²/σ) for each σ (max in scaled units).
pub fn density_row(prep: &Prepared, inv_max: f32, sigmas: &[f32], i: usize) -> Vec<f32> {
    sigmas
        .iter()
        .map(|&sigma| {
            (0..prep.n)
                .map(|j| {
                    let t = sqdist(prep, i, j).sqrt() * inv_max;
                    (t * t / -sigma).exp()
                })
                .sum()
        })
        .collect()
}

/// Twin of `distances_tiled.wgsl` for block rows `row0..row0 + rows`: s̃ (rows × n, row-major)
/// and each row's witness count, simulating the workgroups' tile walk (tiles of rows and
/// points, coordinates staged in sub-chunks of `tiles.coords`, 4 × 4 register blocks). Each
/// sum takes its terms in coordinate order, so s̃ equals [`sqdist`] bit for bit.
pub fn distances_tiled(prep: &Prepared, tiles: Tiles, row0: usize, rows: usize) -> (Vec<f32>, Vec<u32>) {
    let (n, d) = (prep.n, prep.dim);
    let (tr, tp, kc) = (tiles.rows() as usize, tiles.points() as usize, tiles.coords as usize);
    let rb = REGISTER_BLOCK as usize;
    let coord = |p: usize, last: usize, c: usize| if p < last { prep.pts[p * d + c] } else { 0.0 };
    let mut s = vec![0.0f32; rows * n];
    let mut trips = vec![0u32; rows];
    let (gx, gy) = tiles.groups(rows, n);
    for wy in 0..gy as usize {
        for wx in 0..gx as usize {
            let (r0, p0) = (wy * tr, wx * tp);
            let mut wg_trips = 0u32;
            for ty in 0..tiles.threads_rows as usize {
                for tx in 0..tiles.threads_points as usize {
                    let (rr, pp) = (r0 + rb * ty, p0 + rb * tx);
                    let mut acc = [[0.0f32; 4]; 4];
                    let mut done = 0u32;
                    for c0 in (0..d).step_by(kc) {
                        for c in c0..(c0 + kc).min(d) {
                            done += 1;
                            for (a, row) in acc.iter_mut().enumerate() {
                                let x = coord(row0 + rr + a, row0 + rows, c);
                                for (b, v) in row.iter_mut().enumerate() {
                                    let t = x - coord(pp + b, n, c);
                                    *v += t * t;
                                }
                            }
                        }
                    }
                    for (a, row) in acc.iter().enumerate() {
                        for (b, &v) in row.iter().enumerate() {
                            if rr + a < rows && pp + b < n {
                                s[(rr + a) * n + pp + b] = v;
                            }
                        }
                    }
                    wg_trips += done;
                }
            }
            for q in 0..tr {
                if r0 + q < rows {
                    trips[r0 + q] += wg_trips;
                }
            }
        }
    }
    (s, trips)
}
