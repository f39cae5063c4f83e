//! The tiled squared-distance kernel (`shaders/distances_tiled.wgsl`, host
//! `src/gpu/distances_tiled.rs`, twin `gpu::twin::distances_tiled`) on the device: against its
//! CPU twin within the proven bound, at WebGPU's floor tiles and at the adapter's own, with
//! partial tiles in both directions; its witness catching a dispatch a driver cuts short; and the
//! classic kernel set kept bit for bit. Runs on lavapipe (Vulkan) and llvmpipe (GL) in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use approx::assert_abs_diff_eq;
use common::{Rng, corpus, points};
use faithful::gpu::{GpuRequest, KernelSet, Tiles, sqdist::bounded_sqdist, twin};
use faithful::{BackendChoice, Evaluation, Evaluator, Numerics, Options, Points, Spec};
use gpu_common::{compare_resources, gpu};

fn uniform(name: &str, n: usize, d: usize, seed: u64) -> Points {
    let mut rng = Rng(seed);
    points(name, n, d, |_, _| rng.uniform() - 0.5)
}

/// Tile sizes every adapter accepts (WebGPU's floor limits).
fn floor_tiles() -> Tiles {
    Tiles::choose(&wgpu::Limits::default())
}

/// Device s̃ against the twin's tile walk, pair by pair, within the sum of both bounds (each is
/// within ε of the reference), for rows `rows` of `p`.
fn device_matches_twin(req: GpuRequest, p: &Points, tag: &str) {
    let Some(g) = gpu(req) else { return };
    let n = p.n();
    let (prep, s, e) = bounded_sqdist(&g, p, 0..n).unwrap();
    let (tw, trips) = twin::distances_tiled(&prep, g.tiles, 0, n);
    let want = g.tiles.trips_per_coordinate(n) * p.dim() as u64;
    assert!(trips.iter().all(|&t| u64::from(t) == want), "{tag}: twin witness");
    for t in 0..n * n {
        assert_abs_diff_eq!(s[t], tw[t], epsilon = 2.0 * e[t]);
    }
    eprintln!("{tag}: tiles {:?}, {} pairs within the bound of the twin", g.tiles, n * n);
}

#[test]
fn distances_tiled_device_matches_its_twin_at_floor_and_adapter_tiles() {
    // n and D not multiples of the tiles: partial row tiles, point tiles and coordinate sub-chunks.
    for (n, d) in [(70, 37), (131, 50), (5, 3)] {
        let p = uniform("u", n, d, n as u64);
        let floor = GpuRequest { tiles: Some(floor_tiles()), ..Default::default() };
        device_matches_twin(floor, &p, &format!("floor tiles n={n} D={d}"));
        device_matches_twin(GpuRequest::default(), &p, &format!("adapter tiles n={n} D={d}"));
    }
}

/// Whole resources, bit for bit, with the tiled kernel at the floor tiles and at tiles of 8 × 8
/// invocations with 4 staged coordinates, in block plans that cut row tiles (7 rows per block).
#[test]
fn distances_tiled_resources_equal_the_cpu_at_several_tile_sizes() {
    let small = Tiles { threads_rows: 8, threads_points: 8, coords: 4 };
    for tiles in [floor_tiles(), small] {
        for rows in [None, Some(7)] {
            let req = GpuRequest { tiles: Some(tiles), max_rows_per_dispatch: rows, ..Default::default() };
            let Some(g) = gpu(req) else { return };
            for (name, high, low) in corpus().into_iter().take(4) {
                compare_resources(&g, &format!("{name} {tiles:?} rows {rows:?}"), &high, &low, 5);
            }
            let (high, low) = (uniform("h", 150, 50, 3), uniform("l", 150, 2, 4));
            compare_resources(&g, &format!("n=150 D=50 {tiles:?}"), &high, &low, 20);
        }
    }
}

/// With one 70 000-coordinate dispatch, llvmpipe cuts the tiled kernel's coordinate loop (Mesa's
/// 65 535-trip budget); the witness sees the rows, the CPU recomputes them, the report says so,
/// and the answer is exact. On a driver without such a budget the rows are complete.
#[test]
fn distances_tiled_witness_catches_a_cut_short_dispatch() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let software = g.report.name.to_lowercase().contains("llvmpipe");
    let high = uniform("h", 3, 70_000, 9);
    let low = points("l", 3, 2, |i, c| (i * (c + 1)) as f64);
    let specs: Vec<Spec> = ["tnc:k=1", "mrre:k=1"].iter().map(|s| s.parse().unwrap()).collect();
    let run = |backend, req: GpuRequest| {
        let opts = Options { backend, numerics: Numerics::Exact, local: true, gpu: req, ..Options::default() };
        Evaluator::new(high.clone(), opts).measure_many(&[&low], None, &specs).unwrap()
    };
    let req = GpuRequest { kernels: KernelSet::Tiled, dim_chunk: Some(70_000), ..Default::default() };
    let (cpu, dev) = (run(BackendChoice::Cpu, GpuRequest::default()), run(BackendChoice::Gpu, req));
    let stats = &dev.run.gpu.as_ref().expect("the GPU served").stats;
    assert_eq!(stats.kernel_set, KernelSet::Tiled);
    let short = stats.knn.rows_incomplete + stats.ranks.rows_incomplete;
    if software {
        assert!(short > 0, "llvmpipe cuts a 70000-trip loop: the witness must see it ({stats:?})");
    }
    if short > 0 {
        let reason = dev.run.fallback_reason.clone().unwrap_or_default();
        assert!(reason.contains("completeness witness found"), "{reason}");
    }
    let values = |e: &Evaluation| serde_json::to_string(&e.projections).unwrap();
    assert_eq!(values(&dev), values(&cpu), "scores and local values after the witness's recomputation");
}

/// The classic kernel set stays selectable and exact: whole resources on the corpus, and the
/// run report names it.
#[test]
fn distances_classic_kernel_set_equals_the_cpu() {
    let req = GpuRequest { kernels: KernelSet::Classic, max_rows_per_dispatch: Some(7), ..Default::default() };
    let Some(g) = gpu(req) else { return };
    for (name, high, low) in corpus() {
        let stats = compare_resources(&g, &format!("classic {name}"), &high, &low, 5);
        assert_eq!(stats.kernel_set, KernelSet::Classic);
        assert_eq!(stats.tiles, None);
        assert!(stats.transfers.kernels.contains_key("distances"), "{:?}", stats.transfers.kernels);
    }
}
