//! Shared test helpers: the adversarial corpus of `docs/exactness.md` §4 and a brute-force oracle.
#![allow(dead_code)]

use faithful::{Points, Spec};

pub mod cli;
pub mod files;
pub mod zadu;

/// The crate's seeded generator.
pub use faithful::splitmix::SplitMix64 as Rng;

pub fn points(name: &str, n: usize, d: usize, f: impl FnMut(usize, usize) -> f64) -> Points {
    let mut f = f;
    let v = (0..n * d).map(|t| f(t / d, t % d)).collect();
    Points::from_vec(name, n, d, v).unwrap()
}

/// n points uniform in the unit cube of dimension d.
pub fn uniform(name: &str, n: usize, d: usize, seed: u64) -> Points {
    let mut rng = Rng(seed);
    points(name, n, d, |_, _| rng.uniform())
}

/// Values from `levels` distinct integers (few levels: many exact ties); uniform for 0.
pub fn levels(name: &str, n: usize, d: usize, levels: u64, seed: u64) -> Points {
    let mut rng = Rng(seed);
    points(name, n, d, |_, _| if levels == 0 { rng.uniform() } else { rng.below(levels) as f64 })
}

/// The neighbourhood measures at `k` on n points (T&C and ca_tnc at a k they allow), then
/// `last` (one more spec).
pub fn neighbourhood_specs(k: usize, n: usize, last: &str) -> Vec<Spec> {
    let kt = k.min((n - 1) / 2).max(1);
    [
        format!("tnc:k={kt}"),
        format!("mrre:k={k}"),
        format!("lcmc:k={k}"),
        format!("nh:k={k}"),
        format!("ca_tnc:k={kt}"),
        last.to_string(),
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

/// Every 4th row a copy of an earlier row.
pub fn with_duplicates(n: usize, d: usize, seed: u64) -> Points {
    let mut rng = Rng(seed);
    let mut v: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
    for i in (3..n).step_by(4) {
        let src = rng.below(i as u64) as usize;
        for c in 0..d {
            v[i * d + c] = v[src * d + c];
        }
    }
    Points::from_vec("dups", n, d, v).unwrap()
}

/// The adversarial corpus: (name, original space, projection). Sizes are odd and not multiples
/// of any block size.
pub fn corpus() -> Vec<(String, Points, Points)> {
    let mut out = Vec::new();
    let mut rng = Rng(7);
    let n = 61;
    let mut push = |name: &str, high: Points, low: Points| out.push((name.to_string(), high, low));
    push("duplicates", with_duplicates(n, 5, 1), with_duplicates(n, 2, 2));
    push("identical", points("same", n, 3, |_, _| 1.5), points("same2", n, 2, |_, c| c as f64));
    push(
        "lattice",
        points("lat", n, 4, |i, c| ((i >> (2 * c)) & 3) as f64),
        points("latl", n, 2, |i, c| ((i * (c + 1)) % 5) as f64),
    );
    let mut jit = Rng(3);
    push(
        "lattice_jitter_1e-9",
        points("latj", n, 4, |i, c| ((i >> (2 * c)) & 3) as f64 + 1e-9 * (jit.uniform() - 0.5)),
        points("latjl", n, 2, |i, c| ((i * (c + 1)) % 5) as f64 + 1e-9 * (jit.uniform() - 0.5)),
    );
    push(
        "offset_1e4",
        points("off", n, 6, |_, _| 1e4 + rng.uniform()),
        points("offl", n, 2, |_, _| -1e4 + rng.uniform()),
    );
    push(
        "scale_1e-20",
        points("tiny", n, 3, |_, _| 1e-20 * rng.uniform()),
        points("tinyl", n, 2, |_, _| 1e-20 * rng.uniform()),
    );
    push(
        "scale_1e20",
        points("huge", n, 3, |_, _| 1e20 * rng.uniform()),
        points("hugel", n, 2, |_, _| 1e20 * rng.uniform()),
    );
    push("dim_1", points("d1", n, 1, |i, _| (i % 7) as f64), points("d1l", n, 1, |i, _| (i % 5) as f64 * 0.5));
    push("generic", points("g", 97, 8, |_, _| rng.uniform()), points("gl", 97, 2, |_, _| rng.uniform()));
    out
}

/// Brute force: the full distance matrix, each row fully sorted by (d, j).
pub struct Oracle {
    pub n: usize,
    /// The reference's squared distances s(i, j), and d = √s.
    pub sq: Vec<f64>,
    pub dist: Vec<f64>,
    /// order[i] = all j != i sorted by (d(i,j), j).
    pub order: Vec<Vec<u32>>,
    /// rank[i*n + j], 1-based (0 on the diagonal).
    pub rank: Vec<u32>,
}

impl Oracle {
    pub fn new(p: &Points) -> Self {
        let n = p.n();
        let mut dist = vec![0.0; n * n];
        let mut sq = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0f64;
                for c in 0..p.dim() {
                    let t = p.row(i)[c] - p.row(j)[c];
                    s += t * t;
                }
                sq[i * n + j] = s;
                dist[i * n + j] = s.sqrt();
            }
        }
        let mut order = Vec::with_capacity(n);
        let mut rank = vec![0; n * n];
        for i in 0..n {
            let mut o: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).collect();
            o.sort_by(|&a, &b| {
                dist[i * n + a as usize].partial_cmp(&dist[i * n + b as usize]).unwrap().then(a.cmp(&b))
            });
            for (pos, &j) in o.iter().enumerate() {
                rank[i * n + j as usize] = pos as u32 + 1;
            }
            order.push(o);
        }
        Oracle { n, sq, dist, order, rank }
    }
    pub fn knn(&self, i: usize, k: usize) -> &[u32] {
        &self.order[i][..k]
    }
    pub fn s(&self, i: usize, j: usize) -> f64 {
        self.sq[i * self.n + j]
    }
    pub fn d(&self, i: usize, j: usize) -> f64 {
        self.dist[i * self.n + j]
    }
    pub fn r(&self, i: usize, j: usize) -> u32 {
        self.rank[i * self.n + j]
    }
}

/// `part` (a partial's JSON, changed by meaning) sealed again ([`faithful::Partial::seal`]),
/// as a buggy writer would seal it, so that the fold's own checks see the change rather than
/// the checksum; a document that is not a partial's shape stays as it is (the reader refuses
/// it).
pub fn resealed(part: &serde_json::Value) -> String {
    match serde_json::from_value::<faithful::Partial>(part.clone()) {
        Ok(mut p) => {
            p.seal();
            p.to_json()
        }
        Err(_) => part.to_string(),
    }
}
