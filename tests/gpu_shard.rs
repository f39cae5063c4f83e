//! Row shards on the GPU (issue 16): the certified kernels query only a block's rows against all
//! n points, and `map_rows` on the GPU backend gives the CPU's partial, byte for byte, except
//! the fields that say how it was served; GPU partials (alone, or mixed with CPU ones) fold to
//! one CPU `measure`'s bits. Runs on lavapipe and llvmpipe GL in CI.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use std::ffi::OsString;
use std::ops::Range;
use std::process::Command;
use std::sync::Arc;

use common::files;
use common::{levels, neighbourhood_specs, points};
use faithful::gpu::{Gpu, GpuRequest, gpu_row_pass_rows};
use faithful::resources::{Needs, row_pass_rows};
use faithful::shard::{Partial, plan};
use faithful::{BackendChoice, Evaluator, Labels, Numerics, Options, Points, Spec, fold};
use gpu_common::gpu;

/// Small dispatches and point ranges, so that a block starts and ends inside dispatch blocks.
fn small_dispatches() -> GpuRequest {
    GpuRequest { max_rows_per_dispatch: Some(7), rank_chunk: Some(100), ..Default::default() }
}

fn evaluator(high: &Points, backend: BackendChoice, g: Option<Arc<Gpu>>) -> Evaluator {
    let mut o = Options::default();
    o.backend = backend;
    o.local = true;
    o.threads = Some(2);
    match g {
        Some(g) => Evaluator::with_gpu(high.clone(), o, g),
        None => Evaluator::new(high.clone(), o),
    }
}

/// (name, high, low): tie-heavy grids, identical points (candidate lists overflow), uniform.
fn cases() -> Vec<(&'static str, Points, Points)> {
    vec![
        ("levels_2x3_n700", levels("h", 700, 4, 2, 31), levels("l", 700, 2, 3, 32)),
        ("identical_300", points("h", 300, 3, |_, _| 2.0), points("l", 300, 2, |i, _| (i % 3) as f64)),
        ("uniform_n450", levels("h", 450, 6, 0, 33), levels("l", 450, 2, 0, 34)),
    ]
}

/// Blocks of two plans: the tree's leaves and larger nodes, first and last rows included.
fn blocks(n: usize) -> Vec<Range<usize>> {
    let mut b = plan(n, 150);
    b.extend(plan(n, n / 3));
    b.sort_by_key(|r| (r.start, r.end));
    b.dedup();
    b
}

/// A block of rows on the GPU is the CPU's rows, bit for bit, in the row plan, with the
/// undecided pairs refined on the device (`exact_sqdist` at the block's global rows), and in
/// the streamed plan (point tiles of 64: the block's rows against every tile; the tie-heavy and
/// the overflowing cases).
#[test]
fn gpu_row_pass_on_a_block_is_the_cpu_rows() {
    let k = 9;
    let streamed = GpuRequest { point_tile: Some(64), ..small_dispatches() };
    let device = GpuRequest { refine: faithful::gpu::Refine::Device, ..small_dispatches() };
    for (req, count) in [(small_dispatches(), 3), (device, 3), (streamed, 2)] {
        let Some(g) = gpu(req.clone()) else { return };
        gpu_rows_match(&g, k, count, req.point_tile.is_some());
    }
}

fn gpu_rows_match(g: &Gpu, k: usize, count: usize, streamed: bool) {
    for (name, high, low) in cases().into_iter().take(count) {
        for rows in blocks(high.n()) {
            let tag = format!("{name} rows {}:{} streamed {streamed}", rows.start, rows.end);
            let cpu = row_pass_rows(&high, None, &[&low], Needs::cross_with_dists(k), 16, rows.clone());
            let (gp, stats) =
                gpu_row_pass_rows(g, &high, None, &[&low], Needs::cross_with_dists(k), Numerics::Exact, rows.clone())
                    .unwrap();
            assert_eq!(stats.streamed.is_some(), streamed, "{tag}: the plan");
            assert_eq!(stats.knn.rows, 2 * rows.len() as u64, "{tag}: the kernels query the block's rows only");
            assert_eq!(stats.ranks.queries, 2 * (rows.len() * k) as u64, "{tag}: rank queries of the block only");
            let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
            let (ch, gh) = (cpu.high.unwrap(), gp.high.unwrap());
            assert_eq!((gh.idx, bits(&gh.dist)), (ch.idx, bits(&ch.dist)), "{tag}: original-space kNN");
            let (cl, gl) = (&cpu.lows[0], &gp.lows[0]);
            let (ck, gk) = (cl.knn.as_ref().unwrap(), gl.knn.as_ref().unwrap());
            assert_eq!((&gk.idx, bits(&gk.dist)), (&ck.idx, bits(&ck.dist)), "{tag}: projection kNN");
            let (cc, gc) = (cl.cross.as_ref().unwrap(), gl.cross.as_ref().unwrap());
            assert_eq!(gc.rank_high_of_low, cc.rank_high_of_low, "{tag}: X ranks of Y neighbours");
            assert_eq!(gc.rank_low_of_high, cc.rank_low_of_high, "{tag}: Y ranks of X neighbours");
            assert_eq!(bits(&gc.dist_high_of_low), bits(&cc.dist_high_of_low), "{tag}: cross distances");
            assert_eq!(bits(&gc.dist_low_of_high), bits(&cc.dist_low_of_high), "{tag}: cross distances");
        }
    }
}

/// The partial's JSON with the fields that say how it was served set to `like`'s.
fn served_as(p: &Partial, like: &Partial) -> String {
    let mut p = p.clone();
    p.backend.clone_from(&like.backend);
    p.adapter.clone_from(&like.adapter);
    p.fallback_reason.clone_from(&like.fallback_reason);
    p.work = like.work.clone();
    p.seal();
    p.to_json()
}

#[test]
fn map_rows_on_the_gpu_is_the_cpu_partial_and_folds_to_one_measure() {
    let Some(g) = gpu(small_dispatches()) else { return };
    let g = Arc::new(g);
    for (name, high, low) in cases() {
        let n = high.n();
        let labels = Labels::new((0..n as i64).map(|i| i % 3).collect());
        let specs: Vec<Spec> = neighbourhood_specs(10, n, &format!("coranking:k_max={}", 20.min(n - 2)));
        let cpu = evaluator(&high, BackendChoice::Cpu, None);
        let on_gpu = evaluator(&high, BackendChoice::Gpu, Some(g.clone()));
        let mut gpu_parts = Vec::new();
        let mut mixed = Vec::new();
        for (b, rows) in plan(n, 150).into_iter().enumerate() {
            let tag = format!("{name} rows {}:{}", rows.start, rows.end);
            let c = cpu.map_rows(&low, Some(&labels), rows.clone(), &specs).unwrap();
            let gp = on_gpu.map_rows(&low, Some(&labels), rows.clone(), &specs).unwrap();
            assert_eq!((c.backend.as_str(), c.adapter.as_deref()), ("cpu", None), "{tag}");
            assert_eq!(gp.backend, "gpu", "{tag}: {:?}", gp.fallback_reason);
            assert_eq!(gp.adapter.as_deref(), Some(g.report.name.as_str()), "{tag}");
            assert_eq!(gp.fallback_reason, None, "{tag}");
            assert_eq!(gp.work.distance_rows, 0, "{tag}: the CPU computed no distance rows");
            assert_eq!(served_as(&gp, &c), c.to_json(), "{tag}: the GPU's partial differs from the CPU's");
            // Through JSON, as partials travel.
            let gp = Partial::from_json(&gp.to_json(), "gpu part").unwrap();
            mixed.push(if b % 2 == 0 { gp.clone() } else { c });
            gpu_parts.push(gp);
        }
        let want = cpu.measure(&low, Some(&labels), &specs).unwrap();
        let want = serde_json::to_string(&want).unwrap();
        gpu_parts.reverse();
        for (parts, backend) in [(&gpu_parts, "gpu"), (&mixed, if mixed.len() > 1 { "cpu+gpu" } else { "gpu" })] {
            let folded = fold(parts).unwrap();
            assert_eq!(folded.run.backend, backend, "{name}");
            assert_eq!(serde_json::to_string(&folded.projections[0].scores).unwrap(), want, "{name}: fold != measure");
        }
    }
}

/// `faithful shard --backend gpu` writes the partial of `--backend cpu` but for how it was
/// served, and the partial says so.
#[test]
fn the_shard_command_serves_a_block_on_the_gpu() {
    if gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ties = |n, d, seed| -> Vec<Vec<f64>> {
        files::random_rows(n, d, seed, 0.0, 4.0).into_iter().map(|r| r.into_iter().map(f64::floor).collect()).collect()
    };
    let high = files::write_csv(dir.path(), "high.csv", &ties(600, 4, 1));
    let low = files::write_csv(dir.path(), "low.csv", &ties(600, 2, 2));
    let part = |backend: &str| -> Partial {
        let out = dir.path().join(format!("{backend}.fpart"));
        let mut args: Vec<OsString> =
            ["shard", "--rows", "296:600", "--backend", backend, "--high"].map(Into::into).into();
        args.extend([high.clone().into(), "--low".into(), low.clone().into(), "--out".into(), out.clone().into()]);
        args.extend(["--spec", "tnc:k=7", "--spec", "mrre:k=5"].map(OsString::from));
        let run = Command::new(env!("CARGO_BIN_EXE_faithful")).args(&args).output().expect("binary runs");
        assert!(run.status.success(), "{backend}: {}", String::from_utf8_lossy(&run.stderr));
        Partial::from_json(&std::fs::read_to_string(&out).unwrap(), backend).unwrap()
    };
    let (c, g) = (part("cpu"), part("gpu"));
    assert_eq!((c.backend.as_str(), g.backend.as_str()), ("cpu", "gpu"), "{:?}", g.fallback_reason);
    assert!(g.adapter.is_some());
    assert_eq!(served_as(&g, &c), c.to_json());
}
