//! The GPU backend against the CPU reference on the adversarial corpus: identical neighbour
//! lists, distances, ranks, local values and scores, in several block plans; the proven bound
//! on every pair; the Fast posture's live report. Runs on lavapipe in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use approx::relative_eq;
use common::{Oracle, Rng, corpus, points};
use faithful::gpu::{GpuRequest, Refine, bound::Params, gpu_row_pass, prepare::prepare, sqdist::bounded_sqdist, twin};
use faithful::resources::Needs;
use faithful::{BackendChoice, Evaluator, Labels, Numerics, Options, Points, Spec};
use gpu_common::{compare_resources, gpu};

/// The corpus plus cases that stress the GPU path: overflowing candidate lists (identical
/// points, n = 300), larger D, and n beyond one workgroup's stride.
fn gpu_corpus() -> Vec<(String, Points, Points)> {
    let mut c = corpus();
    let mut rng = Rng(11);
    c.push(("identical_300".into(), points("s", 300, 3, |_, _| 2.0), points("sl", 300, 2, |i, _| (i % 3) as f64)));
    c.push((
        "d50_n203".into(),
        points("h", 203, 50, |_, _| rng.uniform()),
        points("l", 203, 2, |i, c| ((i * (c + 3)) % 17) as f64),
    ));
    c
}

#[test]
fn bound_holds_on_every_pair() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in gpu_corpus() {
        for p in [&high, &low] {
            let n = p.n();
            let (prep, s, e) = bounded_sqdist(&g, p, 0..n).unwrap();
            let oracle = Oracle::new(p);
            let mut worst = 0.0f64;
            for i in 0..n {
                for j in 0..n {
                    let reference = oracle.s(i, j) * prep.scale * prep.scale;
                    let err = (f64::from(s[i * n + j]) - reference).abs();
                    let eps = f64::from(e[i * n + j]);
                    assert!(err <= eps, "{name}: |s̃ - s| = {err:e} > ε = {eps:e} at ({i},{j})");
                    if eps > 0.0 {
                        worst = worst.max(err / eps);
                    }
                }
            }
            eprintln!("{name} (D={}): max observed error / ε = {worst:.3}", p.dim());
        }
    }
}

#[test]
fn resources_identical_to_cpu_in_several_block_plans() {
    let plans = [
        GpuRequest::default(),
        GpuRequest { max_rows_per_dispatch: Some(7), ..Default::default() },
        GpuRequest { max_rows_per_dispatch: Some(64), max_buffer_bytes: Some(4096), ..Default::default() },
        // rank_counts in ranges of 100 points (partial tiles, counts and overlaps accumulated
        // over several dispatches per block; lavapipe's default here is one range, as a
        // hardware GPU's always is).
        GpuRequest { rank_chunk: Some(100), max_rows_per_dispatch: Some(7), ..Default::default() },
        // The streamed plan (row blocks × point tiles, issue 30 item 5): tiles of at least 16
        // points (2k + 2 at the larger k), the tiles' candidates united, the ranks' counts and
        // overlaps accumulated over tiles and over ranges of 7 points within them, in blocks
        // of 7 rows; with both distance kernels.
        GpuRequest { point_tile: Some(16), ..Default::default() },
        GpuRequest { point_tile: Some(16), rank_chunk: Some(7), max_rows_per_dispatch: Some(7), ..Default::default() },
        GpuRequest { point_tile: Some(40), kernels: faithful::gpu::KernelSet::Classic, ..Default::default() },
        // The undecided pairs' f64 sums on the device (`exact_sqdist`), in whole blocks and in
        // blocks of 7 rows with ranges of 100 points.
        GpuRequest { refine: Refine::Device, ..Default::default() },
        GpuRequest {
            refine: Refine::Device,
            rank_chunk: Some(100),
            max_rows_per_dispatch: Some(7),
            ..Default::default()
        },
    ];
    for plan in plans {
        let Some(g) = gpu(plan.clone()) else { return };
        for (name, high, low) in gpu_corpus() {
            let n = high.n();
            for k in [1, 5, n / 2 - 1] {
                compare_resources(&g, &format!("{name} k={k} plan={plan:?}"), &high, &low, k);
            }
        }
    }
}

/// The device's refinement (`GpuRequest::refine`) serves every undecided pair: on a lattice
/// with duplicates and 1e-9 jitter (many candidates and overlaps f32 cannot decide) the lists
/// and ranks are the reference's while the host computes no f64 distance and recomputes no
/// row, and `exact_sqdist` evaluated every candidate, overlap and query; a cosine space, a
/// Fast pass and a streamed plan say why they refine on the host.
#[test]
fn device_refinement_serves_every_undecided_pair() {
    let mut rng = Rng(29);
    let n = 400;
    let level = |i: usize, c: usize| ((i as u64 * (2 * c as u64 + 1) * 2_654_435_761) >> 9) % 4;
    let high = points("h", n, 6, |i, c| level(i, c) as f64 + 1e-9 * (rng.uniform() - 0.5));
    let low = points("l", n, 2, |i, c| ((i >> (3 * c)) % 7) as f64);
    let Some(g) = gpu(GpuRequest { refine: Refine::Device, ..Default::default() }) else { return };
    let k = 10;
    let stats = compare_resources(&g, "device refinement", &high, &low, k);
    assert_eq!(stats.refine, Refine::Device, "{:?}", stats.refine_reason);
    let t = &stats.transfers.kernels;
    // The host computed distances only for rows recomputed whole (overlaps beyond a row's
    // slots on this tie-heavy lattice), none for a pair it refined.
    for kernel in ["knn_candidates", "rank_counts"] {
        assert_eq!(t[kernel].host_f64_distances, t[kernel].host_rows_recomputed * n as u64, "{t:?}");
    }
    assert!(t["rank_counts"].host_rows_recomputed < n as u64 / 2, "{t:?}");
    // Every candidate, every overlap and the 2·n·k queries (k of them per row and direction).
    let want = stats.knn.candidates + stats.ranks.overlaps + (2 * n * k) as u64;
    assert_eq!(t["exact_sqdist"].pairs, want, "{t:?}");
    assert!(stats.ranks.overlaps > 0, "the lattice leaves overlaps to refine");
    // The same pass asked to refine on the host: the device's kernel does not run.
    let host = compare_resources(&gpu(GpuRequest::default()).unwrap(), "host refinement", &high, &low, k);
    assert_eq!(host.refine, Refine::Host);
    assert!(!host.transfers.kernels.contains_key("exact_sqdist"));
    let on_host = |k: &str| {
        host.transfers.kernels[k].host_f64_distances - host.transfers.kernels[k].host_rows_recomputed * n as u64
    };
    assert_eq!(on_host("knn_candidates") + on_host("rank_counts"), want, "the same pairs, refined on the host");
    // Where the device does not refine, the report says why.
    let cosine = high.clone().with_metric(faithful::Metric::Cosine).unwrap();
    let needs = Needs::cross_with_dists(k);
    let (_, s) = gpu_row_pass(&g, &cosine, None, &[&low], needs.clone(), Numerics::Exact).unwrap();
    assert_eq!(s.refine, Refine::Host);
    assert!(s.refine_reason.as_deref().unwrap().contains("cosine"), "{:?}", s.refine_reason);
    let (_, s) = gpu_row_pass(&g, &high, None, &[&low], needs.clone(), Numerics::Fast).unwrap();
    assert!(s.refine_reason.as_deref().unwrap().contains("Fast"), "{:?}", s.refine_reason);
    let streamed = gpu(GpuRequest { refine: Refine::Device, point_tile: Some(64), ..Default::default() }).unwrap();
    let s = compare_resources(&streamed, "streamed, host refinement", &high, &low, k);
    assert!(s.refine_reason.as_deref().unwrap().contains("streamed"), "{:?}", s.refine_reason);
}

/// The streamed plan serves from the device, not from the CPU fallback: every row's kNN and
/// ranks come from the tiles' candidates and counts (none recomputed), the tiles' work adds up
/// to every pair once per pass (the kNN pass and the ranks' pass of each space), and the run
/// report names the plan; the lists and ranks are the reference's.
#[test]
fn streamed_plan_serves_every_row_from_the_tiles() {
    let mut rng = Rng(23);
    let (n, k) = (300, 10);
    let high = points("h", n, 12, |_, _| rng.uniform());
    let low = points("l", n, 2, |_, _| rng.uniform());
    let req = GpuRequest { point_tile: Some(64), max_rows_per_dispatch: Some(100), ..Default::default() };
    let Some(g) = gpu(req) else { return };
    let stats = compare_resources(&g, "streamed", &high, &low, k);
    let shape = stats.streamed.expect("the requested point tile streams the pass");
    assert_eq!((shape.tiles, shape.width, shape.rows), (5, 60, 100), "{shape:?}");
    assert_eq!(stats.knn.rows_recomputed, 0, "{stats:?}");
    assert_eq!(stats.ranks.rows_recomputed, 0, "{stats:?}");
    // The k smallest U carried from tile to tile: a later tile adds only its points below the
    // k-th of every point seen so far, about k·(1 + 1/2 + … + 1/5) ≈ 2.3k per row (23.0 at
    // k = 10), not the 5k the five tiles would give alone.
    let per_row = stats.knn.candidates as f64 / (2 * n) as f64;
    eprintln!("streamed: {per_row:.1} candidates per row (k = {k})");
    assert!(per_row < 3.0 * k as f64, "{per_row} candidates per row");
    let t = &stats.transfers.kernels;
    // Three sweeps over every (row, point) pair: the projection's kNN, the original space's
    // kNN with the ranks counted in it, the ranks counted in the projection.
    assert_eq!(t["distances_tiled"].pairs, 3 * (n * n) as u64, "{t:?}");
    assert_eq!(t["knn_candidates"].pairs, 2 * (n * n) as u64, "{t:?}");
    assert_eq!(t["knn_candidates"].dispatches, 2 * 3 * 5, "two spaces × three blocks × five tiles");
    assert_eq!(t["rank_counts"].pairs, 2 * (n * n) as u64, "{t:?}");
    assert_eq!(t["knn_candidates"].host_rows_recomputed + t["rank_counts"].host_rows_recomputed, 0);
    // Without the request the same pass takes whole rows.
    let g = gpu(GpuRequest::default()).unwrap();
    assert!(compare_resources(&g, "rows", &high, &low, k).streamed.is_none());
}

#[test]
fn overflowing_rows_are_recomputed_and_reported() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let high = points("same", 300, 3, |_, _| 1.0);
    let low = points("l", 300, 2, |i, _| i as f64);
    let (_, stats) = gpu_row_pass(&g, &high, None, &[&low], Needs::cross_with_dists(5), Numerics::Exact).unwrap();
    assert!(stats.knn.rows_recomputed >= 300, "identical points overflow every candidate list: {stats:?}");
    compare_resources(&g, "identical 300", &high, &low, 5);
}

#[test]
fn scores_and_local_values_identical_to_cpu() {
    let specs: Vec<Spec> =
        ["tnc:k=5", "mrre:k=5", "lcmc:k=5", "nh:k=5", "ca_tnc:k=5", "nd:k=5", "proc:k=5", "topo:k=5"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
    let Some(_) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in gpu_corpus() {
        let labels = Labels::new((0..high.n() as i64).map(|i| i % 3).collect());
        for spec in &specs {
            let run = |backend| {
                let eval = Evaluator::new(high.clone(), {
                    let mut o = Options::default();
                    o.backend = backend;
                    o.local = true;
                    o
                });
                eval.measure_many(&[&low], Some(&labels), std::slice::from_ref(spec))
            };
            let (cpu, gpu_run) = (run(BackendChoice::Cpu), run(BackendChoice::Gpu));
            match (cpu, gpu_run) {
                (Ok(c), Ok(g)) => {
                    assert_eq!(g.run.backend, "gpu", "{name} {spec}: the GPU must serve");
                    let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
                    assert_eq!(js(&g), js(&c), "{name} {spec}");
                }
                (Err(c), Err(g)) => assert_eq!(g.to_string(), c.to_string(), "{name} {spec}"),
                (c, g) => panic!("{name} {spec}: cpu {:?} vs gpu {:?}", c.map(|_| ()), g.map(|_| ())),
            }
        }
    }
}

/// The public adapter listing: every usable adapter, chosen through the builder, serves the CPU
/// reference's scores bit for bit and the run names that adapter (a usable adapter whose driver
/// cannot start a device, as NVIDIA's headless GL on the H200, is a typed `GpuError::Device`);
/// an entry that no longer matches an adapter is a typed error, never another adapter.
#[test]
fn every_usable_listed_adapter_chosen_through_the_builder_serves_the_cpu_reference() {
    use faithful::{Error, GpuError};
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let adapters = faithful::gpu_adapters();
    assert_eq!(adapters.len(), faithful::gpu::adapters_report().len(), "{adapters:?}");
    let usable: Vec<_> = adapters.iter().filter(|a| a.is_usable()).collect();
    let (name, high, low) = gpu_corpus().remove(0);
    let specs: Vec<Spec> = ["tnc:k=5", "lcmc:k=5"].iter().map(|s| s.parse().unwrap()).collect();
    let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
    let cpu = Evaluator::builder(high.clone()).build().measure_many(&[&low], None, &specs).unwrap();
    let on = |a: &faithful::AdapterInfo| {
        Evaluator::builder(high.clone()).backend(BackendChoice::Gpu).gpu_adapter(a).build().measure_many(
            &[&low],
            None,
            &specs,
        )
    };
    let mut served = 0;
    for a in &usable {
        match on(a) {
            Ok(g) => {
                assert_eq!(g.run.backend, "gpu", "{name} on {a:?}");
                assert_eq!(js(&g), js(&cpu), "{name} on {a:?}");
                let report = g.run.adapter.expect("the adapter that served");
                assert_eq!((&report.name, &report.backend), (&a.name, &a.backend));
                served += 1;
            }
            Err(Error::Gpu(GpuError::Device(e))) => eprintln!("{} ({}): no device: {e}", a.name, a.backend),
            Err(e) => panic!("{} ({}): {e}", a.name, a.backend),
        }
    }
    assert!(served > 0, "no listed adapter served: {adapters:?}");
    let mut stale = usable[0].clone();
    stale.name.push_str(" (gone)");
    match on(&stale) {
        Err(Error::Gpu(GpuError::NoAdapter(m))) => assert!(m.contains("is no longer listed"), "{m}"),
        other => panic!("a stale adapter: {:?}", other.map(|_| ())),
    }
}

#[test]
fn fast_posture_reports_unresolved_comparisons_on_jittered_lattices() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    let mut rng = Rng(5);
    let high = points("lat", 256, 4, |i, c| ((i >> (2 * c)) & 3) as f64 + 1e-9 * rng.uniform());
    let low = points("latl", 256, 2, |i, c| ((i >> (3 * c)) & 7) as f64 + 1e-9 * rng.uniform());
    let specs = vec!["tnc:k=10".parse::<Spec>().unwrap()];
    let eval = Evaluator::new(high, {
        let mut o = Options::default();
        o.backend = BackendChoice::Gpu;
        o.numerics = Numerics::Fast;
        o
    });
    let r = eval.measure_many(&[&low], None, &specs).unwrap();
    assert_eq!(r.run.numerics, "fast");
    let stats = &r.run.gpu.as_ref().unwrap().stats;
    assert!(
        stats.knn.unresolved > 0,
        "Fast on a 1e-9 jittered lattice must report unresolved kNN comparisons: {stats:?}"
    );
    assert!(stats.ranks.overlaps > 0, "and unresolved rank comparisons: {stats:?}");
}

#[test]
fn twin_bound_holds_without_a_gpu() {
    for (name, high, _) in gpu_corpus() {
        let n = high.n();
        let prep = prepare(&high);
        let params = Params::new(n, high.dim());
        let oracle = Oracle::new(&high);
        for i in 0..n {
            let (s, e) = twin::sqdist_row(&params, &prep, i);
            for j in 0..n {
                let reference = oracle.s(i, j) * prep.scale * prep.scale;
                assert!((f64::from(s[j]) - reference).abs() <= f64::from(e[j]), "{name} twin ({i},{j})");
            }
        }
    }
}

/// Fast pair reductions (stress, sn_stress, pr, kl_div, dtm) within a relative 1e-3 of the
/// exact CPU scores, and the report says the GPU served them in Fast. The kernels against their
/// twins: `gpu_kernels_twins::{pair_stats, density}`.
#[test]
fn fast_pair_reductions_agree_with_exact_scores() {
    let Some(_) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in gpu_corpus() {
        // Fast scores against the exact CPU scores.
        let specs: Vec<Spec> = ["stress", "sn_stress", "pr", "kl_div", "dtm", "kl_div:sigma=1"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        for spec in &specs {
            let run = |backend, numerics| {
                Evaluator::new(high.clone(), {
                    let mut o = Options::default();
                    o.backend = backend;
                    o.numerics = numerics;
                    o
                })
                .measure_many(&[&low], None, std::slice::from_ref(spec))
            };
            match (run(BackendChoice::Cpu, Numerics::Exact), run(BackendChoice::Gpu, Numerics::Fast)) {
                (Ok(c), Ok(f)) => {
                    assert!(
                        f.run
                            .served
                            .iter()
                            .any(|s| s.output == "pairwise" && s.backend == "gpu" && s.numerics == "fast"),
                        "{name} {spec}: {:?}",
                        f.run.served
                    );
                    let (a, b) = (c.projections[0].scores[0].values[0].1, f.projections[0].scores[0].values[0].1);
                    assert!(
                        relative_eq!(a, b, epsilon = 1e-6, max_relative = 1e-3),
                        "{name} {spec}: exact {a} fast {b}"
                    );
                }
                (Err(c), Err(f)) => assert_eq!(c.to_string(), f.to_string(), "{name} {spec}"),
                (c, f) => panic!("{name} {spec}: exact {:?} fast {:?}", c.map(|_| ()), f.map(|_| ())),
            }
        }
    }
}

/// A device error retries once with half the rows per dispatch; a second one hands the work to
/// the CPU. Either way the results are the reference's and the report says what happened.
#[test]
fn device_errors_retry_smaller_then_fall_back_to_the_cpu() {
    if gpu(GpuRequest::default()).is_none() {
        return;
    }
    let (_, high, low) = gpu_corpus().remove(0);
    let specs: Vec<Spec> = ["tnc:k=5", "mrre:k=5"].iter().map(|s| s.parse().unwrap()).collect();
    let cpu = Evaluator::new(high.clone(), Options::default()).measure_many(&[&low], None, &specs).unwrap();
    let js = |e: &faithful::Evaluation| serde_json::to_string(&e.projections).unwrap();
    let run = |fail| {
        let opts = {
            let mut o = Options::default();
            o.backend = BackendChoice::Gpu;
            o.gpu = GpuRequest { fail_dispatches: fail, ..Default::default() };
            o
        };
        Evaluator::new(high.clone(), opts).measure_many(&[&low], None, &specs).unwrap()
    };
    let once = run(1);
    assert_eq!(once.run.backend, "gpu");
    assert!(
        once.run.fallback_reason.as_deref().unwrap_or("").contains("retried with half the rows"),
        "{:?}",
        once.run.fallback_reason
    );
    assert_eq!(js(&once), js(&cpu));
    let always = run(1000);
    assert_eq!(always.run.backend, "cpu");
    assert!(
        always.run.fallback_reason.as_deref().unwrap_or("").contains("GPU failed"),
        "{:?}",
        always.run.fallback_reason
    );
    assert!(always.run.served.iter().all(|s| s.backend == "cpu"));
    assert_eq!(js(&always), js(&cpu));
}
