//! The browser API (wasm-bindgen): evaluate specs on typed arrays and get the CLI's JSON.
//!
//! ```js
//! import init, { evaluate, exampleData, measures, version } from "./pkg/faithful.js";
//! await init();
//! const json = await evaluate({ high: {data, rows, cols}, lows: [{name, data, rows, cols}],
//!                               labels, specs: ["tnc:k=20"], local: true, backend: "webgpu" });
//! ```
//! `backend`: "webgpu" (default; falls back to the wasm CPU reference, and says why, when the
//! browser has no WebGPU), "cpu", or "auto". `numerics`: "exact" (default) or "fast".

use std::sync::Arc;

use js_sys::{Array, Float32Array, Float64Array, Int32Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::evaluate::default_specs;
use crate::gpu::{Gpu, GpuRequest};
use crate::measures::{ParamKind, REGISTRY};
use crate::{BackendChoice, Evaluator, Labels, Numerics, Options, Points, Spec, example};

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

fn fail(msg: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&msg.to_string()).into()
}

fn get(obj: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(obj, &JsValue::from_str(key))
}

fn numbers(v: &JsValue, what: &str) -> Result<Vec<f64>, JsValue> {
    if let Some(a) = v.dyn_ref::<Float64Array>() {
        Ok(a.to_vec())
    } else if let Some(a) = v.dyn_ref::<Float32Array>() {
        Ok(a.to_vec().into_iter().map(f64::from).collect())
    } else if let Some(a) = v.dyn_ref::<Int32Array>() {
        Ok(a.to_vec().into_iter().map(f64::from).collect())
    } else if Array::is_array(v) {
        Array::from(v).iter().map(|x| x.as_f64().ok_or_else(|| fail(format!("{what}: not a number")))).collect()
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

/// Evaluates a request (see the module docs) and returns the result JSON, in the CLI's schema.
#[wasm_bindgen]
pub async fn evaluate(request: JsValue) -> Result<String, JsValue> {
    let high = matrix(&get(&request, "high")?, "high")?;
    let lows_js = get(&request, "lows")?;
    if !Array::is_array(&lows_js) {
        return Err(fail("lows: expected an array of matrices"));
    }
    let lows = Array::from(&lows_js)
        .iter()
        .enumerate()
        .map(|(p, l)| matrix(&l, &format!("projection {p}")))
        .collect::<Result<Vec<Points>, _>>()?;
    let labels_js = get(&request, "labels")?;
    let labels = if labels_js.is_null() || labels_js.is_undefined() {
        None
    } else {
        let raw = numbers(&labels_js, "labels")?;
        // Integers a JavaScript number holds exactly; beyond, distinct labels would merge.
        if let Some((i, v)) =
            raw.iter().enumerate().find(|(_, v)| !v.is_finite() || v.fract() != 0.0 || v.abs() > MAX_SAFE_INTEGER)
        {
            return Err(fail(format!(
                "labels: entry {i} ({v}) is not an integer within ±{MAX_SAFE_INTEGER} (Number.MAX_SAFE_INTEGER)"
            )));
        }
        Some(Labels::new(raw.into_iter().map(|v| v as i64).collect()))
    };
    let specs_js = get(&request, "specs")?;
    let specs: Vec<Spec> = if Array::is_array(&specs_js) && Array::from(&specs_js).length() > 0 {
        Array::from(&specs_js)
            .iter()
            .map(|s| s.as_string().unwrap_or_default().parse::<Spec>().map_err(fail))
            .collect::<Result<_, _>>()?
    } else {
        default_specs(labels.is_some())
    };
    let local = get(&request, "local")?.as_bool().unwrap_or(false);
    let backend = get(&request, "backend")?.as_string().unwrap_or_else(|| "webgpu".into());
    let numerics = match get(&request, "numerics")?.as_string().as_deref() {
        Some("fast") => Numerics::Fast,
        _ => Numerics::Exact,
    };
    let mut opts = Options { local, numerics, backend: BackendChoice::Cpu, ..Options::default() };
    let mut fallback = None;
    let mut gpu = None;
    if backend != "cpu" {
        match Gpu::new_async(&GpuRequest::default()).await {
            Ok(g) => {
                opts.backend = BackendChoice::Gpu;
                gpu = Some(Arc::new(g));
            }
            Err(e) => fallback = Some(format!("WebGPU unavailable ({e}); the wasm CPU reference served")),
        }
    }
    let eval = match gpu {
        Some(g) => Evaluator::with_gpu(high, opts, g),
        None => Evaluator::new(high, opts),
    };
    let refs: Vec<&Points> = lows.iter().collect();
    let mut result = eval.measure_many_async(&refs, labels.as_ref(), &specs).await.map_err(fail)?;
    result.run.backend_requested = backend;
    if fallback.is_some() {
        result.run.fallback_reason = fallback;
    }
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
pub fn example_data() -> Result<JsValue, JsValue> {
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
    Ok(o.into())
}

/// Every measure: id, ZADU id, parameters (name, kind, default, choices), keys, local keys,
/// whether labels are needed, and a one-line description — as JSON.
#[wasm_bindgen]
pub fn measures() -> String {
    let list: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|d| {
            let params: Vec<serde_json::Value> = d
                .params
                .iter()
                .map(|p| {
                    let (kind, choices): (&str, &[&str]) = match p.kind {
                        ParamKind::Int | ParamKind::Count | ParamKind::Seed(_) => ("int", &[]),
                        ParamKind::Float | ParamKind::PositiveFloat => ("float", &[]),
                        ParamKind::Choice(c) => ("choice", c),
                    };
                    serde_json::json!({"name": p.name, "kind": kind, "default": p.default, "choices": choices})
                })
                .collect();
            serde_json::json!({"id": d.id, "zadu_id": d.zadu_id, "params": params, "keys": d.keys, "local_keys": d.local_keys, "labels": d.min_classes > 0, "about": d.about})
        })
        .collect();
    serde_json::to_string(&list).expect("serialisable")
}
