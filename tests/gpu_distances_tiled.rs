//! The tiled squared-distance kernel (`shaders/distances_tiled.wgsl`, host
//! `src/gpu/distances_tiled.rs`) in whole runs: resources bit for bit at several tile sizes and
//! block plans, its witness catching a dispatch a driver cuts short, and the classic kernel set
//! kept. Its twin (`src/gpu/twin/distances_tiled.rs`) is compared with the device in
//! `gpu_kernels_twins::distances_tiled`. Runs on lavapipe (Vulkan) and llvmpipe (GL) in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use common::{corpus, points, uniform};
use faithful::gpu::{GpuRequest, KernelSet, Tiles};
use faithful::{BackendChoice, Evaluation, Evaluator, Numerics, Options, Spec};
use gpu_common::{compare_resources, gpu};

/// Tile sizes every adapter accepts (WebGPU's floor limits).
fn floor_tiles() -> Tiles {
    Tiles::choose(&wgpu::Limits::default())
}

/// Whole resources, bit for bit, with the tiled kernel at the floor tiles, at tiles of 8 × 8
/// invocations with 4 staged coordinates, and at 8-row register blocks (4 × 8 invocations), in
/// block plans that cut row tiles (7 rows per block).
#[test]
fn distances_tiled_resources_equal_the_cpu_at_several_tile_sizes() {
    let small = Tiles { threads_rows: 8, threads_points: 8, coords: 4, row_block: 4 };
    let tall = Tiles { threads_rows: 4, threads_points: 8, coords: 4, row_block: 8 };
    for tiles in [floor_tiles(), small, tall] {
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
        let mut opts = Options::default();
        (opts.backend, opts.numerics, opts.local, opts.gpu) = (backend, Numerics::Exact, true, req);
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
