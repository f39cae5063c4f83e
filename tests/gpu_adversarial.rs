//! The certified GPU path on hostile data (issue 10): spaces past Mesa's per-invocation loop
//! budget, spreads where the f64 reference underflows, subnormal coordinates, dimensions at the
//! chunk limits, duplicate-heavy near-ties. GPU Exact must equal the CPU reference bit for bit
//! (kNN lists, distances, cross ranks, local values) or route to the CPU and say why. Runs on
//! lavapipe (Vulkan) and llvmpipe (GL) in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use common::{Oracle, Rng, points};
use faithful::gpu::{
    GpuError, GpuRequest, bound::Params, gpu_row_pass, prepare::prepare, sqdist::bounded_sqdist, twin,
};
use faithful::resources::Needs;
use faithful::{BackendChoice, Evaluation, Evaluator, Numerics, Options, Points, Spec};
use gpu_common::{compare_resources, gpu};

fn uniform(name: &str, n: usize, d: usize, seed: u64, scale: f64) -> Points {
    let mut rng = Rng(seed);
    points(name, n, d, |_, _| scale * rng.uniform())
}

/// Runs `specs` with local values on the CPU and on the GPU (Exact unless `numerics`); asserts
/// identical scores and local values (JSON text); returns the GPU run.
fn same_local_values(tag: &str, high: &Points, low: &Points, specs: &[&str], gpu_req: GpuRequest) -> Evaluation {
    let specs: Vec<Spec> = specs.iter().map(|s| s.parse().unwrap()).collect();
    let run = |backend, gpu| {
        Evaluator::new(high.clone(), {
            let mut o = Options::default();
            o.backend = backend;
            o.local = true;
            o.gpu = gpu;
            o
        })
        .measure_many(&[low], None, &specs)
        .unwrap()
    };
    let (c, g) = (run(BackendChoice::Cpu, GpuRequest::default()), run(BackendChoice::Gpu, gpu_req));
    let js = |e: &Evaluation| serde_json::to_string(&e.projections).unwrap();
    assert_eq!(js(&g), js(&c), "{tag}: GPU scores/local values differ from the CPU reference");
    g
}

/// Family 1: spaces whose old fused kernels needed more than 65535 loop trips per invocation
/// (n·D ≥ 2 M, and n = 3 with D = 70000). The chunked distances keep every invocation inside
/// the budget, so the GPU serves them whole and exactly, with no row short.
#[test]
fn spaces_past_the_old_loop_budget_equal_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (n, d) in [(3usize, 70_000usize), (700, 3000)] {
        let t0 = std::time::Instant::now();
        let high = uniform("h", n, d, 3 + d as u64, 1.0);
        let low = uniform("l", n, 2, 5, 1.0);
        let k = if n > 10 { 10 } else { 1 };
        let stats = compare_resources(&g, &format!("n={n} D={d}"), &high, &low, k);
        assert_eq!(
            stats.knn.rows_incomplete + stats.ranks.rows_incomplete,
            0,
            "n={n} D={d}: the split work must stay inside the loop budget: {stats:?}"
        );
        let specs = [format!("tnc:k={k}"), format!("mrre:k={k}"), format!("lcmc:k={k}")];
        let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
        let run = same_local_values(&format!("n={n} D={d}"), &high, &low, &specs, GpuRequest::default());
        assert_eq!(run.run.backend, "gpu");
        assert_eq!(run.run.fallback_reason, None);
        eprintln!("n={n} D={d}: {:.1} s", t0.elapsed().as_secs_f64());
    }
}

/// The completeness witness is a real guard: with one distances dispatch covering all 70000
/// coordinates (beyond Mesa's 65535-trip budget), llvmpipe cuts the loop short; the witness
/// sees the short rows, the CPU recomputes them, the report says so, and the answer is exact.
/// On a driver without such a budget the rows are simply complete.
#[test]
fn the_witness_sends_rows_a_driver_cut_short_to_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let software = g.report.name.to_lowercase().contains("llvmpipe");
    let high = uniform("h", 3, 70_000, 9, 1.0);
    let low = points("l", 3, 1, |i, _| [0.0, 1.0, 3.0][i]);
    let req = GpuRequest { dim_chunk: Some(70_000), ..Default::default() };
    let run = same_local_values("one 70000-coordinate chunk", &high, &low, &["tnc:k=1", "mrre:k=1"], req);
    let stats = &run.run.gpu.as_ref().unwrap().stats;
    let short = stats.knn.rows_incomplete + stats.ranks.rows_incomplete;
    eprintln!("adapter {}: rows the witness found short: {short}", g.report.name);
    if software {
        assert!(short > 0, "llvmpipe cuts a 70000-trip loop: the witness must see it ({stats:?})");
    }
    if short > 0 {
        let reason = run.run.fallback_reason.clone().unwrap_or_default();
        assert!(reason.contains("completeness witness found"), "{reason}");
    }
}

/// Family 2: spreads where the reference's squared differences are subnormal or zero. The
/// three points of the issue (k = 1), and random spaces at spreads 1e-160 and 1e-200: the data
/// is outside the certified domain, so the CPU serves, the report says why, and the answers are
/// the reference's.
#[test]
fn spreads_where_the_reference_underflows_route_to_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let three = points("three", 3, 1, |i, _| [0.0, 2e-200, 1e-200][i]);
    let low = points("l", 3, 1, |i, _| [0.0, 1.0, 3.0][i]);
    let mut cases = vec![("three points at 1e-200".to_string(), three, low, 1)];
    for spread in [1e-160, 1e-200] {
        cases.push((format!("spread {spread:e}"), uniform("h", 40, 3, 21, spread), uniform("l", 40, 2, 22, 1.0), 5));
    }
    for (tag, high, low, k) in cases {
        match gpu_row_pass(&g, &high, None, &[&low], Needs::cross_with_dists(k), Numerics::Exact) {
            Err(GpuError::Domain(why)) => assert!(why.contains("2^-458"), "{tag}: {why}"),
            other => panic!("{tag}: the GPU must refuse data outside its domain, got {:?}", other.map(|_| ())),
        }
        let specs = [format!("tnc:k={k}"), format!("mrre:k={k}"), format!("lcmc:k={k}")];
        let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
        let run = same_local_values(&tag, &high, &low, &specs, GpuRequest::default());
        assert_eq!(run.run.backend, "cpu", "{tag}");
        let reason = run.run.fallback_reason.unwrap_or_default();
        assert!(reason.contains("certified domain") && reason.contains("CPU reference served"), "{tag}: {reason}");
    }
}

/// Family 3: subnormal coordinates (the old power-of-two scale was infinite and ε NaN; the old
/// rank_counts called NaN comparisons "certainly after", giving trustworthiness 1.0 where the
/// reference gives less). Now the CPU serves, with the reason, and T&C is the reference's.
#[test]
fn subnormal_coordinates_route_to_the_cpu() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let tiny = f64::from_bits(1); // 5e-324
    let order = [3.0, 0.0, 7.0, 1.0, 5.0, 2.0, 6.0, 4.0];
    let high = points("sub", 8, 1, |i, _| order[i] * tiny);
    let low = points("l", 8, 1, |i, _| i as f64);
    let run = same_local_values("subnormal", &high, &low, &["tnc:k=2", "mrre:k=2"], GpuRequest::default());
    assert_eq!(run.run.backend, "cpu");
    assert!(run.run.fallback_reason.unwrap_or_default().contains("certified domain"));
    let t = run.projections[0].scores[0].values[0].1;
    assert!(t < 1.0, "the reference's trustworthiness of a shuffled line is below 1, got {t}");
}

/// Family 3, dimension: at D = 2^22 the bound's γ_D = D·2^-23/(1 − D·2^-23) would reach 1; the
/// GPU refuses the space before any kernel runs.
#[test]
fn dimensions_beyond_the_bound_route_to_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let d = 1usize << 22;
    let high = points("wide", 2, d, |i, c| ((i + c) % 3) as f64);
    match gpu_row_pass(&g, &high, None, &[], Needs { knn_high: 1, ..Default::default() }, Numerics::Exact) {
        Err(GpuError::Domain(why)) => assert!(why.contains("2^22"), "{why}"),
        other => panic!("D = 2^22 must be refused, got {:?}", other.map(|_| ())),
    }
}

/// Classification treats anything unproven as undecided: with a NaN bound (the old subnormal
/// case), the twin of rank_counts counts nothing as certain and lists every comparison as an
/// overlap, and knn_candidates keeps every point as a candidate.
#[test]
fn nan_bounds_leave_every_comparison_undecided() {
    let p = points("p", 8, 2, |i, c| (i * (c + 2)) as f64);
    let prep = prepare(&p);
    let mut params = Params::new(8, 2);
    params.abs_e = f32::NAN;
    params.k = 2;
    params.kt = 1;
    params.cap = 1000;
    let row = twin::rank_counts(&params, &prep, 0, &[1, 2]);
    assert_eq!(row.certain, vec![0, 0], "NaN is never 'certainly before'");
    assert_eq!(row.count, 2 * 7 - 2, "every l ≠ j_q is undecided");
    let knn = twin::knn_candidates(&params, &prep, 0, &[]);
    assert_eq!(knn.count, 7, "every j is a candidate");
    // And with NaN tile minima (the epilogue's U under a NaN bound): τ' falls back to the pass
    // over s̃, which decides nothing either.
    let knn = twin::knn_candidates(&params, &prep, 0, &[f32::NAN; 64]);
    assert_eq!((knn.count, knn.from_minima), (7, false), "NaN minima give no bound");
}

/// The same on the device, end to end: with every ε NaN (a test-only poison after the domain
/// checks), knn_candidates and rank_counts decide nothing, the host refines every comparison
/// (or recomputes the row), and the answers are still the reference's.
#[test]
fn kernels_refine_everything_when_the_bound_is_nan() {
    let Some(g) = gpu(GpuRequest { poison_bound: true, ..Default::default() }) else { return };
    let (name, high, low) = common::corpus().remove(0);
    let stats = compare_resources(&g, &format!("{name} with NaN bounds"), &high, &low, 5);
    let n = high.n() as u64;
    assert_eq!(stats.knn.candidates, 2 * n * (n - 1), "every j is a candidate: {stats:?}");
    assert!(stats.ranks.overlaps + stats.ranks.rows_recomputed > 0, "{stats:?}");
    same_local_values(
        &name,
        &high,
        &low,
        &["tnc:k=5", "mrre:k=5"],
        GpuRequest { poison_bound: true, ..Default::default() },
    );
}

/// Dimensions around the 4096-coordinate chunk (one, two and three dispatches per block).
#[test]
fn dimensions_at_the_chunk_limits_equal_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for d in [4095usize, 4096, 4097, 8193] {
        let high = uniform("h", 37, d, d as u64, 1.0);
        let low = uniform("l", 37, 2, 1, 1.0);
        compare_resources(&g, &format!("D={d}"), &high, &low, 5);
        same_local_values(&format!("D={d}"), &high, &low, &["tnc:k=5", "mrre:k=5", "lcmc:k=5"], GpuRequest::default());
    }
}

/// Duplicate-heavy near-ties: a small lattice where most points repeat and the rest sit 1e-12
/// or 1 ulp away, at offsets and scales that stress the f32 rounding; plus the smallest spread
/// inside the domain (1e-130).
fn near_ties() -> Vec<(String, Points, Points)> {
    let mut rng = Rng(17);
    let mut out = Vec::new();
    let lattice = |i: usize, c: usize| (((i / 3) >> c) & 1) as f64;
    out.push((
        "dups_1e-12".to_string(),
        points("h", 90, 3, |i, c| lattice(i, c) + if i % 3 == 2 { 1e-12 * c as f64 } else { 0.0 }),
        points("l", 90, 2, |i, c| lattice(i, c + 1)),
    ));
    out.push((
        "dups_ulp_offset".to_string(),
        points("h", 75, 2, |i, c| {
            let v = 1e4 + lattice(i, c);
            if i % 5 == 0 { v.next_up() } else { v }
        }),
        points("l", 75, 2, |i, _| (i % 4) as f64),
    ));
    out.push((
        "spread_1e-130".to_string(),
        points("h", 60, 3, |_, _| 1e-130 * (1.0 + (rng.below(4) as f64))),
        points("l", 60, 2, |i, c| ((i + c) % 5) as f64),
    ));
    out
}

#[test]
fn duplicate_heavy_near_ties_equal_the_cpu() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in near_ties() {
        for k in [1, 5, 20] {
            compare_resources(&g, &format!("{name} k={k}"), &high, &low, k);
        }
        same_local_values(&name, &high, &low, &["tnc:k=7", "mrre:k=7", "lcmc:k=7"], GpuRequest::default());
    }
}

/// |s̃ − s_ref| ≤ ε on every pair, against the reference's own f64 s, for the in-domain spaces
/// of this corpus; prints the largest error as a fraction of ε.
#[test]
fn bound_holds_on_every_pair_of_the_hostile_corpus() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let mut spaces: Vec<(String, Points)> = near_ties().into_iter().map(|(n, h, _)| (n, h)).collect();
    spaces.push(("D=4097".into(), uniform("h", 20, 4097, 2, 1.0)));
    spaces.push(("D=70000".into(), uniform("h", 3, 70_000, 3, 1.0)));
    spaces.push(("offset_1e8_spread_1".into(), points("h", 40, 4, |i, c| 1e8 + ((i * 7 + c * 3) % 11) as f64)));
    let mut worst_all = 0.0f64;
    for (name, p) in spaces {
        let n = p.n();
        let (prep, s, e) = bounded_sqdist(&g, &p, 0..n).unwrap();
        let oracle = Oracle::new(&p);
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                let reference = oracle.s(i, j) * prep.scale * prep.scale;
                let (err, eps) = ((f64::from(s[i * n + j]) - reference).abs(), f64::from(e[i * n + j]));
                assert!(err <= eps, "{name}: |s̃ − s| = {err:e} > ε = {eps:e} at ({i},{j})");
                worst = worst.max(err / eps);
            }
        }
        eprintln!("{name} (D={}): max observed error / ε = {worst:.2e}", p.dim());
        worst_all = worst_all.max(worst);
    }
    eprintln!("hostile corpus: max observed error / ε = {worst_all:.2e}");
}

/// Fast posture: "0 unresolved" must mean the f32 order is the reference's. The three
/// points (k = 2) differ from the reference in f32 and must report unresolved comparisons; a
/// well-separated line reports none and equals the reference.
#[test]
fn fast_reports_unresolved_whenever_its_order_may_differ() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let fast = |high: &Points| {
        let needs = Needs { knn_high: 2, ..Default::default() };
        let (f, stats) = gpu_row_pass(&g, high, None, &[], needs.clone(), Numerics::Fast).unwrap();
        let c = faithful::resources::row_pass(high, None, &[], needs, 16);
        (stats.knn.unresolved, f.high.unwrap().idx == c.high.unwrap().idx)
    };
    let (unresolved, same) = fast(&points("tie", 3, 1, |i, _| [0.0, 1.0 + 1e-12, -1.0][i]));
    assert!(
        unresolved > 0,
        "f32 cannot separate 1 from 1 + 1e-12: Fast must report it (same order as the CPU: {same})"
    );
    let (unresolved, same) = fast(&points("line", 9, 1, |i, _| (i * i) as f64));
    assert_eq!(unresolved, 0, "a well-separated line is decided by the bound");
    assert!(same, "0 unresolved means the reference's order");
}
