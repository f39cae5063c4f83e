//! Cosine and correlation on the GPU: the certified kernels on the unit rows, with the gap
//! between their squared distances and the reference's `2 d(i, j)` added to the bound
//! (docs/exactness.md, "Cosine and correlation on the GPU"). The bound holds on every pair of a
//! hostile corpus (near-parallel and parallel rows, norms from 1e-110 to 1e140, duplicates,
//! near-constant rows under correlation), on the device and on its CPU twin; kNN lists,
//! distances and cross ranks equal the CPU reference bit for bit; metrics without a certified
//! kernel, and norms outside the domain, are served by the CPU with the reason. Runs on
//! lavapipe (Vulkan) and llvmpipe (GL) in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use common::{Rng, points};
use faithful::gpu::{GpuRequest, bound::Params, prepare::prepare_checked, sqdist::bounded_sqdist, twin};
use faithful::reference::distance_pair;
use faithful::{BackendChoice, Evaluator, Metric, Points, Spec};
use gpu_common::{compare_resources, gpu};

/// The hostile corpus, each under cosine and under correlation: (name, high, low).
fn corpus() -> Vec<(String, Points, Points)> {
    let mut rng = Rng(25);
    let mut out: Vec<(String, Vec<f64>, usize, usize)> = Vec::new();
    let generic = |n: usize, d: usize, scale: f64, rng: &mut Rng| -> Vec<f64> {
        (0..n * d).map(|_| scale * (rng.uniform() - 0.3)).collect()
    };
    out.push(("generic_d7".into(), generic(90, 7, 1.0, &mut rng), 90, 7));
    out.push(("generic_d64".into(), generic(70, 64, 1.0, &mut rng), 70, 64));
    // Parallel rows (exact cosine ties at 0), near-parallel ones (1e-12, 1e-15 relative) and
    // duplicates.
    let (n, d) = (80, 9);
    let mut v = generic(n, d, 1.0, &mut rng);
    for i in (1..n).step_by(4) {
        let (src, s) = (i - 1, 1.0 + (i % 7) as f64);
        for c in 0..d {
            v[i * d + c] = s * v[src * d + c];
        }
    }
    for i in (2..n).step_by(4) {
        let src = i - 2;
        for c in 0..d {
            v[i * d + c] = v[src * d + c] * (1.0 + 1e-12 * (c as f64 - 4.0)) + if c == 0 { 1e-15 } else { 0.0 };
        }
    }
    for i in (3..n).step_by(8) {
        for c in 0..d {
            v[i * d + c] = v[(i - 3) * d + c];
        }
    }
    out.push(("parallel_near_parallel".into(), v, n, d));
    // Norms spread over 250 orders of magnitude, down to 1e-110 (above the 2^-400 domain floor).
    let (n, d) = (60, 5);
    let mut v = generic(n, d, 1.0, &mut rng);
    for i in 0..n {
        let scale = [1e-110, 1e-60, 1e-3, 1.0, 1e50, 1e140][i % 6];
        v[i * d..(i + 1) * d].iter_mut().for_each(|x| *x *= scale);
    }
    out.push(("norms_1e-110_to_1e140".into(), v, n, d));
    // Integer lattice rows with many exact ties, and near-constant rows for correlation.
    let (n, d) = (100, 4);
    let mut v: Vec<f64> = (0..n * d).map(|_| 1.0 + rng.below(3) as f64).collect();
    for i in (0..n).step_by(10) {
        for c in 0..d {
            v[i * d + c] = 5.0 + 1e-9 * c as f64;
        }
    }
    for i in 0..n {
        if (0..d).all(|c| v[i * d + c] == v[i * d]) {
            v[i * d] += 1.0;
        }
    }
    out.push(("lattice_and_near_constant".into(), v, n, d));
    let mut corpus = Vec::new();
    for (name, v, n, d) in out {
        let low = points("low", n, 2, |i, c| ((i * (c + 5)) % 13) as f64 + 0.01 * i as f64);
        for metric in [Metric::Cosine, Metric::Correlation] {
            let high = Points::from_vec(name.as_str(), n, d, v.clone()).unwrap().with_metric(metric).unwrap();
            corpus.push((format!("{name}/{metric}"), high, low.clone()));
        }
    }
    corpus
}

/// `|s̃ − 2^{2e} · 2 d_ref| ≤ ε` for every pair, `s̃, ε` from `bounded` (device or twin).
fn check_bound(tag: &str, high: &Points, bounded: impl Fn(usize) -> (Vec<f32>, Vec<f32>)) -> f64 {
    let prep = prepare_checked(high).unwrap();
    assert!(prep.abs_extra > 0.0, "{tag}: the cosine gap is in the bound");
    let n = high.n();
    let mut worst = 0.0f64;
    for i in 0..n {
        let (s, e) = bounded(i);
        for j in 0..n {
            let reference = 2.0 * distance_pair(high, i, j) * prep.scale * prep.scale;
            let err = (f64::from(s[j]) - reference).abs();
            let eps = f64::from(e[j]);
            assert!(err <= eps, "{tag}: |s̃ − 2 d| = {err:e} > ε = {eps:e} at ({i}, {j})");
            if eps > 0.0 {
                worst = worst.max(err / eps);
            }
        }
    }
    worst
}

#[test]
fn twin_bound_holds_on_every_cosine_pair_without_a_gpu() {
    for (tag, high, _) in corpus() {
        let prep = prepare_checked(&high).unwrap();
        let params = Params::new(prep.n, prep.dim).with_extra(prep.abs_extra);
        let worst = check_bound(&tag, &high, |i| twin::sqdist_row(&params, &prep, i));
        assert!(worst < 1.0, "{tag}");
    }
}

#[test]
fn device_bound_holds_on_every_cosine_pair() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (tag, high, _) in corpus() {
        let n = high.n();
        let (_, s, e) = bounded_sqdist(&g, &high, 0..n).unwrap();
        let worst = check_bound(&tag, &high, |i| (s[i * n..(i + 1) * n].to_vec(), e[i * n..(i + 1) * n].to_vec()));
        eprintln!("{tag}: largest |s̃ − 2d| / ε = {worst:.3}");
    }
}

#[test]
fn cosine_and_correlation_resources_equal_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (tag, high, low) in corpus() {
        for k in [1, 5, high.n() / 2 - 1] {
            compare_resources(&g, &format!("{tag} k={k}"), &high, &low, k);
        }
    }
}

fn run(high: &Points, low: &Points, backend: BackendChoice, specs: &[&str]) -> faithful::Evaluation {
    let specs: Vec<Spec> = specs.iter().map(|s| s.parse().unwrap()).collect();
    Evaluator::builder(high.clone()).backend(backend).local(true).build().measure_many(&[low], None, &specs).unwrap()
}

#[test]
fn cosine_scores_on_the_gpu_are_the_cpus_and_the_report_says_the_gpu_served() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let specs = ["tnc:k=5", "mrre:k=7", "lcmc:k=5", "continuity:k=9"];
    for (tag, high, low) in corpus().into_iter().take(4) {
        let (c, g) = (run(&high, &low, BackendChoice::Cpu, &specs), run(&high, &low, BackendChoice::Gpu, &specs));
        let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
        assert_eq!(js(&g), js(&c), "{tag}");
        assert_eq!(g.run.backend, "gpu", "{tag}: {:?}", g.run.fallback_reason);
        assert_eq!(g.run.spaces.high.metric, high.metric());
    }
}

#[test]
fn uncertified_metrics_and_tiny_norms_are_served_by_the_cpu_with_the_reason() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let mut rng = Rng(3);
    let base = points("h", 60, 6, |_, _| rng.uniform());
    let low = points("l", 60, 2, |i, c| ((i * (c + 2)) % 11) as f64);
    let specs = ["tnc:k=5"];
    for metric in [Metric::Cityblock, Metric::Chebyshev, Metric::SqEuclidean, Metric::minkowski(3.0).unwrap()] {
        let high = base.clone().with_metric(metric).unwrap();
        let (c, g) = (run(&high, &low, BackendChoice::Cpu, &specs), run(&high, &low, BackendChoice::Gpu, &specs));
        assert_eq!(g.run.backend, "cpu");
        let why = g.run.fallback_reason.clone().unwrap_or_default();
        assert!(why.contains(&format!("metric {metric} has no certified GPU kernel")), "{metric}: {why}");
        assert_eq!(serde_json::to_string(&g.projections).unwrap(), serde_json::to_string(&c.projections).unwrap());
    }
    // A norm below 2^-400: outside the cosine bound's domain.
    let tiny = points("t", 60, 6, |i, c| if i == 7 { 1e-125 * (c + 1) as f64 } else { 0.1 + ((i * c) % 5) as f64 });
    let high = tiny.with_metric(Metric::Cosine).unwrap();
    let (c, g) = (run(&high, &low, BackendChoice::Cpu, &specs), run(&high, &low, BackendChoice::Gpu, &specs));
    assert_eq!(g.run.backend, "cpu");
    let why = g.run.fallback_reason.clone().unwrap_or_default();
    assert!(why.contains("row 7's norm") && why.contains("below 2^-400"), "{why}");
    assert_eq!(serde_json::to_string(&g.projections).unwrap(), serde_json::to_string(&c.projections).unwrap());
}

/// Fast numerics returns the device's f32 order with its distances in the metric's own units:
/// under cosine and correlation the device sees unit rows, whose squared distance is 2·d, so a
/// distance read back is s̃ / (2·scale²), not √s̃ / scale (≈ √(2d)). Held to the exact lists'
/// reference's distance of the same pair within f32 resolution.
#[test]
fn fast_cosine_and_correlation_knn_distances_are_the_metrics_units() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    for (tag, high, _) in corpus().into_iter().take(4) {
        let k = 5;
        let fast =
            Evaluator::builder(high.clone()).backend(BackendChoice::Gpu).numerics(faithful::Numerics::Fast).build();
        let (got, report) = fast.knn(k).unwrap();
        assert_eq!(report.backend, "gpu", "{tag}: {:?}", report.fallback_reason);
        let mut compared = 0;
        for i in 0..high.n() {
            for (&j, &d) in got.row(i, k).iter().zip(got.dist_row(i, k)) {
                let d_ref = distance_pair(&high, i, j as usize);
                let tol = 1e-5 * d_ref.abs() + 1e-6;
                assert!((d - d_ref).abs() <= tol, "{tag}: d({i}, {j}) fast {d} vs exact {d_ref}");
                compared += 1;
            }
        }
        assert_eq!(compared, high.n() * k);
    }
}
