//! The bundled example: UCI handwritten digits (1797×64, 10 classes; CC BY 4.0, Alpaydin &
//! Kaynak 1998, via scikit-learn's copy) with two projections computed here, with no network
//! and no Python: PCA to 2-D and a seeded sparse random projection (Achlioptas).
//!
//! Both use only +, −, ×, ÷ and √ (correctly rounded in IEEE 754), so every platform, wasm
//! included, computes the same bits.

use crate::data::{Labels, Points};

const DIGITS: &[u8] = include_bytes!("../data/digits.u8");
const N: usize = 1797;
const D: usize = 64;

/// The seed of the bundled random projection.
pub const RANDOM_SEED: u64 = 42;

/// An original space, its projections, and labels.
pub struct Example {
    pub high: Points,
    pub projections: Vec<Points>,
    pub labels: Labels,
}

/// The digits data with its PCA and random projections.
pub fn digits() -> Example {
    let mut x = Vec::with_capacity(N * D);
    let mut labels = Vec::with_capacity(N);
    for row in DIGITS.chunks_exact(D + 1) {
        x.extend(row[..D].iter().map(|&v| f64::from(v)));
        labels.push(i64::from(row[D]));
    }
    let pca = pca2(&x, N, D);
    let rp = sparse_random_projection(&x, N, D, 2, RANDOM_SEED);
    let points = |name: &str, v: Vec<f64>, d: usize| Points::from_vec(name, N, d, v).expect("bundled data is valid");
    Example {
        high: points("digits", x, D),
        projections: vec![points("pca", pca, 2), points("random_projection", rp, 2)],
        labels: Labels::new(labels),
    }
}

/// PCA to two components: power iteration with deflation on the covariance matrix; each
/// component's sign makes its largest-|·| entry positive (as `zadu_datasets.py` does).
pub fn pca2(x: &[f64], n: usize, d: usize) -> Vec<f64> {
    let mut mean = vec![0.0; d];
    for row in x.chunks_exact(d) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let xc: Vec<f64> = x.chunks_exact(d).flat_map(|r| r.iter().zip(&mean).map(|(v, m)| v - m)).collect();
    let mut cov = vec![0.0; d * d];
    for row in xc.chunks_exact(d) {
        for a in 0..d {
            for b in 0..d {
                cov[a * d + b] += row[a] * row[b];
            }
        }
    }
    let mut comps = Vec::new();
    for c in 0..2 {
        let mut v: Vec<f64> = (0..d).map(|i| 1.0 + (i + c) as f64 / d as f64).collect();
        for _ in 0..2000 {
            let mut w = vec![0.0; d];
            for a in 0..d {
                for b in 0..d {
                    w[a] += cov[a * d + b] * v[b];
                }
            }
            let norm = w.iter().map(|t| t * t).sum::<f64>().sqrt();
            v = w.into_iter().map(|t| t / norm).collect();
        }
        let big = v.iter().copied().fold(0.0f64, |m, t| if t.abs() > m.abs() { t } else { m });
        if big < 0.0 {
            v.iter_mut().for_each(|t| *t = -*t);
        }
        // Deflate: cov -= λ v vᵀ.
        let mut lambda = 0.0;
        for a in 0..d {
            for b in 0..d {
                lambda += v[a] * cov[a * d + b] * v[b];
            }
        }
        for a in 0..d {
            for b in 0..d {
                cov[a * d + b] -= lambda * v[a] * v[b];
            }
        }
        comps.push(v);
    }
    xc.chunks_exact(d)
        .flat_map(|r| comps.iter().map(move |c| r.iter().zip(c).map(|(a, b)| a * b).sum::<f64>()))
        .collect()
}

/// Achlioptas' sparse random projection with entries −1, 0, +1 (probabilities 1/6, 2/3, 1/6)
/// drawn from SplitMix64; integer data stays integer, so the projection is exact.
pub fn sparse_random_projection(x: &[f64], _n: usize, d: usize, out: usize, seed: u64) -> Vec<f64> {
    let mut rng = crate::splitmix::SplitMix64(seed);
    let mut next = move || rng.next_u64();
    let r: Vec<f64> = (0..d * out)
        .map(|_| match next() % 6 {
            0 => -1.0,
            1 => 1.0,
            _ => 0.0,
        })
        .collect();
    x.chunks_exact(d)
        .flat_map(|row| (0..out).map(|o| (0..d).map(|c| row[c] * r[c * out + o]).sum::<f64>()).collect::<Vec<_>>())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_loads_with_projections() {
        let ex = digits();
        assert_eq!((ex.high.n(), ex.high.dim()), (1797, 64));
        assert_eq!(ex.labels.classes(), 10);
        assert_eq!(ex.projections.len(), 2);
        // PCA components are uncorrelated and the first has the larger variance.
        let p = &ex.projections[0];
        let (mut s00, mut s11, mut s01) = (0.0, 0.0, 0.0);
        for i in 0..p.n() {
            let r = p.row(i);
            s00 += r[0] * r[0];
            s11 += r[1] * r[1];
            s01 += r[0] * r[1];
        }
        assert!(s00 > s11 && s11 > 0.0);
        assert!(s01.abs() < 1e-6 * s00, "components not orthogonal: {s01}");
        // The random projection of integer pixels is integer.
        assert!(ex.projections[1].as_slice().iter().all(|v| v.fract() == 0.0));
    }
}
