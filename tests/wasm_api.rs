//! wasm-bindgen tests of the browser API, run in headless Chromium (WebGPU on SwiftShader) by
//! `scripts/test_wasm.sh`: the bundled example evaluates on WebGPU and on the wasm CPU
//! reference with identical results, and bad requests are clear errors.
#![cfg(target_arch = "wasm32")]

use faithful::wasm::{evaluate, example_data, measures, version};
use js_sys::{Array, Float64Array, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn with_backend(req: &JsValue, backend: &str) -> JsValue {
    let r = Object::assign(&Object::new(), &Object::from(req.clone()));
    Reflect::set(&r, &"backend".into(), &backend.into()).unwrap();
    Reflect::set(&r, &"local".into(), &true.into()).unwrap();
    r.into()
}

async fn run(req: &JsValue, backend: &str) -> Value {
    let json = evaluate(with_backend(req, backend)).await.unwrap_or_else(|e| panic!("{backend}: {e:?}"));
    serde_json::from_str(&json).unwrap()
}

#[wasm_bindgen_test]
async fn example_on_webgpu_equals_wasm_cpu() {
    let req = example_data().unwrap();
    let cpu = run(&req, "cpu").await;
    let gpu = run(&req, "webgpu").await;
    assert_eq!(cpu["run"]["backend"], "cpu");
    assert_eq!(gpu["run"]["backend"], "gpu", "WebGPU must serve: {}", gpu["run"]);
    assert_eq!(gpu["projections"].to_string(), cpu["projections"].to_string());
    let names: Vec<&str> = cpu["projections"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pca", "random_projection"]);
    assert_eq!(cpu["projections"][0]["scores"][0]["local"]["local_trustworthiness"].as_array().unwrap().len(), 1797);
}

#[wasm_bindgen_test]
async fn bad_requests_are_clear_errors() {
    let m = Object::new();
    Reflect::set(&m, &"rows".into(), &3.0.into()).unwrap();
    Reflect::set(&m, &"cols".into(), &2.0.into()).unwrap();
    Reflect::set(&m, &"data".into(), &Float64Array::from(&[0.0, 1.0, f64::NAN, 2.0, 3.0, 4.0][..]).into()).unwrap();
    let req = Object::new();
    Reflect::set(&req, &"high".into(), &m).unwrap();
    let lows = Array::new();
    lows.push(&m);
    Reflect::set(&req, &"lows".into(), &lows).unwrap();
    Reflect::set(&req, &"backend".into(), &"cpu".into()).unwrap();
    let err = evaluate(req.into()).await.unwrap_err();
    let msg = js_sys::Error::from(err).message().as_string().unwrap();
    assert!(msg.contains("non-finite"), "{msg}");
}

#[wasm_bindgen_test]
fn registry_and_version_are_exposed() {
    let list: Value = serde_json::from_str(&measures()).unwrap();
    assert!(list.as_array().unwrap().iter().any(|m| m["id"] == "tnc"));
    assert_eq!(version(), env!("CARGO_PKG_VERSION"));
}
