//! Criterion benches of the CPU reference kernels: a distance row, kNN selection, rank counting
//! and the row pass. `cargo bench --bench cpu_kernels`; under `cargo test --all-targets` (no
//! `--bench` argument: Criterion's test mode) each runs once on small data.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use faithful::bench::blobs;
use faithful::reference::{RankScratch, count_ranks, distance_row, select_knn};
use faithful::resources::{Needs, row_pass};

/// Criterion's benchmark mode (`cargo bench` passes `--bench`); otherwise small data.
fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn kernels(c: &mut Criterion) {
    let (sizes, dim, k): (&[usize], usize, usize) = if full() { (&[2000, 10000], 20, 20) } else { (&[200], 8, 5) };
    let mut g = c.benchmark_group("cpu");
    g.sample_size(10);
    for &n in sizes {
        let data = blobs(n, dim, 42);
        let (x, i) = (&data.high, n / 2);
        let mut row = vec![0.0; n];
        distance_row(x, i, &mut row);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("distance_row", n), &n, |b, _| {
            b.iter(|| distance_row(black_box(x), i, &mut row))
        });
        let (mut top, mut idx, mut dist) = (Vec::new(), vec![0u32; k], vec![0.0; k]);
        g.bench_with_input(BenchmarkId::new("knn_select", n), &n, |b, _| {
            b.iter(|| select_knn(black_box(&row), i, k, &mut top, &mut idx, &mut dist))
        });
        // The ranks of k points far down the order (those a projection's neighbours often have).
        let queries: Vec<u32> = (0..k as u32).map(|q| (q * 7 + 1) % n as u32).filter(|&q| q as usize != i).collect();
        let (mut out, mut scratch) = (vec![0u32; queries.len()], RankScratch::default());
        g.bench_with_input(BenchmarkId::new("rank_count", n), &n, |b, _| {
            b.iter(|| count_ranks(black_box(&row), i, &queries, &mut out, &mut scratch))
        });
        g.throughput(Throughput::Elements((n * n) as u64));
        let low = &data.low;
        g.bench_with_input(BenchmarkId::new("row_pass_cross", n), &n, |b, _| {
            b.iter(|| row_pass(black_box(x), None, &[low], Needs::cross(k), 32))
        });
    }
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
