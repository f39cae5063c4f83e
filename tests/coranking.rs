//! The co-ranking family (`coranking`) against a dense oracle: both full rank matrices and the
//! co-ranking matrix built by brute force, every curve from its definition. The integer-derived
//! curves (Q_NX, R_NX, LCMC, T, C) are identical, MRRE within 1e-12; for several K the curves
//! agree with `tnc:k=K`, `mrre:k=K`, `lcmc:k=K`; the result is the same bits for any thread
//! count and block size.

mod common;

use approx::assert_relative_eq;
use common::{Oracle, Rng, corpus, points, with_duplicates};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use faithful::{Cancel, Error, Evaluator, Options, Points, ProgressFn, Score, Spec};

/// The corpus, plus larger cases (n ≤ 400) with duplicates, an integer lattice and 1e-9 jitter.
fn cases() -> Vec<(String, Points, Points)> {
    let mut out = corpus();
    out.push(("duplicates_300".into(), with_duplicates(300, 6, 11), with_duplicates(300, 2, 12)));
    let mut jit = Rng(5);
    out.push((
        "lattice_jitter_400".into(),
        points("lat", 400, 3, |i, c| ((i / 7usize.pow(c as u32)) % 7) as f64 + 1e-9 * (jit.uniform() - 0.5)),
        points("latl", 400, 2, |i, c| ((i * (2 * c + 1)) % 13) as f64),
    ));
    out
}

fn coranking(high: &Points, low: &Points, spec: &str, opts: Options) -> Score {
    let eval = Evaluator::new(high.clone(), opts);
    eval.measure(low, None, &[spec.parse::<Spec>().unwrap()]).unwrap().remove(0)
}

/// Every curve and value from the definitions, on the oracle's full rank matrices.
struct Dense {
    n: usize,
    /// q[(a-1)*(n-1) + (b-1)] = #{(i,j) : ρ_ij = a, r_ij = b}.
    q: Vec<u64>,
    ox: Oracle,
    oy: Oracle,
}

impl Dense {
    fn new(high: &Points, low: &Points) -> Self {
        let (ox, oy) = (Oracle::new(high), Oracle::new(low));
        let n = high.n();
        let mut q = vec![0u64; (n - 1) * (n - 1)];
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let (a, b) = (ox.r(i, j) as usize, oy.r(i, j) as usize);
                q[(a - 1) * (n - 1) + (b - 1)] += 1;
            }
        }
        Dense { n, q, ox, oy }
    }
    fn q(&self, a: usize, b: usize) -> u64 {
        self.q[(a - 1) * (self.n - 1) + (b - 1)]
    }
    /// Q_NX(K) from the co-ranking matrix's upper-left K×K block.
    fn qnx(&self, k: usize) -> f64 {
        let s: u64 = (1..=k).flat_map(|a| (1..=k).map(move |b| (a, b))).map(|(a, b)| self.q(a, b)).sum();
        s as f64 / (self.n * k) as f64
    }
    fn rnx(&self, k: usize) -> f64 {
        let n = self.n;
        ((n - 1) as f64 * self.qnx(k) - k as f64) / (n - 1 - k) as f64
    }
    /// ZADU's T(K) numerator Σ_i Σ_{j ∈ N^Y_K(i) ∖ N^X_K(i)} (ρ_ij − K), from the kNN sets;
    /// checked against the co-ranking matrix's lower-left block.
    fn excess(&self, k: usize, base: &Oracle, other: &Oracle, transpose: bool) -> u64 {
        let n = self.n;
        let mut s = 0u64;
        for i in 0..n {
            for &j in other.knn(i, k) {
                if !base.knn(i, k).contains(&j) {
                    s += (base.r(i, j as usize) as usize - k) as u64;
                }
            }
        }
        let mut from_q = 0u64;
        for far in k + 1..n {
            for near in 1..=k {
                let c = if transpose { self.q(near, far) } else { self.q(far, near) };
                from_q += c * (far - k) as u64;
            }
        }
        assert_eq!(s, from_q, "T/C numerator from the kNN sets vs the co-ranking matrix, K={k}");
        s
    }
    fn tnc(&self, k: usize) -> (f64, f64) {
        let n = self.n;
        let f = 2.0 / ((k * (2 * n - 3 * k - 1)) as f64);
        let t = self.excess(k, &self.ox, &self.oy, false);
        let c = self.excess(k, &self.oy, &self.ox, true);
        (1.0 - t as f64 * f / n as f64, 1.0 - c as f64 * f / n as f64)
    }
    /// ZADU's MRRE at K: per point, then the mean.
    fn mrre(&self, k: usize) -> (f64, f64) {
        let n = self.n;
        let c: f64 = (1..=k as i64).map(|r| (n as i64 - 2 * r + 1).abs() as f64 / r as f64).sum();
        let (mut f, mut m) = (0.0, 0.0);
        for i in 0..n {
            let term = |j: u32, own: &Oracle| {
                let (a, b) = (self.ox.r(i, j as usize) as f64, self.oy.r(i, j as usize) as f64);
                (a - b).abs() / own.r(i, j as usize) as f64
            };
            f += 1.0 - self.oy.knn(i, k).iter().map(|&j| term(j, &self.oy)).sum::<f64>() / c;
            m += 1.0 - self.ox.knn(i, k).iter().map(|&j| term(j, &self.ox)).sum::<f64>() / c;
        }
        (f / n as f64, m / n as f64)
    }
    /// Point i's own R_NX AUC.
    fn local_auc(&self, i: usize, k_max: usize) -> f64 {
        let n = self.n;
        let (mut num, mut den) = (0.0, 0.0);
        for k in 1..=k_max {
            let both = self.ox.knn(i, k).iter().filter(|j| self.oy.knn(i, k).contains(j)).count();
            let r = ((n - 1) as f64 * (both as f64 / k as f64) - k as f64) / (n - 1 - k) as f64;
            num += r / k as f64;
            den += 1.0 / k as f64;
        }
        num / den
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn curves_match_the_dense_oracle() {
    for (name, high, low) in cases() {
        let n = high.n();
        let d = Dense::new(&high, &low);
        let score = coranking(&high, &low, "coranking", opts(None, None));
        let k_max = n - 2;
        let kt = (n - 1) / 2;
        let curve = |key: &str| score.curve(key).unwrap_or_else(|| panic!("{name}: no curve {key}"));
        let qnx: Vec<f64> = (1..=k_max).map(|k| d.qnx(k)).collect();
        assert_eq!(bits(curve("qnx")), bits(&qnx), "{name}: Q_NX");
        let rnx: Vec<f64> = (1..=k_max).map(|k| d.rnx(k)).collect();
        assert_eq!(bits(curve("rnx")), bits(&rnx), "{name}: R_NX");
        let lcmc: Vec<f64> = (1..=k_max).map(|k| qnx[k - 1] - k as f64 / (n - 1) as f64).collect();
        assert_eq!(bits(curve("lcmc")), bits(&lcmc), "{name}: LCMC");
        let (t, c): (Vec<f64>, Vec<f64>) = (1..=kt).map(|k| d.tnc(k)).unzip();
        assert_eq!(bits(curve("trustworthiness")), bits(&t), "{name}: T");
        assert_eq!(bits(curve("continuity")), bits(&c), "{name}: C");
        for k in 1..=k_max {
            let (f, m) = d.mrre(k);
            assert_relative_eq!(curve("mrre_false")[k - 1], f, max_relative = 1e-12, epsilon = 1e-12);
            assert_relative_eq!(curve("mrre_missing")[k - 1], m, max_relative = 1e-12, epsilon = 1e-12);
        }
        // Scalars from their definitions.
        let auc =
            (1..=k_max).map(|k| rnx[k - 1] / k as f64).sum::<f64>() / (1..=k_max).map(|k| 1.0 / k as f64).sum::<f64>();
        assert_relative_eq!(score.value("auc_rnx").unwrap(), auc, max_relative = 1e-12, epsilon = 1e-12);
        let best = (1..=k_max).fold(1, |b, k| if lcmc[k - 1] > lcmc[b - 1] { k } else { b });
        assert_eq!(score.value("k_max_lcmc").unwrap(), best as f64, "{name}: K_max");
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        assert_relative_eq!(score.value("q_local").unwrap(), mean(&qnx[..best]), max_relative = 1e-12);
        assert_relative_eq!(score.value("q_global").unwrap(), mean(&qnx[best - 1..]), max_relative = 1e-12);
        let local = score.local("local_auc_rnx").unwrap();
        assert_eq!(local.len(), n);
        for i in (0..n).step_by(if n > 100 { 37 } else { 1 }) {
            assert_relative_eq!(local[i], d.local_auc(i, k_max), max_relative = 1e-12, epsilon = 1e-12);
        }
        // The global AUC is the mean of the points' own (R_NX is linear in the counts).
        assert_relative_eq!(mean(local), auc, max_relative = 1e-10, epsilon = 1e-12);
    }
}

/// For several K, the curves at K equal the separate measures at k = K.
#[test]
fn curves_agree_with_tnc_mrre_lcmc_at_each_k() {
    for (name, high, low) in cases() {
        let n = high.n();
        let eval = Evaluator::new(high.clone(), Options::default());
        let k_max = n - 2;
        let score = eval.measure(&low, None, &["coranking".parse().unwrap()]).unwrap().remove(0);
        let curve = |key: &str| score.curve(key).unwrap().to_vec();
        let (t, c, mf, mm, lc) =
            (curve("trustworthiness"), curve("continuity"), curve("mrre_false"), curve("mrre_missing"), curve("lcmc"));
        assert_eq!(t.len(), (n - 1) / 2, "{name}: T up to the largest K < n/2");
        assert_eq!((mf.len(), lc.len()), (k_max, k_max));
        for k in [1, 2, 5, 20, (n - 1) / 2, n / 2 + 3, k_max].into_iter().filter(|&k| k >= 1 && k <= k_max) {
            let mut specs: Vec<Spec> =
                vec![format!("mrre:k={k}").parse().unwrap(), format!("lcmc:k={k}").parse().unwrap()];
            if k <= (n - 1) / 2 {
                specs.push(format!("tnc:k={k}").parse().unwrap());
            }
            let s = eval.measure(&low, None, &specs).unwrap();
            let tag = format!("{name} K={k}");
            let close = |a: f64, b: f64, what: &str| {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{tag} {what}: coranking {a}, measure {b}");
            };
            close(mf[k - 1], s[0].value("mrre_false").unwrap(), "mrre_false");
            close(mm[k - 1], s[0].value("mrre_missing").unwrap(), "mrre_missing");
            close(lc[k - 1], s[1].value("lcmc").unwrap(), "lcmc");
            if k <= (n - 1) / 2 {
                close(t[k - 1], s[2].value("trustworthiness").unwrap(), "trustworthiness");
                close(c[k - 1], s[2].value("continuity").unwrap(), "continuity");
            }
        }
    }
}

/// The same bits for 1 and 2 threads and several block sizes, values, curves and local values.
#[test]
fn bit_identical_for_threads_and_blocks() {
    for (name, high, low) in
        cases().into_iter().filter(|(n, _, _)| ["duplicates_300", "generic", "lattice"].contains(&n.as_str()))
    {
        let reference = coranking(&high, &low, "coranking", opts(Some(1), Some(1)));
        for (threads, block_rows) in [(Some(2), 1), (Some(2), 7), (Some(1), 64), (Some(2), 1000), (None, 32)] {
            let s = coranking(&high, &low, "coranking", opts(threads, Some(block_rows)));
            let tag = format!("{name} threads={threads:?} block_rows={block_rows}");
            assert_eq!(s.values.len(), 4);
            for ((k, a), (_, b)) in s.values.iter().zip(&reference.values) {
                assert_eq!(a.to_bits(), b.to_bits(), "{tag}: {k}");
            }
            assert_eq!(s.curves.len(), 7, "{tag}");
            for ((k, a), (_, b)) in s.curves.iter().zip(&reference.curves) {
                assert_eq!(bits(a), bits(b), "{tag}: curve {k}");
            }
            assert_eq!(
                bits(s.local("local_auc_rnx").unwrap()),
                bits(reference.local("local_auc_rnx").unwrap()),
                "{tag}"
            );
        }
    }
}

/// `k_max` cuts every curve at K = k_max (T and C at the smaller of k_max and the tnc limit)
/// without changing the values below it.
#[test]
fn k_max_truncates_the_curves() {
    let high = with_duplicates(80, 4, 3);
    let low = with_duplicates(80, 2, 4);
    let full = coranking(&high, &low, "coranking", Options::default());
    for k_max in [1, 10, 39, 40, 78] {
        let s = coranking(&high, &low, &format!("coranking:k_max={k_max}"), Options::default());
        for (key, v) in &s.curves {
            let want = if key == "trustworthiness" || key == "continuity" { k_max.min(39) } else { k_max };
            assert_eq!(v.len(), want, "k_max={k_max} {key}");
            assert_eq!(bits(v), bits(&full.curve(key).unwrap()[..want]), "k_max={k_max} {key}");
        }
    }
}

#[test]
fn k_max_out_of_range_is_a_typed_error() {
    let high = with_duplicates(10, 3, 1);
    let low = with_duplicates(10, 2, 2);
    let eval = Evaluator::new(high, Options::default());
    for bad in ["coranking:k_max=9", "coranking:k_max=-1", "coranking:k_max=x"] {
        let e = eval.measure(&low, None, &[bad.parse().unwrap()]).unwrap_err();
        assert!(
            matches!(&e, Error::BadParam { id, param, .. } if id == "coranking" && param == "k_max"),
            "{bad}: {e:?}"
        );
    }
    assert!(eval.measure(&low, None, &["coranking:k_max=8".parse().unwrap()]).is_ok());
    let two = points("two", 2, 2, |i, c| (i + c) as f64);
    let e = Evaluator::new(two.clone(), Options::default()).measure(&two, None, &["coranking".parse().unwrap()]);
    assert!(matches!(e, Err(Error::BadParam { .. })), "{e:?}");
}

/// The pass reports its rows; a stop asked after the first block of a long run ends it with
/// the typed error at the next row (at most one row per worker later), not after every row.
#[test]
fn a_cancelled_coranking_run_stops_promptly() {
    let n = 3000;
    let mut r = Rng(17);
    let high = points("h", n, 8, |_, _| r.uniform());
    let low = points("l", n, 2, |i, c| high.row(i)[c] + 0.1 * r.uniform());
    let run = |cancel_after_first: bool| {
        let (cancel, seen) = (Cancel::new(), Arc::new(AtomicU64::new(0)));
        let (c, s) = (cancel.clone(), seen.clone());
        let mut o = opts(Some(2), Some(4));
        o.progress = Some(ProgressFn::new(move |p| {
            if p.phase == "co-ranking" {
                assert_eq!(p.total, n as u64);
                s.fetch_max(p.done, Ordering::SeqCst);
                if cancel_after_first {
                    c.request();
                }
            }
        }));
        o.cancel = Some(cancel);
        let t0 = Instant::now();
        let out = Evaluator::new(high.clone(), o).measure(&low, None, &["coranking".parse::<Spec>().unwrap()]);
        (out, seen.load(Ordering::SeqCst), t0.elapsed())
    };
    let (out, done, _) = run(false);
    assert!(out.is_ok(), "{:?}", out.err());
    assert_eq!(done, n as u64, "the progress reaches every row");
    let (out, done, took) = run(true);
    assert!(matches!(out, Err(Error::Interrupted)), "{:?}", out.map(|_| ()));
    // Stopped after the first block: with 2 workers, at most a few 4-row blocks were reported.
    assert!((4..=16).contains(&done), "{done} rows reported after the stop");
    // A hang bound, not a speed test: the whole run takes seconds, the stop milliseconds.
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// Options with per-point values, and the given threads and block rows.
fn opts(threads: Option<usize>, block_rows: Option<usize>) -> Options {
    let mut o = Options::default();
    o.local = true;
    o.threads = threads;
    if let Some(b) = block_rows {
        o.block_rows = b;
    }
    o
}

/// Asked together, coranking and the neighbourhood measures share one pass (the row pass fused
/// with the co-ranking pass: the kNN lists and cross ranks read off its sorted rows): every
/// score and local value is the same bits as each asked alone, over two projections and a
/// second call (the original kNN cached); the report says so.
#[test]
fn the_fused_pass_gives_each_measure_its_own_bits() {
    for (name, high, low) in cases() {
        let n = high.n();
        let k = 5.min((n - 1) / 2);
        let other = points("other", n, 2, |i, c| ((i * (c + 3)) % 7) as f64 * 0.5);
        let labels = faithful::Labels::new((0..n as i64).map(|i| i % 3).collect());
        let spec = |s: String| s.parse::<Spec>().unwrap();
        let corank = spec(format!("coranking:k_max={}", (3 * k).min(n - 2)));
        let rest: Vec<Spec> =
            ["tnc", "mrre", "lcmc", "nh", "ca_tnc"].iter().map(|m| spec(format!("{m}:k={k}"))).collect();
        let together: Vec<Spec> = std::iter::once(corank.clone()).chain(rest.iter().cloned()).collect();
        let fused = Evaluator::new(high.clone(), opts(None, Some(7)));
        let alone = Evaluator::new(high.clone(), opts(None, Some(7)));
        for call in 0..2 {
            let got = fused.measure_many(&[&low, &other], Some(&labels), &together).unwrap();
            assert_eq!(got.run.work.rows_fused, 2 * n as u64, "{name} call {call}");
            assert!(
                got.run.plan.low_index.iter().all(|r| r.reason.contains("fused")),
                "{name}: {:?}",
                got.run.plan.low_index
            );
            for (p, l) in [&low, &other].into_iter().enumerate() {
                let want_c = alone.measure(l, Some(&labels), std::slice::from_ref(&corank)).unwrap();
                let want_r = alone.measure(l, Some(&labels), &rest).unwrap();
                let want: Vec<Score> = want_c.into_iter().chain(want_r).collect();
                let got = &got.projections[p].scores;
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    let vb = |s: &Score| s.values.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
                    assert_eq!(vb(g), vb(w), "{name} call {call} projection {p}: {}", g.id);
                    let lb =
                        |s: &Score| s.local.iter().flatten().map(|(k, v)| (k.clone(), bits(v))).collect::<Vec<_>>();
                    assert_eq!(lb(g), lb(w), "{name} call {call} projection {p}: {} local", g.id);
                    let cb = |s: &Score| s.curves.iter().map(|(k, v)| (k.clone(), bits(v))).collect::<Vec<_>>();
                    assert_eq!(cb(g), cb(w), "{name} call {call} projection {p}: {} curves", g.id);
                }
            }
        }
    }
}

/// The fused pass reads the original space under its metric, or a given distance matrix: the
/// same bits as the passes apart (the projection-only cross ranks of continuity too); a kNN
/// graph has no rows to sort, so with one the passes stay apart and give the same bits.
#[test]
fn the_fused_pass_follows_the_metric_and_the_input() {
    use faithful::{DistanceMatrix, KnnGraph, Metric};
    let n = 150;
    let coords = points("h", n, 5, |i, c| ((i * (c + 3) + i / 7) % 11) as f64 * 0.25 + 0.5);
    let low = points("l", n, 2, |i, c| ((i * (2 * c + 5)) % 13) as f64);
    let spec = |s: &str| s.parse::<Spec>().unwrap();
    let corank = spec("coranking:k_max=20");
    let rest = vec![spec("tnc:k=6"), spec("mrre:k=6"), spec("continuity:k=9"), spec("nh:k=4")];
    let together: Vec<Spec> = std::iter::once(corank.clone()).chain(rest.iter().cloned()).collect();
    let labels = faithful::Labels::new((0..n as i64).map(|i| i % 3).collect());
    let cosine = coords.clone().with_metric(Metric::Cosine).unwrap();
    let mut dist = vec![0.0; n * n];
    for (i, row) in dist.chunks_mut(n).enumerate() {
        faithful::reference::distance_row(&cosine, i, row);
        row[i] = 0.0;
    }
    let matrix = Points::from_distances("d", DistanceMatrix::from_vec("d", n, dist).unwrap());
    let cityblock = coords.clone().with_metric(Metric::Cityblock).unwrap();
    let vb = |s: &Score| s.values.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect::<Vec<_>>();
    let lb = |s: &Score| s.local.iter().flatten().map(|(k, v)| (k.clone(), bits(v))).collect::<Vec<_>>();
    let cb = |s: &Score| s.curves.iter().map(|(k, v)| (k.clone(), bits(v))).collect::<Vec<_>>();
    let mut by_input = Vec::new();
    for (name, high) in [("cosine", cosine), ("distance matrix", matrix), ("cityblock", cityblock)] {
        let got = Evaluator::new(high.clone(), opts(None, Some(16))).measure_many(&[&low], Some(&labels), &together);
        let got = got.unwrap();
        assert_eq!(got.run.work.rows_fused, n as u64, "{name}");
        // The projection is an integer lattice (ranked by integer keys), no original space here is.
        assert_eq!(got.run.work.rows_integer_keys, n as u64, "{name}");
        let alone = Evaluator::new(high, opts(None, Some(16)));
        let want_c = alone.measure(&low, Some(&labels), std::slice::from_ref(&corank)).unwrap();
        let want_r = alone.measure(&low, Some(&labels), &rest).unwrap();
        let want: Vec<Score> = want_c.into_iter().chain(want_r).collect();
        let got = &got.projections[0].scores;
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!((vb(g), lb(g), cb(g)), (vb(w), lb(w), cb(w)), "{name}: {}", g.id);
        }
        by_input.push(got.iter().map(|s| (vb(s), lb(s), cb(s))).collect::<Vec<_>>());
    }
    // The matrix holds the cosine distances: the same scores as the coordinates under cosine.
    assert_eq!(by_input[0], by_input[1]);
    assert_ne!(by_input[0], by_input[2], "the metric changes the scores");

    // From the cosine order's kNN graph: coranking and continuity, never fused.
    let k = 20;
    let mut keys = Vec::new();
    let (mut idx, mut gd) = (Vec::new(), Vec::new());
    let cosine = coords.with_metric(Metric::Cosine).unwrap();
    let mut row = vec![0.0; n];
    for i in 0..n {
        faithful::reference::distance_row(&cosine, i, &mut row);
        let (mut wi, mut wd) = (vec![0; k], vec![0.0; k]);
        faithful::reference::select_knn(&row, i, k, &mut keys, &mut wi, &mut wd);
        idx.extend(wi.iter().map(|&j| j as i64));
        gd.extend(wd);
    }
    let graph = || Points::from_knn_graph("g", KnnGraph::from_arrays("g", n, k, &idx, &gd).unwrap());
    let specs = [corank.clone(), spec("continuity:k=9")];
    let got = Evaluator::new(graph(), opts(None, Some(16))).measure_many(&[&low], None, &specs).unwrap();
    assert_eq!(got.run.work.rows_fused, 0, "a kNN graph has no rows to fuse");
    let alone = Evaluator::new(graph(), opts(None, Some(16)));
    let want: Vec<Score> =
        specs.iter().flat_map(|s| alone.measure(&low, None, std::slice::from_ref(s)).unwrap()).collect();
    for (g, w) in got.projections[0].scores.iter().zip(&want) {
        assert_eq!((vb(g), lb(g), cb(g)), (vb(w), lb(w), cb(w)), "kNN graph: {}", g.id);
    }
}
