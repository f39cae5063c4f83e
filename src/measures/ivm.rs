//! Internal validation measures (`ivm`): scikit-learn's silhouette, Calinski-Harabasz and
//! Davies-Bouldin scores of the projection with the labels as the clustering, and beyond ZADU
//! Dunn's index and the average between/within distance ratio (`class_distances`). The output
//! key is the measure's name, as ZADU returns it.
//!
//! The arithmetic follows scikit-learn 1.x step by step: distances as `euclidean_distances`
//! computes them (`‖x‖² - 2x·y + ‖y‖²`, clipped at 0, self-distance 0), per-class sums in point
//! order (`np.bincount`), NumPy's pairwise sums for `np.sum` / `np.mean`.

use rayon::prelude::*;

use super::support::centroids::{centroids, class_rows};
use super::support::numpy::{pairwise_sum_by, row_norm_sq, sk_dist};
use super::support::params::param_str;
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::{Error, Result};

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let labels = ctx.labels();
    let (n, l) = (ctx.n(), labels.classes());
    if l >= n {
        // scikit-learn's check_number_of_labels: 2 <= n_labels <= n_samples - 1.
        return Err(Error::Undefined {
            id: "ivm".into(),
            projection: None,
            reason: format!("the labels have {l} classes for {n} points (scikit-learn needs 2 <= classes <= n - 1)"),
        });
    }
    let codes = labels.codes();
    let rows: Vec<usize> = (0..n).collect();
    let members = class_rows(&rows, codes, l);
    // The key is the measure's name, as ZADU returns it.
    let measure = param_str(r, "measure");
    let value = match measure {
        "silhouette" => silhouette(ctx.low, codes, &members),
        "calinski_harabasz" => calinski_harabasz(ctx.low, &members),
        "dunn" => super::class_distances::dunn(ctx.low, labels)?,
        "average_between_within" => super::class_distances::average_between_within(ctx.low, labels)?,
        _ => davies_bouldin(ctx.low, &members),
    };
    Ok(Output::new().value(measure, value))
}

/// `silhouette_score`: mean over points of `(b - a) / max(a, b)`, 0 for points alone in their class.
fn silhouette(y: &Points, codes: &[u32], members: &[Vec<usize>]) -> f64 {
    let n = y.n();
    let l = members.len();
    let freq: Vec<f64> = members.iter().map(|m| m.len() as f64).collect();
    let norms: Vec<f64> = (0..n).map(|i| row_norm_sq(y.row(i))).collect();
    let s: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut sums = vec![0.0; l];
            let (xi, xxi) = (y.row(i), norms[i]);
            for j in 0..n {
                let d = if i == j { 0.0 } else { sk_dist(xi, xxi, y.row(j), norms[j]) };
                sums[codes[j] as usize] += d;
            }
            let own = codes[i] as usize;
            let inter = (0..l).filter(|&c| c != own).map(|c| sums[c] / freq[c]).fold(f64::INFINITY, f64::min);
            let intra = sums[own] / (freq[own] - 1.0);
            let v = (inter - intra) / intra.max(inter);
            // np.nan_to_num: a lone point (0/0) or a = b = 0 scores 0.
            if v.is_nan() { 0.0 } else { v }
        })
        .collect();
    pairwise_sum_by(n, &|i| s[i]) / n as f64
}

/// `calinski_harabasz_score`: between- over within-class dispersion, scaled by `(n - L)/(L - 1)`.
fn calinski_harabasz(y: &Points, members: &[Vec<usize>]) -> f64 {
    let (n, dim, l) = (y.n(), y.dim(), members.len());
    let all: Vec<usize> = (0..n).collect();
    let mean = super::support::numpy::mean_rows(y, &all);
    let cents = centroids(y, members);
    let (mut extra, mut intra) = (0.0, 0.0);
    for (m, c) in members.iter().zip(&cents) {
        extra += m.len() as f64
            * pairwise_sum_by(dim, &|j| {
                let d = c[j] - mean[j];
                d * d
            });
        intra += pairwise_sum_by(m.len() * dim, &|t| {
            let d = y.row(m[t / dim])[t % dim] - c[t % dim];
            d * d
        });
    }
    if intra == 0.0 { 1.0 } else { extra * (n - l) as f64 / (intra * (l as f64 - 1.0)) }
}

/// `davies_bouldin_score`: mean over classes of the worst `(s_a + s_b) / d(c_a, c_b)`.
fn davies_bouldin(y: &Points, members: &[Vec<usize>]) -> f64 {
    let l = members.len();
    let cents = centroids(y, members);
    let cnorms: Vec<f64> = cents.iter().map(|c| row_norm_sq(c)).collect();
    let intra: Vec<f64> = members
        .iter()
        .zip(cents.iter().zip(&cnorms))
        .map(|(m, (c, &cc))| {
            pairwise_sum_by(m.len(), &|t| {
                let x = y.row(m[t]);
                sk_dist(x, row_norm_sq(x), c, cc)
            }) / m.len() as f64
        })
        .collect();
    let cdist = |a: usize, b: usize| if a == b { 0.0 } else { sk_dist(&cents[a], cnorms[a], &cents[b], cnorms[b]) };
    // np.isclose(x, 0): |x| <= 1e-8.
    let near_zero = |x: f64| x.abs() <= 1e-8;
    if intra.iter().all(|&s| near_zero(s)) || (0..l).all(|a| (0..l).all(|b| near_zero(cdist(a, b)))) {
        return 0.0;
    }
    let scores: Vec<f64> = (0..l)
        .map(|a| {
            (0..l)
                .map(|b| {
                    let d = cdist(a, b);
                    (intra[a] + intra[b]) / if d == 0.0 { f64::INFINITY } else { d }
                })
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect();
    pairwise_sum_by(l, &|a| scores[a]) / l as f64
}
