//! `faithful bench`: the receipt's required keys, parity "reference" on the CPU and, where an
//! adapter exists (always under CI=true, on lavapipe), parity "identical" on the GPU.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use std::process::Command;

use faithful::gpu::GpuRequest;
use serde_json::Value;

const KERNELS: [&str; 5] = ["distances", "knn", "ranks", "pairs", "evaluation"];

fn bench(backend: &str, json: &std::path::Path) -> Value {
    bench_with(backend, json, &[])
}

fn bench_with(backend: &str, json: &std::path::Path, extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(["bench", "--sizes", "300", "--dims", "8", "--k", "5", "--repeat", "1", "--backend", backend, "--json"])
        .arg(json)
        .args(extra)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("| backend | adapter | kernel |"), "{table}");
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn check_receipt(r: &Value, backend: &str, parity: &str) {
    let m = &r["machine"];
    for key in ["os", "cpu_model", "cores", "memory_bytes", "faithful_version", "wgpu_version"] {
        assert!(m.get(key).is_some(), "machine.{key} missing: {m}");
    }
    assert!(m["cores"].as_u64().unwrap() >= 1);
    assert!(r["adapters"].is_array());
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), KERNELS.len() * if backend == "cpu" { 1 } else { rows.len() / KERNELS.len() });
    for kernel in KERNELS {
        assert!(rows.iter().any(|row| row["kernel"] == kernel), "no {kernel} row");
    }
    for row in rows {
        assert_eq!(row["backend"], backend, "{row}");
        assert!(row["adapter"].is_string());
        assert_eq!((row["n"].as_u64(), row["d"].as_u64(), row["k"].as_u64()), (Some(300), Some(8), Some(5)));
        for key in ["cold_s", "warm_s"] {
            assert!(row[key].as_f64().is_some_and(|s| s >= 0.0), "{key}: {row}");
        }
        assert_eq!(row["parity"], parity, "{row}");
        assert!(row["gflops"].as_f64().is_some_and(|g| g > 0.0), "{row}");
    }
}

#[test]
fn bench_cpu_receipt() {
    let dir = tempfile::tempdir().unwrap();
    let r = bench("cpu", &dir.path().join("cpu.json"));
    check_receipt(&r, "cpu", "reference");
    assert_eq!(r["settings"]["metric"], "euclidean");
    assert_eq!(r["adapters"].as_array().unwrap().len(), 0, "--backend cpu lists no adapters");
    assert!(r["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0));
}

#[test]
fn bench_gpu_receipt_identical() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let r = bench("gpu", &dir.path().join("gpu.json"));
    check_receipt(&r, "gpu", "identical");
    let adapters = r["adapters"].as_array().unwrap();
    assert!(
        adapters.iter().any(|a| a["benchmarked"] == true && a["max_storage_buffer_binding_size"].as_u64().is_some()),
        "{adapters:?}"
    );
    let rows = r["rows"].as_array().unwrap();
    assert!(rows.iter().filter(|row| row["kernel"] != "pairs").all(|row| row["served"] == "gpu"), "{rows:?}");
    // Device kernel times from timestamp queries, on every GPU-served row when the adapter has them.
    let timestamps = adapters.iter().any(|a| {
        a["benchmarked"] == true && a["features"].as_array().is_some_and(|f| f.iter().any(|x| x == "TIMESTAMP_QUERY"))
    });
    for row in rows.iter().filter(|row| row["served"] == "gpu") {
        let t = row["device_kernel_warm_s"].as_f64();
        assert_eq!(t.is_some_and(|t| t > 0.0), timestamps, "{row}");
    }
}

#[test]
fn bench_cpu_receipt_under_a_metric() {
    let dir = tempfile::tempdir().unwrap();
    for (args, name) in
        [(&["--metric", "cosine"][..], "cosine"), (&["--metric", "minkowski", "--minkowski-p", "3"], "minkowski:p=3")]
    {
        let r = bench_with("cpu", &dir.path().join("cpu.json"), args);
        check_receipt(&r, "cpu", "reference");
        assert_eq!(r["settings"]["metric"], name);
    }
}

/// Cosine, correlation, cityblock, chebyshev and sqeuclidean are certified on the GPU: every
/// kernel runs there, the distance block within its bound of the metric's value in the
/// device's units (2·d for unit rows, d for cityblock and chebyshev, not d²) and the rest
/// identical to the CPU's; a metric without a certified kernel (minkowski p = 3) leaves its GPU
/// rows to the CPU, saying why.
#[test]
fn bench_gpu_under_a_metric() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for metric in ["cosine", "correlation", "cityblock", "chebyshev", "sqeuclidean"] {
        let r = bench_with("gpu", &dir.path().join("gpu.json"), &["--metric", metric]);
        check_receipt(&r, "gpu", "identical");
        assert_eq!(r["settings"]["metric"], metric);
        let rows = r["rows"].as_array().unwrap();
        assert!(rows.iter().filter(|row| row["kernel"] != "pairs").all(|row| row["served"] == "gpu"), "{rows:?}");
    }
    let r = bench_with("gpu", &dir.path().join("gpu.json"), &["--metric", "minkowski", "--minkowski-p", "3"]);
    for row in r["rows"].as_array().unwrap() {
        assert_eq!(row["parity"], "skipped", "{row}");
        assert!(row["error"].as_str().unwrap().contains("metric minkowski:p=3 has no certified GPU kernel"), "{row}");
    }
}

/// `--gpu-resident` sizes the row blocks of a GPU pass: 64 KiB of resident distances at
/// n = 300 (two blocks in flight, two spaces) leave blocks of 13 rows, so the evaluation runs
/// in many blocks, and every row is still identical to the CPU reference.
#[test]
fn bench_gpu_resident_memory_sizes_the_blocks() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let r = bench_with("gpu", &dir.path().join("gpu.json"), &["--kernels", "evaluation", "--gpu-resident", "64K"]);
    let rows = r["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        assert_eq!(row["parity"], "identical", "{row}");
        let per = row["gpu_warm"]["knn"]["rows_per_dispatch"].as_u64().unwrap();
        assert_eq!(per, 65536 / (2 * 2 * 300 * 4), "{row}");
    }
}

/// `--gpu-refine device` computes the undecided pairs' f64 sums on the device: the rows are the
/// CPU reference's, the receipt says where they were refined and counts `exact_sqdist`'s pairs.
#[test]
fn bench_gpu_refine_device_refines_on_the_device() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("gpu.json");
    let r = bench_with("gpu", &json, &["--kernels", "knn,evaluation", "--gpu-refine", "device"]);
    let rows = r["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        assert_eq!(row["parity"], "identical", "{row}");
        let g = &row["gpu_warm"];
        assert_eq!(g["refine"], "device", "{row}");
        assert!(g["transfers"]["kernels"]["exact_sqdist"]["pairs"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(g["transfers"]["kernels"]["knn_candidates"]["host_f64_distances"].as_u64(), Some(0), "{row}");
    }
}

/// `--gpu-point-tile` streams a GPU pass as row blocks × point tiles: at n = 300 and tiles of
/// 64 points (five tiles of 60), with 64 KiB resident (one tile of a block at a time: 273-row
/// blocks), every row is identical to the CPU reference and the receipt names the plan.
#[test]
fn bench_gpu_point_tile_streams_the_pass() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("gpu.json");
    let r = bench_with("gpu", &json, &["--kernels", "evaluation", "--gpu-point-tile", "64", "--gpu-resident", "64K"]);
    let rows = r["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        assert_eq!(row["parity"], "identical", "{row}");
        let s = &row["gpu_warm"]["streamed"];
        assert_eq!((s["tiles"].as_u64(), s["width"].as_u64()), (Some(5), Some(60)), "{row}");
        assert_eq!(s["rows"].as_u64(), Some(65536 / (60 * 4)), "{row}");
        assert_eq!(row["gpu_warm"]["knn"]["rows_recomputed"].as_u64(), Some(0), "{row}");
    }
}
