//! The browser API (wasm-bindgen), packaged for npm as `faithful-dr` (scripts/npm_pack.sh).
//!
//! ```js
//! import init, { Session, evaluate, exampleData, measures, version } from "faithful-dr";
//! await init();
//! const s = await Session.create({ high: {data, rows, cols}, labels, backend: "webgpu" });
//! const r = await s.measure({ low: {data, rows, cols: 2}, specs: ["tnc:k=20"], local: true });
//! const once = await evaluate({ high, lows: [{name, data, rows, cols}], labels, specs, local: true });
//! ```
//! Results are objects in the CLI's JSON schema with per-point values as Float64Array
//! (`evaluateJson` returns the CLI's JSON text). The TypeScript types are in src/wasm/types.rs.
//! `backend`: "webgpu" (default; falls back to the wasm CPU reference, and says why, when there
//! is no WebGPU), "cpu", or "auto". `numerics`: "exact" (default) or "fast". `residentRanks`:
//! "auto" (default), "always" or "never" (the original space's rank table, `ResidentRanks`).

use std::sync::Arc;

use js_sys::{Array, Float32Array, Float64Array, Int32Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::evaluate::default_specs;
use crate::gpu::{Gpu, GpuRequest};
use crate::report::Evaluation;
use crate::{BackendChoice, Evaluator, Labels, Numerics, Options, Points, Spec, example};

mod session;
mod types;
mod views;

pub use session::Session;
pub use types::{
    BenchRequest, EvaluateRequest, EvaluationValue, ExampleData, MeasureList, PromiseEvaluation, PromiseViews,
    ViewsRequest,
};
pub use views::views;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Tests only (feature `test-trap`): executes `unreachable`, a real wasm trap (a
/// `WebAssembly.RuntimeError`), after which the module instance must not be used again.
#[cfg(feature = "test-trap")]
#[wasm_bindgen(js_name = testTrap)]
pub fn test_trap() {
    core::arch::wasm32::unreachable()
}

fn fail(msg: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&msg.to_string()).into()
}

fn get(obj: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(obj, &JsValue::from_str(key))
}

/// A typed array's or an array's values as f64. The copy is reserved fallibly: a browser's
/// memory (4 GiB at most in wasm32) refuses a large one with a message, never an abort.
///
/// A typed array may view this module's own memory; reserving the copy can grow that memory,
/// which detaches the buffer the array views (its length then reads 0). `copy_to` panics on a
/// length that differs from the destination's, so the length is read again after every
/// allocation and before each copy (nothing between that check and the copy allocates).
fn numbers(v: &JsValue, what: &str) -> Result<Vec<f64>, JsValue> {
    let moved = |len: u32, now: u32| {
        fail(format!(
            "{what}: the typed array changed while it was copied ({len} values, then {now}): it views memory that was detached or resized (this module's own memory grows as it copies); pass a copy of it"
        ))
    };
    let room = |len: u32| -> Result<Vec<f64>, JsValue> {
        let mut out = Vec::new();
        out.try_reserve_exact(len as usize).map_err(|_| {
            fail(format!(
                "{what}: cannot hold a copy of {len} values ({} bytes) in this browser's memory",
                len as u64 * 8
            ))
        })?;
        Ok(out)
    };
    // A narrower typed array is widened in chunks, so that no second full-length copy is made.
    macro_rules! widen {
        ($a:expr, $t:ty) => {{
            const CHUNK: u32 = 1 << 16;
            let (a, len) = ($a, $a.length());
            let mut out = room(len)?;
            let mut buf: Vec<$t> = vec![Default::default(); CHUNK.min(len) as usize];
            let mut start = 0;
            while start < len {
                if a.length() != len {
                    return Err(moved(len, a.length()));
                }
                let end = start.saturating_add(CHUNK).min(len);
                let part = &mut buf[..(end - start) as usize];
                a.subarray(start, end).copy_to(part);
                out.extend(part.iter().map(|&x| f64::from(x)));
                start = end;
            }
            Ok(out)
        }};
    }
    if let Some(a) = v.dyn_ref::<Float64Array>() {
        let len = a.length();
        let mut out = room(len)?;
        out.resize(len as usize, 0.0);
        if a.length() != len {
            return Err(moved(len, a.length()));
        }
        a.copy_to(&mut out);
        Ok(out)
    } else if let Some(a) = v.dyn_ref::<Float32Array>() {
        widen!(a, f32)
    } else if let Some(a) = v.dyn_ref::<Int32Array>() {
        widen!(a, i32)
    } else if Array::is_array(v) {
        let a = Array::from(v);
        let mut out = room(a.length())?;
        for x in a.iter() {
            out.push(x.as_f64().ok_or_else(|| fail(format!("{what}: not a number")))?);
        }
        Ok(out)
    } else {
        Err(fail(format!("{what}: expected a Float64Array, Float32Array or array of numbers")))
    }
}

/// Largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn matrix(v: &JsValue, default_name: &str) -> Result<Points, JsValue> {
    let name = get(v, "name")?.as_string().unwrap_or_else(|| default_name.to_string());
    let dim = |key: &str| -> Result<usize, JsValue> {
        let x = get(v, key)?.as_f64().ok_or_else(|| fail(format!("{name}: {key} missing")))?;
        if !(x >= 0.0 && x.fract() == 0.0 && x <= usize::MAX as f64) {
            return Err(fail(format!("{name}: {key} must be a whole number from 0 to {}, got {x}", usize::MAX)));
        }
        Ok(x as usize)
    };
    let (rows, cols) = (dim("rows")?, dim("cols")?);
    // Checked before the data is read: rows × cols may not even fit in memory's address space.
    let cells = rows
        .checked_mul(cols)
        .ok_or_else(|| fail(format!("{name}: a {rows}×{cols} matrix is too large for this browser's memory")))?;
    let data = numbers(&get(v, "data")?, &name)?;
    if data.len() != cells {
        return Err(fail(format!("{name}: {} values for a {rows}×{cols} matrix", data.len())));
    }
    Points::from_vec(name, rows, cols, data).map_err(fail)
}

/// The original space of a request: `high` as a `Matrix` of coordinates under the request's
/// `metric` (scipy's names; default euclidean), or `{ distances, rows }`, an n×n distance matrix.
fn original(request: &JsValue) -> Result<Points, JsValue> {
    let high = get(request, "high")?;
    let metric = get(request, "metric")?;
    let metric: Option<crate::Metric> = match metric.as_string() {
        Some(m) => Some(m.parse().map_err(fail)?),
        None if metric.is_undefined() || metric.is_null() => None,
        None => return Err(fail("metric: expected a string (\"cosine\", \"minkowski:p=3\", ...)")),
    };
    let distances = get(&high, "distances")?;
    if distances.is_undefined() {
        let points = matrix(&high, "high")?;
        return match metric {
            Some(m) if m != crate::Metric::Euclidean => points.with_metric(m).map_err(fail),
            _ => Ok(points),
        };
    }
    if metric.is_some_and(|m| m != crate::Metric::Precomputed) {
        return Err(fail("metric: a distance matrix (high.distances) is already the original space's distances"));
    }
    let name = get(&high, "name")?.as_string().unwrap_or_else(|| "high".into());
    let rows = get(&high, "rows")?.as_f64().ok_or_else(|| fail(format!("{name}: rows missing")))?;
    // Checked before the data is read: a wasm32 memory holds at most 2^29 float64 values.
    if !(rows >= 0.0 && rows.fract() == 0.0 && rows * rows <= (1u64 << 29) as f64) {
        return Err(fail(format!(
            "{name}: rows must be a whole number with rows × rows ≤ 2^29 (this browser's memory), got {rows}"
        )));
    }
    let n = rows as usize;
    let data = numbers(&distances, &name)?;
    let m = crate::DistanceMatrix::from_vec(name.clone(), n, data).map_err(fail)?;
    Ok(Points::from_distances(name, m))
}

/// How a request's `backend` and `numerics` are served: the options, the started WebGPU device
/// (if any) and why the wasm CPU serves instead of an asked-for GPU.
struct Served {
    requested: String,
    opts: Options,
    gpu: Option<Arc<Gpu>>,
    fallback: Option<String>,
}

impl Served {
    /// Reads `backend` and `numerics` from `request` and starts the device they ask for.
    async fn start(request: &JsValue) -> Result<Served, JsValue> {
        let requested = get(request, "backend")?.as_string().unwrap_or_else(|| "webgpu".into());
        if !["webgpu", "cpu", "auto"].contains(&requested.as_str()) {
            return Err(fail(format!("backend: expected \"webgpu\", \"cpu\" or \"auto\", got \"{requested}\"")));
        }
        let numerics = numerics(request, Numerics::Exact)?;
        let resident_ranks = match get(request, "residentRanks")?.as_string().as_deref() {
            None | Some("auto") => crate::ResidentRanks::Auto,
            Some("always") => crate::ResidentRanks::Always,
            Some("never") => crate::ResidentRanks::Never,
            Some(other) => {
                return Err(fail(format!(
                    "residentRanks: expected \"auto\", \"always\" or \"never\", got \"{other}\""
                )));
            }
        };
        let mut opts = Options { numerics, backend: BackendChoice::Cpu, resident_ranks, ..Options::default() };
        let (mut gpu, mut fallback) = (None, None);
        if requested != "cpu" {
            // Node and older browsers have no navigator.gpu; wgpu would fail less clearly.
            let navigator = get(&js_sys::global(), "navigator")?;
            let has_webgpu = navigator.is_object() && !get(&navigator, "gpu")?.is_undefined();
            if !has_webgpu {
                fallback = Some(
                    "this JavaScript environment has no WebGPU (navigator.gpu); the wasm CPU reference served".into(),
                );
            } else {
                match Gpu::new_async(&GpuRequest::default()).await {
                    Ok(g) => {
                        opts.backend = BackendChoice::Gpu;
                        gpu = Some(Arc::new(g));
                    }
                    Err(e) => fallback = Some(format!("WebGPU unavailable ({e}); the wasm CPU reference served")),
                }
            }
        }
        Ok(Served { requested, opts, gpu, fallback })
    }

    /// An evaluator of `points` on this backend (sharing the started device).
    fn evaluator(&self, points: Points) -> Evaluator {
        match &self.gpu {
            Some(g) => Evaluator::with_gpu(points, self.opts.clone(), g.clone()),
            None => Evaluator::new(points, self.opts.clone()),
        }
    }

    /// Says in the run report what was asked and why the CPU served.
    fn stamp(&self, result: &mut Evaluation) {
        self.stamp_run(&mut result.run);
    }

    /// [`Served::stamp`] for a run report alone (`Session.neighbours`).
    fn stamp_run(&self, run: &mut crate::RunReport) {
        run.backend_requested = self.requested.clone();
        if self.fallback.is_some() {
            run.fallback_reason = self.fallback.clone();
        }
    }
}

/// A request's `numerics` ("exact" or "fast"), or `default` when it has none.
fn numerics(request: &JsValue, default: Numerics) -> Result<Numerics, JsValue> {
    match get(request, "numerics")?.as_string().as_deref() {
        None => Ok(default),
        Some("exact") => Ok(Numerics::Exact),
        Some("fast") => Ok(Numerics::Fast),
        Some(other) => Err(fail(format!("numerics: expected \"exact\" or \"fast\", got \"{other}\""))),
    }
}

fn labels(request: &JsValue) -> Result<Option<Labels>, JsValue> {
    let labels_js = get(request, "labels")?;
    if labels_js.is_null() || labels_js.is_undefined() {
        return Ok(None);
    }
    let raw = numbers(&labels_js, "labels")?;
    // Integers a JavaScript number holds exactly; beyond, distinct labels would merge.
    if let Some((i, v)) =
        raw.iter().enumerate().find(|(_, v)| !v.is_finite() || v.fract() != 0.0 || v.abs() > MAX_SAFE_INTEGER)
    {
        return Err(fail(format!(
            "labels: entry {i} ({v}) is not an integer within ±{MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER)"
        )));
    }
    // Each copy reserved fallibly, as the readers' labels are: a message, never an abort.
    let memory = |bytes: u64| fail(format!("labels: cannot hold their {bytes}-byte copies in this browser's memory"));
    let mut ints = Vec::new();
    ints.try_reserve_exact(raw.len()).map_err(|_| memory(raw.len() as u64 * 8))?;
    ints.extend(raw.iter().map(|&v| v as i64));
    drop(raw);
    Labels::try_new(ints).map(Some).map_err(memory)
}

fn specs(request: &JsValue, with_labels: bool) -> Result<Vec<Spec>, JsValue> {
    Ok(spec_list(request, "specs")?.filter(|l| !l.is_empty()).unwrap_or_else(|| default_specs(with_labels)))
}

/// The spec strings under `key` (absent or null: None).
fn spec_list(request: &JsValue, key: &str) -> Result<Option<Vec<Spec>>, JsValue> {
    let specs_js = get(request, key)?;
    if specs_js.is_null() || specs_js.is_undefined() {
        return Ok(None);
    }
    if !Array::is_array(&specs_js) {
        return Err(fail(format!("{key}: expected an array of strings such as \"tnc:k=20\"")));
    }
    Array::from(&specs_js)
        .iter()
        .map(|s| s.as_string().ok_or_else(|| fail(format!("{key}: expected strings")))?.parse::<Spec>().map_err(fail))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The result as a JavaScript object in the CLI's JSON schema, per-point values as
/// Float64Array (taken from the vectors themselves, bit for bit), except for the kinds whose
/// points may have no value (`partial_mean`, `log_ratio`): an array of numbers and `null`s.
///
/// The locals that become Float64Arrays travel through the JSON text as empty arrays (no decimal
/// text of every point's value to write and parse only to be replaced; their keys stay, so each
/// local object keeps its order): they are moved out of `result` for the text and moved back.
fn evaluation_js(result: &mut Evaluation) -> Result<JsValue, JsValue> {
    // (projection, score, key, values) of each local that becomes a Float64Array.
    let mut arrays: Vec<(usize, usize, String, Vec<f64>)> = Vec::new();
    for (p, proj) in result.projections.iter_mut().enumerate() {
        for (s, score) in proj.scores.iter_mut().enumerate() {
            let kinds = &score.local_kinds;
            for (key, values) in score.local.iter_mut().flatten() {
                // A kind with points without a value keeps the JSON's array, `null` there.
                if !kinds.iter().any(|(k, kind)| k == key && kind.allows_missing()) {
                    arrays.push((p, s, key.clone(), std::mem::take(values)));
                }
            }
        }
    }
    let text = serde_json::to_string(&*result);
    let js = text.map_err(fail).and_then(|t| {
        let obj = js_sys::JSON::parse(&t)?;
        let projections = Array::from(&get(&obj, "projections")?);
        for (p, s, key, values) in &arrays {
            let scores = Array::from(&get(&projections.get(*p as u32), "scores")?);
            let local_js = get(&scores.get(*s as u32), "local")?;
            Reflect::set(&local_js, &key.into(), &Float64Array::from(values.as_slice()))?;
        }
        Ok(obj)
    });
    for (p, s, key, values) in arrays {
        let local = result.projections[p].scores[s].local.iter_mut().flatten();
        if let Some((_, slot)) = local.into_iter().find(|(k, _)| *k == key) {
            *slot = values;
        }
    }
    js
}

async fn evaluate_request(request: &JsValue) -> Result<Evaluation, JsValue> {
    let high = matrix(&get(request, "high")?, "high")?;
    let lows_js = get(request, "lows")?;
    if !Array::is_array(&lows_js) {
        return Err(fail("lows: expected an array of matrices"));
    }
    let lows = Array::from(&lows_js)
        .iter()
        .enumerate()
        .map(|(p, l)| matrix(&l, &format!("projection {p}")))
        .collect::<Result<Vec<Points>, _>>()?;
    let labels = labels(request)?;
    let specs = specs(request, labels.is_some())?;
    let mut served = Served::start(request).await?;
    served.opts.local = get(request, "local")?.as_bool().unwrap_or(false);
    let eval = served.evaluator(high);
    let refs: Vec<&Points> = lows.iter().collect();
    let mut result = eval.measure_many_async(&refs, labels.as_ref(), &specs).await.map_err(fail)?;
    served.stamp(&mut result);
    Ok(result)
}

/// Evaluates a request (see the module docs) with no resident state: the result as an object
/// in the CLI's schema (`Evaluation`), per-point values as Float64Array.
#[wasm_bindgen]
pub fn evaluate(request: EvaluateRequest) -> PromiseEvaluation {
    let request: JsValue = request.into();
    wasm_bindgen_futures::future_to_promise(async move { evaluation_js(&mut evaluate_request(&request).await?) })
        .unchecked_into()
}

/// [`evaluate`] returning the result as JSON text, exactly as `faithful measure --json` prints it.
#[wasm_bindgen(js_name = evaluateJson)]
pub async fn evaluate_json(request: EvaluateRequest) -> Result<String, JsValue> {
    let result = evaluate_request(&request.into()).await?;
    serde_json::to_string(&result).map_err(fail)
}

fn matrix_js(p: &Points) -> Result<JsValue, JsValue> {
    let o = Object::new();
    Reflect::set(&o, &"name".into(), &p.name().into())?;
    Reflect::set(&o, &"rows".into(), &(p.n() as f64).into())?;
    Reflect::set(&o, &"cols".into(), &(p.dim() as f64).into())?;
    Reflect::set(&o, &"data".into(), &Float64Array::from(p.as_slice()).into())?;
    Ok(o.into())
}

/// The bundled example (digits, its PCA and random projections, labels, default specs) in
/// the shape `evaluate` takes: the same data `faithful measure` evaluates with no files.
#[wasm_bindgen(js_name = exampleData)]
pub fn example_data() -> Result<ExampleData, JsValue> {
    let ex = example::digits();
    let o = Object::new();
    Reflect::set(&o, &"high".into(), &matrix_js(&ex.high)?)?;
    let lows = Array::new();
    for p in &ex.projections {
        lows.push(&matrix_js(p)?);
    }
    Reflect::set(&o, &"lows".into(), &lows)?;
    let labels: Vec<i32> = ex.labels.raw().iter().map(|&v| v as i32).collect();
    Reflect::set(&o, &"labels".into(), &Int32Array::from(labels.as_slice()).into())?;
    let specs = Array::new();
    for s in default_specs(true) {
        specs.push(&s.to_string().into());
    }
    Reflect::set(&o, &"specs".into(), &specs)?;
    Ok(JsValue::from(o).unchecked_into())
}

/// Every measure as `faithful measures --json` lists it: id, ZADU id, parameters (name, kind,
/// default, whether required, choices), keys, local outputs with their kinds, whether labels
/// are needed, and a one-line description.
#[wasm_bindgen]
pub fn measures() -> MeasureList {
    js_sys::JSON::parse(&measures_json()).expect("serde_json writes valid JSON").unchecked_into()
}

/// [`measures`] as JSON text, exactly as `faithful measures --json` prints it.
#[wasm_bindgen(js_name = measuresJson)]
pub fn measures_json() -> String {
    crate::catalog::measures_json()
}

/// The worker pool's plan (npm/pool.js): at most `workers` spans of `n` rows, each an array of
/// consecutive blocks `[start, end]` of the shard plan (`faithful::shard::spans`).
#[wasm_bindgen(js_name = shardSpans, unchecked_return_type = "[number, number][][]")]
pub fn shard_spans(n: usize, workers: usize) -> JsValue {
    let spans = Array::new();
    for span in crate::shard::spans(n, workers) {
        let blocks = Array::new();
        for b in span {
            blocks.push(&Array::of2(&(b.start as f64).into(), &(b.end as f64).into()));
        }
        spans.push(&blocks);
    }
    spans.into()
}

/// The measures a worker pool maps over row blocks and folds (`faithful::shard::SHARDABLE`);
/// the pool runs the others on one worker.
#[wasm_bindgen(js_name = shardableMeasures)]
pub fn shardable_measures() -> Vec<String> {
    crate::shard::SHARDABLE.iter().map(|s| s.to_string()).collect()
}

/// Folds the partials of every block of one run (each a Uint8Array from `Session.mapBlocks`,
/// or the JSON text of a `faithful shard` partial) into its result, the same bits as one
/// `Session.measure` (`faithful::fold`); per-point values only when `local`.
#[wasm_bindgen(js_name = foldPartials)]
pub fn fold_partials(
    #[wasm_bindgen(unchecked_param_type = "(Uint8Array | string)[]")] partials: Vec<JsValue>,
    local: bool,
) -> Result<EvaluationValue, JsValue> {
    let parts = partials
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let what = format!("partial {i}");
            if let Some(text) = p.as_string() {
                crate::Partial::from_json(&text, &what)
            } else if let Some(bytes) = p.dyn_ref::<js_sys::Uint8Array>() {
                crate::Partial::from_bytes(&bytes.to_vec(), &what)
            } else {
                Err(crate::Error::BadPartial { what, reason: "expected a Uint8Array or a JSON text".into() })
            }
        })
        .collect::<crate::Result<Vec<_>>>()
        .map_err(fail)?;
    let mut result = crate::fold(&parts).map_err(fail)?;
    if !local {
        for p in &mut result.projections {
            for s in &mut p.scores {
                s.local = None;
            }
        }
    }
    Ok(evaluation_js(&mut result)?.unchecked_into())
}
