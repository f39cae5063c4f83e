//! The GPU through the command line: `knn`, `backends`, `measure --backend gpu`, and exit 3
//! when the GPU was asked for and cannot serve.

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use std::process::Command;

use faithful::gpu::GpuRequest;
use serde_json::Value;

fn faithful(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(args)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap()
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn write_csv(dir: &std::path::Path, name: &str, p: &faithful::Points) -> String {
    let path = dir.join(name);
    let text: String =
        (0..p.n()).map(|i| p.row(i).iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(",") + "\n").collect();
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn knn_command_gpu_equals_cpu() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, high, _) in common::corpus() {
        let path = write_csv(dir.path(), &format!("{name}.csv"), &high);
        for k in ["1", "7"] {
            let cpu = json(&faithful(&["knn", "--data", &path, "--k", k, "--backend", "cpu", "--json"]));
            let gpu = json(&faithful(&["knn", "--data", &path, "--k", k, "--backend", "gpu", "--json"]));
            assert_eq!(gpu["run"]["backend"], "gpu", "{name}");
            assert_eq!(gpu["indices"], cpu["indices"], "{name} k={k}");
            assert_eq!(gpu["distances"].to_string(), cpu["distances"].to_string(), "{name} k={k}");
        }
    }
}

#[test]
fn knn_command_writes_npy() {
    let dir = tempfile::tempdir().unwrap();
    let (_, high, _) = common::corpus().remove(0);
    let data = write_csv(dir.path(), "d.csv", &high);
    let (out, dist) = (dir.path().join("i.npy"), dir.path().join("d.npy"));
    let o = faithful(&[
        "knn",
        "--data",
        &data,
        "--k",
        "4",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
        "--distances",
        dist.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    use ndarray_npy::ReadNpyExt;
    let idx = ndarray::Array2::<i64>::read_npy(std::fs::File::open(&out).unwrap()).unwrap();
    let d = ndarray::Array2::<f64>::read_npy(std::fs::File::open(&dist).unwrap()).unwrap();
    let oracle = common::Oracle::new(&high);
    assert_eq!(idx.dim(), (high.n(), 4));
    for i in 0..high.n() {
        let want: Vec<i64> = oracle.knn(i, 4).iter().map(|&j| j as i64).collect();
        assert_eq!(idx.row(i).to_vec(), want, "row {i}");
        for s in 0..4 {
            assert_eq!(d[(i, s)].to_bits(), oracle.d(i, want[s] as usize).to_bits());
        }
    }
}

#[test]
fn measure_on_gpu_equals_cpu_and_reports_what_served() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let cpu = json(&faithful(&["measure", "--backend", "cpu", "--local", "--json"]));
    let gpu = json(&faithful(&["measure", "--backend", "gpu", "--local", "--json"]));
    assert_eq!(gpu["projections"].to_string(), cpu["projections"].to_string());
    let run = &gpu["run"];
    assert_eq!(run["backend"], "gpu");
    assert_eq!(run["backend_requested"], "gpu");
    assert_eq!(run["numerics"], "exact");
    assert!(run["adapter"]["name"].is_string() && run["adapter"]["driver"].is_string());
    assert!(run["gpu"]["stats"]["knn"]["candidates"].as_u64().unwrap() >= 2 * 1797 * 20);
    assert!(run["gpu"]["stats"]["transfers"]["bytes_read_back"].as_u64().unwrap() > 0);
    // Timestamp queries: device time is reported wherever the adapter offers them.
    let has_ts = run["adapter"]["features"].as_array().unwrap().iter().any(|f| f == "TIMESTAMP_QUERY");
    let kernel_gpu_s = run["gpu"]["stats"]["transfers"]["kernel_gpu_s"].as_f64().unwrap();
    assert_eq!(kernel_gpu_s > 0.0, has_ts, "kernel_gpu_s {kernel_gpu_s} with TIMESTAMP_QUERY {has_ts}");
    assert!(run["served"].as_array().unwrap().iter().any(|s| s["output"] == "cross_ranks" && s["backend"] == "gpu"));
    assert_eq!(cpu["run"]["backend"], "cpu");
}

/// `measure --metric cityblock|chebyshev --backend gpu` on the bundled digits (integer pixel
/// values 0–16: L1 and L∞ ties everywhere): the GPU serves, `fallback_reason` is null, and the
/// scores and local values are the CPU's; an uncertified metric (minkowski p = 3) is served by
/// the CPU and the report names it.
#[test]
fn measure_under_cityblock_and_chebyshev_on_gpu_equals_cpu() {
    if gpu_common::gpu(GpuRequest::default()).is_none() {
        return;
    }
    let specs = ["--spec", "tnc:k=10", "--spec", "lcmc:k=10", "--spec", "mrre:k=10"];
    for metric in
        [&["--metric", "cityblock"][..], &["--metric", "chebyshev"], &["--metric", "minkowski", "--minkowski-p", "3"]]
    {
        let go = |backend: &str| {
            let mut args = vec!["measure", "--backend", backend, "--local", "--json"];
            args.extend_from_slice(metric);
            args.extend_from_slice(&specs);
            json(&faithful(&args))
        };
        let (cpu, gpu) = (go("cpu"), go("gpu"));
        assert_eq!(gpu["projections"].to_string(), cpu["projections"].to_string(), "{metric:?}");
        let run = &gpu["run"];
        if metric[1] == "minkowski" {
            assert_eq!(run["backend"], "cpu", "{metric:?}");
            let why = run["fallback_reason"].as_str().unwrap_or_default();
            assert!(why.contains("metric minkowski:p=3 has no certified GPU kernel"), "{why}");
        } else {
            assert_eq!(run["backend"], "gpu", "{metric:?}: {}", run["fallback_reason"]);
            assert!(run["fallback_reason"].is_null(), "{metric:?}: {}", run["fallback_reason"]);
        }
    }
}

#[test]
fn backends_lists_adapters() {
    let out = json(&faithful(&["backends", "--json"]));
    let b = out["backends"].as_array().unwrap();
    assert_eq!(b[0]["backend"], "cpu");
    assert_eq!(b[0]["status"], "available");
    // Each adapter's verdict (kernels' needs, and a device started when listed), in order.
    let usable = b[1]["usable"].as_array().unwrap();
    assert_eq!(usable.len(), b[1]["adapters"].as_array().unwrap().len(), "{out}");
    for u in usable {
        let u = u.as_str().unwrap();
        assert!(u == "usable" || u.starts_with("not usable: "), "{u}");
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        assert!(!b[1]["adapters"].as_array().unwrap().is_empty(), "CI=true requires an adapter: {out}");
        assert_eq!(b[1]["status"], "available");
    }
}

#[test]
fn gpu_requested_but_unavailable_exits_3_with_the_reason() {
    let o = faithful(&["measure", "--backend", "gpu", "--adapter", "no-such-adapter-xyz"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no-such-adapter-xyz") && err.starts_with("faithful: error:"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);
}

#[test]
fn auto_stays_on_cpu_for_small_jobs_and_says_why() {
    let out = json(&faithful(&["measure", "--json"]));
    assert_eq!(out["run"]["backend_requested"], "auto");
    assert_eq!(out["run"]["backend"], "cpu");
    assert!(out["run"]["fallback_reason"].as_str().unwrap().contains("auto"));
}
