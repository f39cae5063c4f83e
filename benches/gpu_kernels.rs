//! Criterion benches of the GPU kernels through wgpu: bounded squared distances, certified kNN
//! and cross ranks (the row pass). Without an adapter they are skipped with a message, except
//! under CI=true, where that is an error (as in tests/common/gpu.rs). Software adapters
//! (lavapipe) get small sizes; under `cargo test --all-targets` each runs once on small data.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use faithful::Numerics;
use faithful::bench::blobs;
use faithful::gpu::{Gpu, GpuRequest, gpu_row_pass, sqdist::bounded_sqdist};
use faithful::resources::{Needs, row_pass};

fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn device() -> Option<Arc<Gpu>> {
    let adapter = std::env::var("FAITHFUL_BENCH_ADAPTER").ok();
    match Gpu::new(&GpuRequest { adapter, ..Default::default() }) {
        Ok(g) => Some(Arc::new(g)),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true requires a GPU adapter (lavapipe: mesa-vulkan-drivers): {e}")
        }
        Err(e) => {
            eprintln!("gpu_kernels: skipped, no wgpu adapter ({e})");
            None
        }
    }
}

fn kernels(c: &mut Criterion) {
    let Some(gpu) = device() else { return };
    let hardware = gpu.report.hardware;
    let (sizes, dim, k): (&[usize], usize, usize) = match (full(), hardware) {
        (false, _) => (&[200], 8, 5),
        (true, false) => (&[500, 1000], 20, 20),
        (true, true) => (&[10000, 50000], 20, 20),
    };
    eprintln!("gpu_kernels: {} ({}), n = {sizes:?}", gpu.report.name, gpu.report.backend);
    let mut g = c.benchmark_group("gpu");
    g.sample_size(10);
    for &n in sizes {
        let data = blobs(n, dim, 42);
        let (x, y) = (&data.high, &data.low);
        let rows = faithful::bench::kernels::distance_rows(n);
        g.throughput(Throughput::Elements((rows * n) as u64));
        g.bench_with_input(BenchmarkId::new("bounded_sqdist", n), &n, |b, _| {
            b.iter(|| bounded_sqdist(&gpu, black_box(x), 0..rows).unwrap())
        });
        g.throughput(Throughput::Elements((n * n) as u64));
        let knn = Needs { knn_high: k, ..Needs::default() };
        g.bench_with_input(BenchmarkId::new("certified_knn", n), &n, |b, _| {
            b.iter(|| gpu_row_pass(&gpu, black_box(x), None, &[], knn.clone(), Numerics::Exact).unwrap())
        });
        let cached = row_pass(x, None, &[], knn.clone(), 32).high.unwrap();
        g.bench_with_input(BenchmarkId::new("row_pass_cross", n), &n, |b, _| {
            b.iter(|| gpu_row_pass(&gpu, black_box(x), Some(&cached), &[y], Needs::cross(k), Numerics::Exact).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
