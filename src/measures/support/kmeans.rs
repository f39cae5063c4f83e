//! k-means as ZADU runs it for `c_evm`: scikit-learn's `KMeans(n_clusters, n_init="auto",
//! random_state=seed)`, i.e. one greedy k-means++ initialisation drawn from NumPy's
//! `RandomState(seed)` ([`Mt19937`]) followed by Lloyd iterations (at most 300, tolerance
//! `1e-4 · mean(var(X, axis=0))`), on the data centred on its mean.
//!
//! Every step follows scikit-learn's arithmetic (`‖c‖² - 2x·c` distances, sums in point order,
//! the same random draws), so for a given seed the clustering is scikit-learn's except where
//! scikit-learn's own result hinges on a rounding-level tie (its BLAS kernels and thread
//! scheduling are not reproduced bit for bit). The result never depends on faithful's thread
//! count.

use rayon::prelude::*;

use super::numpy::{blas_dot, mean_rows, pairwise_sum_by, row_norm_sq};
use super::rng::Mt19937;
use crate::data::Points;

const MAX_ITER: usize = 300;
const TOL: f64 = 1e-4;

/// Row-major n×d data.
struct Data<'a> {
    x: &'a [f64],
    d: usize,
}

impl Data<'_> {
    fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
    fn n(&self) -> usize {
        self.x.len() / self.d
    }
}

/// `np.mean(np.var(X, axis=0)) * tol`.
fn tolerance(points: &Points) -> f64 {
    let (n, d) = (points.n(), points.dim());
    let all: Vec<usize> = (0..n).collect();
    let mean = mean_rows(points, &all);
    let var: Vec<f64> = if d == 1 {
        vec![
            pairwise_sum_by(n, &|i| {
                let v = points.row(i)[0] - mean[0];
                v * v
            }) / n as f64,
        ]
    } else {
        let mut acc = vec![0.0; d];
        for i in 0..n {
            for (a, (&x, &m)) in acc.iter_mut().zip(points.row(i).iter().zip(&mean)) {
                let v = x - m;
                *a += v * v;
            }
        }
        acc.iter().map(|a| a / n as f64).collect()
    };
    pairwise_sum_by(d, &|c| var[c]) / d as f64 * TOL
}

/// `_euclidean_distances(c, X, squared=True)`: `max(-2 c·x + ‖c‖² + ‖x‖², 0)` for every x.
fn sq_dists_to(data: &Data, c: &[f64], x_sq: &[f64]) -> Vec<f64> {
    let cc = row_norm_sq(c);
    (0..data.n()).map(|i| (-2.0 * blas_dot(c, data.row(i)) + cc + x_sq[i]).max(0.0)).collect()
}

/// First index with `cdf[idx] > u` (`side="right"`) or `>= u` (`side="left"`).
fn searchsorted(cdf: &[f64], u: f64, right: bool) -> usize {
    cdf.partition_point(|&v| if right { v <= u } else { v < u })
}

/// scikit-learn's `_kmeans_plusplus` (greedy, `2 + ⌊ln k⌋` local trials), unit sample weights.
fn kmeans_plusplus(data: &Data, k: usize, x_sq: &[f64], rng: &mut Mt19937) -> Vec<f64> {
    let n = data.n();
    let trials = 2 + (k as f64).ln() as usize;
    let mut centers = Vec::with_capacity(k * data.d);
    // random_state.choice(n, p=w / w.sum()): cumulative p normalised by its last entry.
    let p = 1.0 / n as f64;
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for _ in 0..n {
        acc += p;
        cdf.push(acc);
    }
    let last = acc;
    cdf.iter_mut().for_each(|v| *v /= last);
    let first = searchsorted(&cdf, rng.random_sample(), true).min(n - 1);
    centers.extend_from_slice(data.row(first));
    let mut closest = sq_dists_to(data, data.row(first), x_sq);
    let mut pot: f64 = closest.iter().sum();
    for _ in 1..k {
        let rand_vals: Vec<f64> = (0..trials).map(|_| rng.random_sample() * pot).collect();
        let mut cum = Vec::with_capacity(n);
        let mut acc = 0.0;
        for &d in &closest {
            acc += d;
            cum.push(acc);
        }
        let candidates: Vec<usize> = rand_vals.iter().map(|&r| searchsorted(&cum, r, false).min(n - 1)).collect();
        let mut best: Option<(f64, Vec<f64>, usize)> = None;
        for &cand in &candidates {
            let mut dist = sq_dists_to(data, data.row(cand), x_sq);
            for (d, &c) in dist.iter_mut().zip(&closest) {
                *d = c.min(*d);
            }
            let cand_pot: f64 = dist.iter().sum();
            if best.as_ref().is_none_or(|(bp, _, _)| cand_pot < *bp) {
                best = Some((cand_pot, dist, cand));
            }
        }
        let (best_pot, best_dist, best_id) = best.expect("at least two trials");
        pot = best_pot;
        closest = best_dist;
        centers.extend_from_slice(data.row(best_id));
    }
    centers
}

/// `_euclidean_dense_dense(a, b, squared=True)`: blocks of four, then the rest.
fn center_shift_sq(a: &[f64], b: &[f64]) -> f64 {
    let d = a.len();
    let mut result = 0.0;
    let blocks = d / 4;
    for q in 0..blocks {
        let s = |t: usize| (a[4 * q + t] - b[4 * q + t]) * (a[4 * q + t] - b[4 * q + t]);
        result += s(0) + s(1) + s(2) + s(3);
    }
    for t in 4 * blocks..d {
        result += (a[t] - b[t]) * (a[t] - b[t]);
    }
    result
}

/// Nearest center of every point by `‖c‖² - 2x·c` (first minimum).
fn assign(data: &Data, centers: &[f64], k: usize) -> Vec<u32> {
    let d = data.d;
    let c_sq: Vec<f64> = (0..k).map(|j| row_norm_sq(&centers[j * d..(j + 1) * d])).collect();
    (0..data.n())
        .into_par_iter()
        .map(|i| {
            let x = data.row(i);
            let mut best = 0u32;
            let mut best_d = c_sq[0] + -2.0 * blas_dot(x, &centers[..d]);
            for j in 1..k {
                let dist = c_sq[j] + -2.0 * blas_dot(x, &centers[j * d..(j + 1) * d]);
                if dist < best_d {
                    best_d = dist;
                    best = j as u32;
                }
            }
            best
        })
        .collect()
}

/// One Lloyd step (`lloyd_iter_chunked_dense`): labels, new centers (empty clusters relocated to
/// the points farthest from their centers), squared center shifts.
fn lloyd_step(data: &Data, centers: &[f64], k: usize, labels: &mut Vec<u32>) -> (Vec<f64>, Vec<f64>) {
    let d = data.d;
    *labels = assign(data, centers, k);
    let mut new = vec![0.0; k * d];
    let mut weight = vec![0.0f64; k];
    for (i, &l) in labels.iter().enumerate() {
        let l = l as usize;
        weight[l] += 1.0;
        for (c, &x) in new[l * d..(l + 1) * d].iter_mut().zip(data.row(i)) {
            *c += x;
        }
    }
    let empty: Vec<usize> = (0..k).filter(|&j| weight[j] == 0.0).collect();
    if !empty.is_empty() {
        let dist: Vec<f64> = (0..data.n())
            .map(|i| {
                let l = labels[i] as usize;
                pairwise_sum_by(d, &|c| {
                    let v = data.row(i)[c] - centers[l * d + c];
                    v * v
                })
            })
            .collect();
        if dist.iter().any(|&v| v > 0.0) {
            // The farthest points, farthest first (scikit-learn's argpartition leaves ties in an
            // unspecified order; here the lower index wins).
            let mut order: Vec<usize> = (0..data.n()).collect();
            order.sort_by(|&a, &b| dist[b].total_cmp(&dist[a]).then(a.cmp(&b)));
            for (&new_id, &far) in empty.iter().zip(&order) {
                let old = labels[far] as usize;
                for c in 0..d {
                    let x = data.row(far)[c];
                    new[old * d + c] -= x;
                    new[new_id * d + c] = x;
                }
                weight[new_id] = 1.0;
                weight[old] -= 1.0;
            }
        }
    }
    // _average_centers: multiply by 1/weight; an (still) empty cluster copies the heaviest one.
    let heaviest = weight.iter().enumerate().fold(0, |b, (j, &w)| if w > weight[b] { j } else { b });
    for j in 0..k {
        if weight[j] > 0.0 {
            let alpha = 1.0 / weight[j];
            new[j * d..(j + 1) * d].iter_mut().for_each(|c| *c *= alpha);
        } else {
            for c in 0..d {
                new[j * d + c] = new[heaviest * d + c];
            }
        }
    }
    let shift: Vec<f64> =
        (0..k).map(|j| center_shift_sq(&new[j * d..(j + 1) * d], &centers[j * d..(j + 1) * d]).sqrt()).collect();
    (new, shift)
}

/// The cluster (0..k) of every point: `KMeans(n_clusters=k, n_init="auto", random_state=seed)`.
pub(in crate::measures) fn kmeans(points: &Points, k: usize, seed: u32) -> Vec<u32> {
    let (n, d) = (points.n(), points.dim());
    assert!((1..=n).contains(&k), "1 <= k <= n");
    let tol = tolerance(points);
    let all: Vec<usize> = (0..n).collect();
    let mean = mean_rows(points, &all);
    let x: Vec<f64> =
        (0..n).flat_map(|i| points.row(i).iter().zip(&mean).map(|(v, m)| v - m).collect::<Vec<_>>()).collect();
    let data = Data { x: &x, d };
    let x_sq: Vec<f64> = (0..n).map(|i| row_norm_sq(data.row(i))).collect();
    let mut rng = Mt19937::new(seed);
    let mut centers = kmeans_plusplus(&data, k, &x_sq, &mut rng);
    let mut labels = Vec::new();
    let mut old: Option<Vec<u32>> = None;
    let mut strict = false;
    for _ in 0..MAX_ITER {
        let (new, shift) = lloyd_step(&data, &centers, k, &mut labels);
        centers = new;
        if old.as_ref() == Some(&labels) {
            strict = true;
            break;
        }
        if pairwise_sum_by(k, &|j| shift[j] * shift[j]) <= tol {
            break;
        }
        old = Some(labels.clone());
    }
    if !strict {
        labels = assign(&data, &centers, k);
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measures::support::contingency::Contingency;

    /// Well-separated blobs in 2-D and 5-D (a deterministic generator).
    fn blobs(n: usize, d: usize, k: usize, seed: u64) -> (Points, Vec<u32>) {
        let mut s = seed;
        let mut uniform = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let truth: Vec<u32> = (0..n).map(|i| (i % k) as u32).collect();
        let v = truth
            .iter()
            .flat_map(|&c| {
                (0..d).map(|j| 100.0 * ((c as usize * 7 + j * 3) % 11) as f64 + uniform()).collect::<Vec<_>>()
            })
            .collect();
        (Points::from_vec("blobs", n, d, v).unwrap(), truth)
    }

    #[test]
    fn recovers_well_separated_blobs() {
        for (n, d, k) in [(300, 2, 3), (500, 5, 6), (1000, 2, 10)] {
            let (p, truth) = blobs(n, d, k, 11);
            let got = kmeans(&p, k, 0);
            assert_eq!(Contingency::new(&truth, &got).adjusted_rand(), 1.0, "n={n} d={d} k={k}");
        }
    }

    #[test]
    fn deterministic_for_a_seed_and_thread_count() {
        let (p, _) = blobs(700, 3, 4, 5);
        let a = kmeans(&p, 4, 7);
        let b = kmeans(&p, 4, 7);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| kmeans(&p, 4, 7));
        assert_eq!(a, b);
        assert_eq!(a, one);
    }

    /// scikit-learn's `KMeans(n_clusters=#classes, n_init="auto", random_state=0).labels_` on
    /// the fixture projections (tests/fixtures/seeded_zadu.json): the same labels, not only the
    /// same partition.
    #[test]
    fn matches_scikit_learn_kmeans() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("seeded_zadu.json")).unwrap()).unwrap();
        let mut compared = 0;
        for rec in fixture["records"].as_array().unwrap().iter().filter(|r| r["kind"] == "kmeans_labels") {
            let dir = root.join(rec["dataset"].as_str().unwrap());
            let low = crate::data::read_points(dir.join("ld.npy")).unwrap();
            let labels = crate::data::read_labels(dir.join("label.npy")).unwrap();
            let want: Vec<u32> = rec["labels"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
            assert_eq!(kmeans(&low, labels.classes(), 0), want, "{}", dir.display());
            compared += 1;
        }
        assert_eq!(compared, 6);
    }

    #[test]
    fn more_clusters_than_distinct_points() {
        // Three distinct points, four clusters: scikit-learn warns and returns 3 clusters.
        let p = Points::from_vec("p", 6, 1, vec![0.0, 0.0, 1.0, 1.0, 5.0, 5.0]).unwrap();
        let labels = kmeans(&p, 4, 0);
        assert_eq!(labels.len(), 6);
        assert_eq!(labels[0], labels[1]);
        assert_eq!(labels[2], labels[3]);
        assert_eq!(labels[4], labels[5]);
    }
}
