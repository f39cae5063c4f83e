//! Cosine and correlation on the GPU: the certified kernels on the unit rows, with the gap
//! between their squared distances and the reference's `2 d(i, j)` added to the bound
//! (docs/exactness.md, "Cosine and correlation on the GPU"). The bound holds on every pair of a
//! hostile corpus (near-parallel and parallel rows, norms from 1e-110 to 1e140, duplicates,
//! near-constant rows under correlation), on the device and on its CPU twin; kNN lists,
//! distances and cross ranks equal the CPU reference bit for bit; metrics without a certified
//! kernel, and norms outside the domain, are served by the CPU with the reason.
//!
//! Cityblock and chebyshev (and minkowski p = 1, ∞) on the GPU: the distance kernels' linear
//! form with its own bound (docs/exactness.md, "Cityblock and Chebyshev on the GPU"), and
//! sqeuclidean, the squared form's sum before the root; the same checks on a tie-heavy corpus
//! (integer lattices, duplicates, near-ties below f32 resolution, scales 1e-120 to 1e140, odd
//! D, D past one coordinate chunk). Runs on lavapipe (Vulkan) and llvmpipe (GL) in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use common::{Rng, points};
use faithful::gpu::bound::Params as BoundParams;
use faithful::gpu::{GpuRequest, bound::Params, prepare::prepare_checked, sqdist::bounded_sqdist, twin};
use faithful::gpu::{KernelSet, bound::Form, prepare::Units};
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
    for metric in [Metric::minkowski(3.0).unwrap(), Metric::minkowski(1.5).unwrap()] {
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

/// The metrics of the distance kernels' linear form and of the squared form's sum before the
/// root, each with the form and units its prepared space must have.
fn linear_metrics() -> [(Metric, Form, Units); 5] {
    [
        (Metric::Cityblock, Form::Cityblock, Units::Linear),
        (Metric::Chebyshev, Form::Chebyshev, Units::Linear),
        (Metric::SqEuclidean, Form::Squared, Units::Squared),
        (Metric::Minkowski(1.0), Form::Cityblock, Units::Linear),
        (Metric::Minkowski(f64::INFINITY), Form::Chebyshev, Units::Linear),
    ]
}

/// The tie-heavy corpus of cityblock, chebyshev and sqeuclidean (each dataset under the first
/// three metrics; minkowski p = 1 and ∞ on the generic one): (name, high, low). L1 and L∞
/// make many exact ties on lattices (every permutation of a difference vector, every vector
/// with the same largest coordinate), so the tie order by index is exercised on most rows.
fn linear_corpus() -> Vec<(String, Points, Points)> {
    let mut rng = Rng(52);
    let mut out: Vec<(&str, Vec<f64>, usize, usize)> = Vec::new();
    let generic = |n: usize, d: usize, rng: &mut Rng| -> Vec<f64> { (0..n * d).map(|_| rng.uniform() - 0.3).collect() };
    out.push(("generic_d7_n90", generic(90, 7, &mut rng), 90, 7));
    out.push(("generic_d13_n67", generic(67, 13, &mut rng), 67, 13));
    // Integer lattice {0, 1, 2}³ (27 points, each 3 times: duplicates) and a 5-level lattice in 4-D.
    let (n, d) = (81, 3);
    out.push((
        "lattice3_with_duplicates",
        (0..n * d).map(|t| ((t / d % 27) / 3usize.pow((t % d) as u32) % 3) as f64).collect(),
        n,
        d,
    ));
    let (n, d) = (100, 4);
    out.push(("lattice5_d4", (0..n * d).map(|_| rng.below(5) as f64).collect(), n, d));
    // Near-ties below f32 resolution: a lattice with 1e-9 jitter (the device sees ties the
    // reference breaks) and 1-ulp (f64) offsets.
    let (n, d) = (96, 5);
    let mut v: Vec<f64> = (0..n * d).map(|_| 1.0 + rng.below(3) as f64 + 1e-9 * rng.below(4) as f64).collect();
    for i in (1..n).step_by(6) {
        for c in 0..d {
            v[i * d + c] = f64::from_bits(v[(i - 1) * d + c].to_bits() + (c as u64 % 2));
        }
    }
    out.push(("near_ties_1e-9_and_1ulp", v, n, d));
    // Every 4th row a copy; and an offset of 1e4 with a spread of 1e-3.
    let (n, d) = (70, 6);
    let mut v = generic(n, d, &mut rng);
    for i in (3..n).step_by(4) {
        for c in 0..d {
            v[i * d + c] = v[(i - 3) * d + c];
        }
    }
    out.push(("duplicates", v, n, d));
    out.push(("offset_1e4_spread_1e-3", (0..65 * 3).map(|_| 1e4 + 1e-3 * rng.uniform()).collect(), 65, 3));
    // Huge and tiny scales (inside the domain: nonzero coordinates ≥ 2^-458).
    out.push(("scale_1e140", generic(60, 5, &mut rng).iter().map(|x| x * 1e140).collect(), 60, 5));
    out.push(("scale_1e-120", generic(60, 5, &mut rng).iter().map(|x| x * 1e-120).collect(), 60, 5));
    // Past one coordinate chunk (4096): two chunks, the second of one coordinate.
    out.push(("d4097_n40", (0..40 * 4097).map(|_| rng.below(3) as f64).collect(), 40, 4097));
    let mut corpus = Vec::new();
    for (name, v, n, d) in out {
        let low = points("low", n, 2, |i, c| ((i * (c + 5)) % 13) as f64 + 0.01 * i as f64);
        let metrics: &[Metric] = if name == "generic_d7_n90" {
            &[
                Metric::Cityblock,
                Metric::Chebyshev,
                Metric::SqEuclidean,
                Metric::Minkowski(1.0),
                Metric::Minkowski(f64::INFINITY),
            ]
        } else {
            &[Metric::Cityblock, Metric::Chebyshev, Metric::SqEuclidean]
        };
        for &metric in metrics {
            let high = Points::from_vec(name, n, d, v.clone()).unwrap().with_metric(metric).unwrap();
            corpus.push((format!("{name}/{metric}"), high, low.clone()));
        }
    }
    corpus
}

/// `|s̃ − s_ref| ≤ ε` for every pair of a linear-corpus space, s_ref the reference's distance in
/// the device's units (2^e d for cityblock and chebyshev, 2^{2e} d for sqeuclidean); returns
/// the largest error / ε.
fn check_linear_bound(tag: &str, high: &Points, bounded: impl Fn(usize) -> (Vec<f32>, Vec<f32>)) -> f64 {
    let prep = prepare_checked(high).unwrap();
    let (_, form, units) = linear_metrics().into_iter().find(|(m, _, _)| *m == high.metric()).unwrap();
    assert_eq!((prep.form, prep.units), (form, units), "{tag}");
    let n = high.n();
    let mut worst = 0.0f64;
    for i in 0..n {
        let (s, e) = bounded(i);
        for j in 0..n {
            let reference = prep.reference_value(distance_pair(high, i, j));
            let err = (f64::from(s[j]) - reference).abs();
            let eps = f64::from(e[j]);
            assert!(err <= eps, "{tag}: |s̃ − s_ref| = {err:e} > ε = {eps:e} at ({i}, {j})");
            if eps > 0.0 {
                worst = worst.max(err / eps);
            }
        }
    }
    worst
}

#[test]
fn twin_bound_holds_on_every_cityblock_and_chebyshev_pair_without_a_gpu() {
    let mut seen = 0;
    for (tag, high, _) in linear_corpus() {
        let prep = prepare_checked(&high).unwrap();
        let params = BoundParams::checked_form_with_extra(prep.n, prep.dim, prep.form, prep.abs_extra).unwrap();
        assert_eq!(params.form(), prep.form);
        let worst = check_linear_bound(&tag, &high, |i| twin::sqdist_row(&params, &prep, i));
        assert!(worst < 1.0, "{tag}");
        seen += 1;
    }
    assert_eq!(seen, 32);
}

/// The linear form's bound is not vacuous: on generic data ε is below 1e-4 of the value on
/// all but a few pairs, so the certified comparisons decide almost everything.
#[test]
fn linear_bound_is_tight_enough_to_decide_generic_pairs() {
    for (tag, high, _) in linear_corpus().into_iter().filter(|(t, _, _)| t.starts_with("generic")) {
        let prep = prepare_checked(&high).unwrap();
        let params = BoundParams::checked_form_with_extra(prep.n, prep.dim, prep.form, prep.abs_extra).unwrap();
        let (mut loose, mut pairs) = (0, 0);
        for i in 0..high.n() {
            let (s, e) = twin::sqdist_row(&params, &prep, i);
            for j in (0..high.n()).filter(|&j| j != i) {
                pairs += 1;
                loose += usize::from(!(e[j] < 1e-4 * s[j]));
            }
        }
        assert!(loose * 100 < pairs, "{tag}: ε ≥ 1e-4 s̃ on {loose} of {pairs} pairs");
    }
}

#[test]
fn device_bound_holds_on_every_cityblock_and_chebyshev_pair() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (tag, high, _) in linear_corpus() {
        let n = high.n();
        let (_, s, e) = bounded_sqdist(&g, &high, 0..n).unwrap();
        let worst =
            check_linear_bound(&tag, &high, |i| (s[i * n..(i + 1) * n].to_vec(), e[i * n..(i + 1) * n].to_vec()));
        eprintln!("{tag}: largest |s̃ − s_ref| / ε = {worst:.3}");
    }
}

/// The device's values are its twin's within the bound, and the tiled kernel's are the classic
/// kernel's (both sum or take the maximum in coordinate order).
#[test]
fn cityblock_and_chebyshev_device_values_match_the_twin_under_both_kernel_sets() {
    for set in [KernelSet::Tiled, KernelSet::Classic] {
        let Some(g) = gpu(GpuRequest { kernels: set, ..Default::default() }) else { return };
        for (tag, high, _) in linear_corpus().into_iter().filter(|(t, _, _)| !t.starts_with("d4097")) {
            let n = high.n();
            let (prep, s, e) = bounded_sqdist(&g, &high, 0..n).unwrap();
            let params = BoundParams::checked_form_with_extra(prep.n, prep.dim, prep.form, prep.abs_extra).unwrap();
            for i in 0..n {
                let (ts, te) = twin::sqdist_row(&params, &prep, i);
                for j in 0..n {
                    let (a, b) = (f64::from(s[i * n + j]), f64::from(ts[j]));
                    // Both within ε of the reference, so within 2ε of each other; the device's
                    // ε is the twin's evaluated on its own s̃.
                    let tol = f64::from(e[i * n + j]) + f64::from(te[j]);
                    assert!((a - b).abs() <= tol, "{tag} {set:?}: device {a:e} twin {b:e} at ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn cityblock_and_chebyshev_resources_equal_the_cpu() {
    let plans = [
        GpuRequest::default(),
        GpuRequest { kernels: KernelSet::Classic, max_rows_per_dispatch: Some(7), ..Default::default() },
        GpuRequest { rank_chunk: Some(50), max_rows_per_dispatch: Some(13), ..Default::default() },
    ];
    for (p, plan) in plans.into_iter().enumerate() {
        let Some(g) = gpu(plan) else { return };
        for (tag, high, low) in linear_corpus() {
            // The two-chunk space once (its rows are long), every k elsewhere.
            let big = high.dim() > 4096;
            if big && p > 0 {
                continue;
            }
            let ks: Vec<usize> = if big { vec![5] } else { vec![1, 5, high.n() / 2 - 1] };
            for k in ks {
                let stats = compare_resources(&g, &format!("{tag} k={k} plan {p}"), &high, &low, k);
                assert_eq!(stats.knn.rows_incomplete, 0, "{tag}: no row short");
            }
        }
    }
}

#[test]
fn cityblock_and_chebyshev_scores_on_the_gpu_are_the_cpus_and_the_report_says_the_gpu_served() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let specs = ["tnc:k=5", "mrre:k=7", "lcmc:k=5", "continuity:k=9", "coranking:k_max=12"];
    for (tag, high, low) in linear_corpus().into_iter().filter(|(t, _, _)| !t.starts_with("d4097")) {
        let (c, g) = (run(&high, &low, BackendChoice::Cpu, &specs), run(&high, &low, BackendChoice::Gpu, &specs));
        let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
        assert_eq!(js(&g), js(&c), "{tag}");
        assert_eq!(g.run.backend, "gpu", "{tag}: {:?}", g.run.fallback_reason);
        assert_eq!(g.run.fallback_reason, None, "{tag}");
        assert_eq!(g.run.spaces.high.metric, high.metric());
    }
}

/// Fast numerics under the linear metrics: distances in the metric's units (s̃ / 2^e for
/// cityblock and chebyshev, s̃ / 2^{2e} for sqeuclidean), within f32 resolution of the
/// reference's distance of the same pair.
#[test]
fn fast_cityblock_and_chebyshev_knn_distances_are_the_metrics_units() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    for (tag, high, _) in
        linear_corpus().into_iter().filter(|(t, _, _)| t.starts_with("generic") || t.starts_with("scale"))
    {
        let k = 5;
        let fast =
            Evaluator::builder(high.clone()).backend(BackendChoice::Gpu).numerics(faithful::Numerics::Fast).build();
        let (got, report) = fast.knn(k).unwrap();
        assert_eq!(report.backend, "gpu", "{tag}: {:?}", report.fallback_reason);
        let mut compared = 0;
        for i in 0..high.n() {
            for (&j, &d) in got.row(i, k).iter().zip(got.dist_row(i, k)) {
                let d_ref = distance_pair(&high, i, j as usize);
                assert!((d - d_ref).abs() <= 1e-5 * d_ref.abs(), "{tag}: d({i}, {j}) fast {d:e} vs exact {d_ref:e}");
                compared += 1;
            }
        }
        assert_eq!(compared, high.n() * k);
    }
}

/// The completeness witness covers the linear forms' loops as it covers the squared form's:
/// with one distances dispatch of all 70 000 coordinates (beyond Mesa's 65 535-trip budget),
/// llvmpipe cuts the cityblock and chebyshev loops short, the witness sees the short rows, the
/// CPU recomputes them and the report says so; at the default chunk (4096) no row is short and
/// the GPU serves the same bits. Under both kernel sets.
#[test]
fn the_witness_catches_cut_short_cityblock_and_chebyshev_loops() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let software = g.report.name.to_lowercase().contains("llvmpipe");
    let mut rng = Rng(70);
    let base = points("h", 3, 70_000, |_, _| rng.uniform());
    let low = points("l", 3, 1, |i, _| [0.0, 1.0, 3.0][i]);
    let specs: Vec<Spec> = ["tnc:k=1", "mrre:k=1"].iter().map(|s| s.parse().unwrap()).collect();
    for metric in [Metric::Cityblock, Metric::Chebyshev] {
        let high = base.clone().with_metric(metric).unwrap();
        for kernels in [KernelSet::Tiled, KernelSet::Classic] {
            let go = |backend, gpu: GpuRequest| {
                let mut o = faithful::Options::default();
                o.backend = backend;
                o.local = true;
                o.gpu = gpu;
                Evaluator::new(high.clone(), o).measure_many(&[&low], None, &specs).unwrap()
            };
            let c = go(BackendChoice::Cpu, GpuRequest::default());
            let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
            for chunk in [None, Some(70_000)] {
                let g = go(BackendChoice::Gpu, GpuRequest { dim_chunk: chunk, kernels, ..Default::default() });
                let tag = format!("{metric} {kernels:?} chunk {chunk:?}");
                assert_eq!(js(&g), js(&c), "{tag}");
                let stats = &g.run.gpu.as_ref().unwrap().stats;
                let short = stats.knn.rows_incomplete + stats.ranks.rows_incomplete;
                if chunk.is_none() {
                    assert_eq!(short, 0, "{tag}");
                    assert_eq!(g.run.fallback_reason, None, "{tag}");
                } else if software {
                    assert!(short > 0, "{tag}: llvmpipe cuts a 70000-trip loop: the witness must see it ({stats:?})");
                }
                if short > 0 {
                    let reason = g.run.fallback_reason.clone().unwrap_or_default();
                    assert!(reason.contains("completeness witness found"), "{tag}: {reason}");
                }
            }
        }
    }
}

/// Cityblock and chebyshev share the certified domain: a nonzero coordinate below 2^-458 (where
/// the reference's differences could be subnormal, and its rounding no longer relative) sends
/// the space to the CPU with the reason, and the answer is the reference's.
#[test]
fn cityblock_and_chebyshev_outside_the_domain_are_served_by_the_cpu_with_the_reason() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let base = points("t", 50, 3, |i, c| if i == 4 && c == 1 { 1e-300 } else { ((i * (c + 3)) % 7) as f64 });
    let low = points("l", 50, 2, |i, c| ((i * (c + 2)) % 11) as f64);
    for metric in [Metric::Cityblock, Metric::Chebyshev] {
        let high = base.clone().with_metric(metric).unwrap();
        let specs = ["tnc:k=5", "lcmc:k=5"];
        let (c, g) = (run(&high, &low, BackendChoice::Cpu, &specs), run(&high, &low, BackendChoice::Gpu, &specs));
        assert_eq!(g.run.backend, "cpu", "{metric}");
        let why = g.run.fallback_reason.clone().unwrap_or_default();
        assert!(why.contains("row 4, column 1") && why.contains("2^-458"), "{metric}: {why}");
        assert_eq!(serde_json::to_string(&g.projections).unwrap(), serde_json::to_string(&c.projections).unwrap());
    }
}
