//! `bench` in the browser API: the kernel suite of `faithful bench` (src/bench) on the wasm CPU
//! reference and the browser's WebGPU, cold and warm, every GPU result checked against the CPU
//! reference; returns the receipt JSON in the native format (`faithful bench --json`).
//!
//! ```js
//! const json = await bench({ sizes: [500, 1000], dims: [20], k: 20, repeat: 3, seed: 42,
//!                            backends: ["cpu", "webgpu"], kernels: ["knn", "ranks"],
//!                            adapterLabel: "swiftshader", progress: (done, total, what) => {} });
//! ```
//! Every key is optional (defaults: sizes [500, 1000], dims [20], k 20, repeat 3, seed 42, both
//! backends, every kernel). Cold = a fresh evaluator and a fresh `Gpu::new_async` (adapter, device
//! and pipeline compilation inside the clock); warm = the median of `repeat` further runs on the
//! same device.

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::prelude::*;

use crate::bench::kernels::{self, Backend, Case, Check, Kernel, Outcome};
use crate::bench::machine::{Machine, locked_version};
use crate::bench::receipt::{AdapterEntry, Receipt, Row, Settings};
use crate::bench::{blobs, peaks};
use crate::gpu::{Gpu, GpuRequest};

const TIMING: &str = "wall clock (web_time::Instant: performance.now() in the page's worker) around each kernel call; cold = the first run with a fresh evaluator and, on WebGPU, a fresh device (adapter, device start and pipeline compilation inside the clock; browsers may keep their own shader caches); warm = the median of `repeat` further runs on the same device. GPU timestamp queries are not used: GPU times include uploads, readbacks and host refinement. The browser may coarsen performance.now() (to 0.1 ms or more)";

fn fail(msg: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&msg.to_string()).into()
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

fn count(v: &JsValue, what: &str, min: f64) -> Result<Option<usize>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x >= min && x <= 1e7 => Ok(Some(x as usize)),
        _ => Err(fail(format!("{what}: expected an integer >= {min}"))),
    }
}

fn counts(v: &JsValue, what: &str, min: f64, default: &[usize]) -> Result<Vec<usize>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(default.to_vec());
    }
    let items: Vec<JsValue> = if Array::is_array(v) {
        Array::from(v).iter().collect()
    } else if let Some(s) = v.as_string() {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| JsValue::from_f64(s.parse::<f64>().unwrap_or(f64::NAN)))
            .collect()
    } else {
        vec![v.clone()]
    };
    let out = items.iter().map(|x| count(x, what, min).map(|c| c.unwrap_or(0))).collect::<Result<Vec<_>, _>>()?;
    if out.is_empty() {
        return Err(fail(format!("{what}: empty")));
    }
    Ok(out)
}

fn strings(v: &JsValue) -> Option<Vec<String>> {
    if Array::is_array(v) {
        Some(Array::from(v).iter().filter_map(|s| s.as_string()).collect())
    } else {
        v.as_string().map(|s| s.split(',').map(|x| x.trim().to_string()).filter(|x| !x.is_empty()).collect())
    }
}

/// The browser as a `Machine`: the user agent stands for the OS, navigator.hardwareConcurrency
/// for the cores; the wasm CPU reference runs on one thread.
fn machine() -> Machine {
    let nav = get(&js_sys::global().into(), "navigator");
    let ua = get(&nav, "userAgent").as_string();
    let cores = get(&nav, "hardwareConcurrency").as_f64().map_or(1, |c| c as usize);
    let memory = get(&nav, "deviceMemory").as_f64().map(|g| (g * (1u64 << 30) as f64) as u64);
    Machine {
        os: ua.map_or_else(|| "browser".to_string(), |u| format!("browser: {u}")),
        kernel: None,
        arch: "wasm32",
        cpu_model: None,
        cores,
        threads: rayon::current_num_threads(),
        memory_bytes: memory,
        faithful_version: env!("CARGO_PKG_VERSION"),
        wgpu_version: locked_version("wgpu"),
        git_commit: option_env!("FAITHFUL_GIT_COMMIT").map(str::to_string),
        load_average: None,
    }
}

fn progress(cb: &Option<Function>, done: usize, total: usize, what: &str) {
    if let Some(f) = cb {
        let _ = f.call3(&JsValue::NULL, &(done as f64).into(), &(total as f64).into(), &what.into());
    }
}

/// Runs the kernel suite (see the module docs) and returns the receipt JSON.
#[wasm_bindgen]
pub async fn bench(request: crate::wasm::BenchRequest) -> Result<String, JsValue> {
    let request: JsValue = request.into();
    let sizes = counts(&get(&request, "sizes"), "sizes", 3.0, &[500, 1000])?;
    let dims = counts(&get(&request, "dims"), "dims", 2.0, &[20])?;
    let k = count(&get(&request, "k"), "k", 1.0)?.unwrap_or(20);
    let repeat = count(&get(&request, "repeat"), "repeat", 1.0)?.unwrap_or(3);
    let seed = get(&request, "seed").as_f64().filter(|s| *s >= 0.0 && s.fract() == 0.0).map_or(42, |s| s as u64);
    let backends = strings(&get(&request, "backends")).unwrap_or_else(|| vec!["cpu".into(), "webgpu".into()]);
    for b in &backends {
        if b != "cpu" && b != "webgpu" && b != "gpu" {
            return Err(fail(format!("backends: unknown backend '{b}' (cpu, webgpu)")));
        }
    }
    let (want_cpu, want_gpu) = (backends.iter().any(|b| b == "cpu"), backends.iter().any(|b| b != "cpu"));
    if !want_cpu && !want_gpu {
        return Err(fail("backends: none chosen"));
    }
    let kernel_list: Vec<Kernel> = match strings(&get(&request, "kernels")) {
        Some(names) if !names.is_empty() => names
            .iter()
            .map(|n| {
                Kernel::ALL
                    .iter()
                    .copied()
                    .find(|k| k.name() == n)
                    .ok_or_else(|| fail(format!("kernels: unknown kernel '{n}'")))
            })
            .collect::<Result<_, _>>()?,
        _ => Kernel::ALL.to_vec(),
    };
    for &n in &sizes {
        if k >= n {
            return Err(fail(format!("k = {k} needs 1 <= k < n (n = {n})")));
        }
    }
    let cb = get(&request, "progress").dyn_into::<Function>().ok();
    let label = get(&request, "adapterLabel").as_string().filter(|s| !s.is_empty());

    // The adapter, probed once (untimed) for the receipt; each row then starts its own device.
    let mut adapters = Vec::new();
    let mut gpu_error = None;
    let mut gpu_label = String::from("webgpu");
    if want_gpu {
        match Gpu::new_async(&GpuRequest::default()).await {
            Ok(g) => {
                let name = if g.report.name.is_empty() {
                    label.clone().unwrap_or_else(|| "webgpu".into())
                } else {
                    g.report.name.clone()
                };
                gpu_label = name.clone();
                // A browser hides the adapter's name from wgpu: navigator.gpu's vendor/architecture stand in.
                let mut report = g.report.clone();
                report.name = name.clone();
                adapters.push(AdapterEntry {
                    known_peak_tflops: peaks::peak_tflops(&name),
                    benchmarked: true,
                    skipped: None,
                    report,
                });
            }
            Err(e) => gpu_error = Some(format!("WebGPU unavailable: {e}")),
        }
    }
    let cpu_label = "wasm CPU reference".to_string();
    let mut targets: Vec<bool> = Vec::new(); // gpu?
    if want_cpu {
        targets.push(false);
    }
    if want_gpu {
        targets.push(true);
    }
    let total = sizes.len() * dims.len() * kernel_list.len() * targets.len();
    let mut done = 0;
    let mut rows = Vec::new();
    for &n in &sizes {
        for &dim in &dims {
            let data = blobs(n, dim, seed);
            let case = Case::new(&data, k);
            for &kernel in &kernel_list {
                let mut reference: Option<Check> = None;
                if !want_cpu && kernel != Kernel::Distances {
                    reference = Some(kernels::run_async(kernel, &mut Backend::Cpu, &case).await.map_err(fail)?.check);
                }
                for &gpu in &targets {
                    progress(
                        &cb,
                        done,
                        total,
                        &format!("{} {} n={n} D={dim}", if gpu { "webgpu" } else { "cpu" }, kernel.name()),
                    );
                    let mut row = Row::new(
                        if gpu { "gpu" } else { "cpu" },
                        if gpu { &gpu_label } else { &cpu_label },
                        None,
                        kernel,
                        n,
                        dim,
                        data.low.dim(),
                        k,
                    );
                    if gpu && let Some(e) = &gpu_error {
                        row.parity = "error".into();
                        row.error = Some(e.clone());
                        rows.push(row);
                        done += 1;
                        continue;
                    }
                    let mut backend = if gpu { Backend::gpu(None) } else { Backend::Cpu };
                    let mut outs: Vec<Outcome> = Vec::with_capacity(repeat + 1);
                    let mut error = None;
                    for _ in 0..=repeat {
                        match kernels::run_async(kernel, &mut backend, &case).await {
                            Ok(o) => outs.push(o),
                            Err(e) => {
                                error = Some(e.to_string());
                                break;
                            }
                        }
                    }
                    row.api = backend.device().map(|g| g.report.backend.clone());
                    row.peak_tflops = if gpu { peaks::peak_tflops(&gpu_label) } else { None };
                    drop(backend);
                    match error {
                        None => {
                            row.record(&outs, gpu, &mut reference, kernel, data.low.dim());
                        }
                        Some(e) => {
                            row.parity = "error".into();
                            row.error = Some(e);
                        }
                    }
                    rows.push(row);
                    done += 1;
                }
            }
        }
    }
    progress(&cb, done, total, "done");
    let settings = Settings {
        command: format!(
            "web page: bench sizes={} dims={} k={k} repeat={repeat} seed={seed} backends={}",
            join(&sizes),
            join(&dims),
            backends.join(",")
        ),
        sizes,
        dims,
        low_dim: 2,
        k,
        repeat,
        seed,
        kernels: kernel_list.iter().map(|k| k.name()).collect(),
        distance_block_pairs: kernels::DISTANCE_BLOCK_PAIRS,
        metric: crate::Metric::Euclidean.to_string(),
    };
    let mut receipt = Receipt::new(machine(), adapters, settings, rows);
    receipt.timing = TIMING;
    serde_json::to_string_pretty(&receipt).map_err(fail)
}

fn join(v: &[usize]) -> String {
    v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}
