//! wasm-bindgen tests of the browser API, run in headless Chromium (WebGPU on SwiftShader) by
//! `scripts/test_wasm.sh`: the bundled example evaluates on WebGPU and on the wasm CPU
//! reference with identical results, and bad requests are clear errors.
#![cfg(target_arch = "wasm32")]

use faithful::wasm::{Session, evaluate_json, example_data, measures_json, version};
use js_sys::{Array, Float64Array, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The JSON-text form of `evaluate`, which the comparisons below read with serde_json.
async fn evaluate(req: JsValue) -> Result<String, JsValue> {
    evaluate_json(req.unchecked_into()).await
}

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
    let list: Value = serde_json::from_str(&measures_json()).unwrap();
    assert!(list.as_array().unwrap().iter().any(|m| m["id"] == "tnc"));
    // snc's clustering strategy lists its named choices and accepts '<k>-means' besides.
    let snc = list.as_array().unwrap().iter().find(|m| m["id"] == "snc").expect("snc listed");
    let strategy = snc["params"].as_array().unwrap().iter().find(|p| p["name"] == "clustering_strategy").unwrap();
    assert_eq!((strategy["kind"].as_str(), strategy["open"].as_bool()), (Some("choice"), Some(true)));
    assert!(strategy["choices"].as_array().unwrap().iter().any(|c| c == "kmeans"));
    let closed =
        list.as_array().unwrap().iter().flat_map(|m| m["params"].as_array().unwrap()).filter(|p| p["open"] == false);
    assert!(closed.count() > 0);
    assert_eq!(version(), env!("CARGO_PKG_VERSION"));
    // Every local output says what it means; Sammon's parts sum to its value.
    let sammon = list.as_array().unwrap().iter().find(|m| m["id"] == "sammon").expect("sammon listed");
    assert_eq!(sammon["local"][0]["key"], "local_sammon_stress");
    assert_eq!(sammon["local"][0]["kind"], "sum");
    let cca = list.as_array().unwrap().iter().find(|m| m["id"] == "cca_stress").expect("cca_stress listed");
    assert_eq!(cca["params"][0]["required"], true);
}

/// A request for `high` and one projection `low` ({rows, cols, data} each), on the wasm CPU.
fn request(high: &JsValue, low: &JsValue, specs: &[&str]) -> Object {
    let req = Object::new();
    Reflect::set(&req, &"high".into(), high).unwrap();
    let lows = Array::new();
    lows.push(low);
    Reflect::set(&req, &"lows".into(), &lows).unwrap();
    Reflect::set(&req, &"backend".into(), &"cpu".into()).unwrap();
    let list = Array::new();
    for s in specs {
        list.push(&(*s).into());
    }
    Reflect::set(&req, &"specs".into(), &list).unwrap();
    req
}

fn matrix(rows: f64, cols: f64, data: &[f64]) -> JsValue {
    let m = Object::new();
    Reflect::set(&m, &"rows".into(), &rows.into()).unwrap();
    Reflect::set(&m, &"cols".into(), &cols.into()).unwrap();
    Reflect::set(&m, &"data".into(), &Float64Array::from(data).into()).unwrap();
    m.into()
}

async fn error_of(req: Object) -> String {
    let err = evaluate(req.into()).await.unwrap_err();
    js_sys::Error::from(err).message().as_string().unwrap()
}

/// n points on a line with a little wiggle (no ties), one column.
fn line(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 + ((i * 7919) % 13) as f64 * 1e-3).collect()
}

#[wasm_bindgen_test]
async fn hostile_shapes_and_labels_are_clear_errors() {
    let ok = matrix(4.0, 1.0, &line(4));
    // rows × cols overflows the address space: refused before the data is read.
    let msg = error_of(request(&matrix(65536.0 * 65536.0 / 2.0, 4.0, &[0.0]), &ok, &["stress"])).await;
    assert!(msg.contains("too large") || msg.contains("whole number"), "{msg}");
    let msg = error_of(request(&matrix(1e300, 1.0, &[0.0]), &ok, &["stress"])).await;
    assert!(msg.contains("rows must be a whole number"), "{msg}");
    let msg = error_of(request(&matrix(65536.0, 65536.0, &[0.0]), &ok, &["stress"])).await;
    assert!(msg.contains("too large for this browser's memory"), "{msg}");
    let msg = error_of(request(&matrix(2.5, 1.0, &[0.0]), &ok, &["stress"])).await;
    assert!(msg.contains("rows must be a whole number"), "{msg}");
    // Labels beyond ±2^53 would merge into one class; fractions are not labels.
    for bad in [1e19, -1e19, 9_007_199_254_740_992.0, 1.5] {
        let req = request(&ok, &ok, &["nh:k=1"]);
        Reflect::set(&req, &"labels".into(), &Float64Array::from(&[0.0, 1.0, bad, 0.0][..]).into()).unwrap();
        let msg = error_of(req).await;
        assert!(msg.contains("labels: entry 2") && msg.contains("not an integer within"), "{bad}: {msg}");
    }
    let req = request(&ok, &ok, &["nh:k=1"]);
    Reflect::set(
        &req,
        &"labels".into(),
        &Float64Array::from(&[0.0, 9_007_199_254_740_991.0, 0.0, -9_007_199_254_740_991.0][..]).into(),
    )
    .unwrap();
    evaluate(req.into()).await.unwrap();
    // 2^29 labels (2 GiB of Int32Array, untouched pages): their f64 copy alone would fill a
    // wasm32 memory, so it is refused with a message, not an abort that kills the module.
    let req = request(&ok, &ok, &["nh:k=1"]);
    Reflect::set(&req, &"labels".into(), &js_sys::Int32Array::new_with_length(1 << 29).into()).unwrap();
    let msg = error_of(req).await;
    assert!(msg.contains("labels: cannot hold") && msg.contains("browser's memory"), "{msg}");
    // The module still serves the next request.
    evaluate(request(&ok, &ok, &["stress"]).into()).await.unwrap();
}

/// A typed array that views the module's own memory: copying it grows that memory, which
/// detaches the buffer it views (its length reads 0 after). A clear error, never a panic, and
/// the module serves the next request.
#[wasm_bindgen_test]
async fn an_array_viewing_memory_that_grows_away_is_a_clear_error() {
    let ok = matrix(4.0, 1.0, &line(4));
    for wide in [true, false] {
        let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
        let buffer = memory.buffer();
        let bytes = buffer.unchecked_ref::<js_sys::ArrayBuffer>().byte_length();
        // bytes / 8 values: their f64 copy takes as many bytes as the whole memory holds, so
        // reserving it grows the memory (to about twice: far below wasm32's 4 GiB).
        let len = bytes / 8;
        let data: JsValue = if wide {
            Float64Array::new_with_byte_offset_and_length(&buffer, 0, len).into()
        } else {
            js_sys::Float32Array::new_with_byte_offset_and_length(&buffer, 0, len).into()
        };
        let high = Object::new();
        Reflect::set(&high, &"rows".into(), &f64::from(len).into()).unwrap();
        Reflect::set(&high, &"cols".into(), &1.0.into()).unwrap();
        Reflect::set(&high, &"data".into(), &data).unwrap();
        let msg = error_of(request(&high.into(), &ok, &["stress"])).await;
        assert!(msg.contains("changed while it was copied") && msg.contains("pass a copy"), "{msg}");
    }
    evaluate(request(&ok, &ok, &["stress"]).into()).await.unwrap();
}

#[wasm_bindgen_test]
async fn the_browser_plans_its_memory_instead_of_trapping() {
    // 9000 points: the pair order needs 32 · 40 495 500 bytes (> 1 GiB) and a browser has no
    // file system for the external sort: a clear error before any work, not a trap.
    let n = 9000;
    let m = matrix(n as f64, 1.0, &line(n));
    for spec in ["srho", "nm_stress"] {
        let msg = error_of(request(&m, &m, &[spec])).await;
        assert!(msg.contains("browser's limit") && msg.contains("no file system"), "{spec}: {msg}");
    }
    // Parameters that size memory are planned against the same limit.
    let small = matrix(40.0, 1.0, &line(40));
    let req = request(&small, &small, &["cadi:n_triplets=1000000000"]);
    Reflect::set(
        &req,
        &"labels".into(),
        &Float64Array::from(&(0..40).map(|i| (i % 2) as f64).collect::<Vec<_>>()[..]).into(),
    )
    .unwrap();
    let msg = error_of(req).await;
    assert!(msg.contains("n_triplets=1000000000") && msg.contains("memory budget"), "{msg}");
    // And a size that fits still runs in memory.
    let m = matrix(2000.0, 1.0, &line(2000));
    let json = evaluate(request(&m, &m, &["srho"]).into()).await.unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["run"]["plan"]["pairwise"]["order"]["path"], "in_memory");
}

fn field(v: &JsValue, path: &[&str]) -> JsValue {
    path.iter().fold(v.clone(), |o, k| Reflect::get(&o, &(*k).into()).unwrap())
}

#[wasm_bindgen_test]
async fn a_session_measures_two_projections_like_evaluate_and_survives_an_abort() {
    let ex: JsValue = example_data().unwrap().into();
    let once = js_sys::JSON::parse(&evaluate(with_backend(&ex, "cpu")).await.unwrap()).unwrap();
    let opts = Object::new();
    Reflect::set(&opts, &"high".into(), &field(&ex, &["high"])).unwrap();
    Reflect::set(&opts, &"labels".into(), &field(&ex, &["labels"])).unwrap();
    Reflect::set(&opts, &"backend".into(), &"cpu".into()).unwrap();
    let s = Session::create(opts.unchecked_into()).await.unwrap();
    assert_eq!((s.rows(), s.backend()), (1797, "cpu".to_string()));
    let lows = Array::from(&field(&ex, &["lows"]));
    let measure = |p: u32, signal: Option<JsValue>| {
        let req = Object::new();
        Reflect::set(&req, &"low".into(), &lows.get(p)).unwrap();
        Reflect::set(&req, &"local".into(), &true.into()).unwrap();
        if let Some(sig) = signal {
            Reflect::set(&req, &"signal".into(), &sig).unwrap();
        }
        wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(JsValue::from(s.measure(req.unchecked_into()))))
    };
    // An already aborted signal: an AbortError, and the session goes on.
    let ctl = web_abort_controller();
    field(&ctl, &["abort"]).unchecked_into::<js_sys::Function>().call0(&ctl).unwrap();
    let err = measure(1, Some(field(&ctl, &["signal"]))).await.unwrap_err();
    assert_eq!(field(&err, &["name"]).as_string().as_deref(), Some("AbortError"));
    // The third call scores the first projection again, from the rank table the second built.
    for (step, p) in [0, 1, 0].into_iter().enumerate() {
        let r = measure(p, None).await.unwrap();
        let tnc = field(&r, &["projections", "0", "scores", "0"]);
        // The JSON text read by JSON.parse (exact; serde_json's default float parser is not).
        let want = field(&once, &["projections", &p.to_string(), "scores", "0"]);
        let t = field(&tnc, &["values", "trustworthiness"]).as_f64().unwrap();
        assert_eq!(t.to_bits(), field(&want, &["values", "trustworthiness"]).as_f64().unwrap().to_bits());
        let local = field(&tnc, &["local", "local_trustworthiness"]).dyn_into::<Float64Array>().unwrap().to_vec();
        let want_local = Float64Array::new(&field(&want, &["local", "local_trustworthiness"])).to_vec();
        assert_eq!(local.len(), 1797);
        assert!(
            local.iter().zip(&want_local).all(|(a, b)| a.to_bits() == b.to_bits()),
            "projection {p}: local values differ"
        );
        // The original space's kNN is built once and kept; its rank table from the second call.
        assert_eq!(field(&r, &["run", "plan", "knn_high_reused"]).as_bool(), Some(step > 0));
        let ranks = field(&r, &["run", "plan", "high_ranks"]);
        let source = field(&ranks, &["source"]).as_string();
        assert_eq!(source.as_deref(), Some(if step == 0 { "recomputed" } else { "resident_table" }));
        assert_eq!(field(&ranks, &["built_now"]).as_bool(), Some(step == 1));
    }
}

fn web_abort_controller() -> JsValue {
    let ctor: js_sys::Function = field(&js_sys::global(), &["AbortController"]).unchecked_into();
    Reflect::construct(&ctor, &Array::new()).unwrap().into()
}

/// The projection's spatial index in wasm: whole row passes with the index equal full rows on
/// tie-heavy 1-, 2- and 3-D projections, and the tree's kNN and rank counts equal the reference
/// row by row at n = 10⁵ (sampled rows), as in the native tests/low_index.rs.
#[wasm_bindgen_test]
fn the_spatial_index_is_the_reference_in_wasm() {
    use faithful::Points;
    use faithful::reference::{KdTree, RankScratch, TreeScratch, count_ranks, distance_row, select_knn};
    use faithful::resources::{LowIndex, Needs, Resident, row_pass_resident};
    let pts = |n: usize, d: usize, f: &dyn Fn(usize, usize) -> f64| {
        Points::from_vec("p", n, d, (0..n * d).map(|t| f(t / d, t % d)).collect()).unwrap()
    };
    let n = 400;
    let high = pts(n, 5, &|i, c| ((i * (c + 2) + i / 5) % 4) as f64);
    for d in 1..=3 {
        let lows = [
            pts(n, d, &|i, c| ((i * (c + 1)) % 5) as f64),
            pts(n, d, &|i, c| ((i * (c + 1)) % 5) as f64 + 1e-9 * ((i * 7919 % 13) as f64 - 6.0)),
            pts(n, d, &|i, c| ((i % 11) * (c + 1)) as f64 * 0.5),
            pts(n, d, &|_, _| 3.0),
        ];
        for low in &lows {
            for k in [1, 9, 50] {
                let run = |li| {
                    row_pass_resident(&high, Resident::default(), &[low], Needs::cross_with_dists(k), 16, li, 0..n)
                };
                let (rows, index) = (run(LowIndex::Never), run(LowIndex::Auto));
                assert_eq!(rows.lows[0].knn, index.lows[0].knn, "d={d} k={k}");
                assert_eq!(rows.lows[0].cross, index.lows[0].cross, "d={d} k={k}");
                assert_eq!(index.low_index[0].path, "kd_tree");
            }
        }
    }
    let n = 100_000;
    let low = pts(n, 2, &|i, c| ((i * (2 * c + 3) + i / 13) % 97) as f64 + if i % 3 == 0 { 1e-9 } else { 0.0 });
    let tree = KdTree::build(&low).unwrap();
    let (mut s, mut row, mut keys) = (TreeScratch::default(), vec![0.0; n], Vec::new());
    let k = 25;
    for i in (0..n).step_by(9973) {
        distance_row(&low, i, &mut row);
        let (mut wi, mut wd, mut gi, mut gd) = (vec![0; k], vec![0.0; k], vec![0; k], vec![0.0; k]);
        select_knn(&row, i, k, &mut keys, &mut wi, &mut wd);
        tree.knn(&low, i, k, &mut s, &mut gi, &mut gd);
        assert_eq!(gi, wi, "row {i}");
        assert!(gd.iter().zip(&wd).all(|(a, b)| a.to_bits() == b.to_bits()), "row {i}");
        let queries: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).step_by(2501).collect();
        let (mut want, mut got) = (vec![0; queries.len()], vec![0; queries.len()]);
        count_ranks(&row, i, &queries, &mut want, &mut RankScratch::default());
        assert!(tree.count_ranks(&low, i, &queries, &mut got, &mut s, usize::MAX));
        assert_eq!(got, want, "row {i}");
    }
}

/// The co-ranking pass ranks an integer lattice by exact integer keys (in wasm, the
/// `i32x4.dot_i16x8_s` kernel): every count, row summary, list and cross rank equals the same
/// space given as its distance matrix, which the f64 path ranks.
#[wasm_bindgen_test]
fn integer_lattices_rank_like_their_distances_in_wasm() {
    use faithful::resources::{ListKs, coranking_pass_fused};
    use faithful::{Control, DistanceMatrix, Points};
    let pts = |n: usize, d: usize, f: &dyn Fn(usize, usize) -> f64| {
        Points::from_vec("p", n, d, (0..n * d).map(|t| f(t / d, t % d)).collect()).unwrap()
    };
    for (n, dim) in [(203, 50), (64, 3), (9, 1)] {
        let high = pts(n, dim, &|i, c| ((i * 31 + c * 7 + i / 3) % 8) as f64);
        let low = pts(n, 2, &|i, c| ((i * (2 * c + 3)) % 11) as f64);
        let mut dist = vec![0.0; n * n];
        for (i, row) in dist.chunks_mut(n).enumerate() {
            faithful::reference::distance_row(&high, i, row);
        }
        let matrix = Points::from_distances("d", DistanceMatrix::from_vec("d", n, dist).unwrap());
        let lists = ListKs { kh: 5, kl: 5, kc: 5 };
        let summary = |c: &[u32]| c.iter().enumerate().map(|(k, &v)| f64::from(v) / (k + 1) as f64).sum::<f64>();
        let run =
            |h: &Points| coranking_pass_fused(h, &low, n - 2, lists, 16, &Control::default(), &summary, 0..n).unwrap();
        let ((a, fa), (b, fb)) = (run(&high), run(&matrix));
        assert_eq!(a, b, "n {n}");
        assert_eq!(fa, fb, "n {n}");
    }
}

/// The certified f32 rows in wasm (their SIMD tiles, scan and rank counter): on duplicates and
/// near-ties at f32 resolution, Euclidean and cosine (nearly parallel rows), every kNN list,
/// cross rank and distance equals the same space given as its distance matrix, which the exact
/// f64 rows rank.
#[wasm_bindgen_test]
fn certified_rows_rank_like_their_distances_in_wasm() {
    use faithful::resources::{Needs, row_pass};
    use faithful::{DistanceMatrix, Metric, Points};
    for (n, dim, k, metric) in
        [(301usize, 12usize, 9usize, Metric::Euclidean), (67, 9, 20, Metric::Euclidean), (203, 40, 9, Metric::Cosine)]
    {
        // 37 distinct rows repeated (duplicates, tied distances), every fifth row moved by a few
        // units of f32's resolution at 1000 (near-ties the f32 bound cannot decide).
        let v: Vec<f64> = (0..n * dim)
            .map(|t| {
                let (i, c) = (t / dim, t % dim);
                let jitter = if i % 5 == 0 { (i % 7) as f64 * 2f64.powi(-14) } else { 0.0 };
                1000.0 + (((i % 37) * 7 + c * 3) % 11) as f64 + jitter
            })
            .collect();
        let high = Points::from_vec("x", n, dim, v).unwrap().with_metric(metric).unwrap();
        let low = Points::from_vec("y", n, 2, (0..2 * n).map(|t| ((t * 13) % 17) as f64).collect()).unwrap();
        let mut dist = vec![0.0; n * n];
        for (i, row) in dist.chunks_mut(n).enumerate() {
            faithful::reference::distance_row(&high, i, row);
            // A cosine self-distance can round above 0; self is never a neighbour.
            row[i] = 0.0;
        }
        let matrix = Points::from_distances("d", DistanceMatrix::from_vec("d", n, dist).unwrap());
        let a = row_pass(&high, None, &[&low], Needs::cross_with_dists(k), 16);
        let b = row_pass(&matrix, None, &[&low], Needs::cross_with_dists(k), 16);
        assert_eq!(a.stats.rows_certified, n as u64, "{metric} n {n}: the certified rows served");
        assert!(a.stats.pairs_refined > 0, "{metric} n {n}: some comparisons were left to f64");
        assert_eq!(a.high, b.high, "{metric} n {n}: original kNN");
        assert_eq!(a.lows[0].knn, b.lows[0].knn, "{metric} n {n}: projection kNN");
        assert_eq!(a.lows[0].cross, b.lows[0].cross, "{metric} n {n}: cross ranks");
    }
}

/// The worker pool's two halves in one instance: a session's `mapBlocks` over the spans of
/// any pool size, folded by `foldPartials`, equals its `measure`, twice (the second from the
/// spans' resident rows).
#[wasm_bindgen_test]
async fn map_blocks_over_pool_spans_folds_to_measure() {
    use faithful::wasm::{fold_partials, shard_spans};
    let ex: JsValue = example_data().unwrap().into();
    let opts = Object::new();
    Reflect::set(&opts, &"high".into(), &field(&ex, &["high"])).unwrap();
    Reflect::set(&opts, &"labels".into(), &field(&ex, &["labels"])).unwrap();
    Reflect::set(&opts, &"backend".into(), &"cpu".into()).unwrap();
    let specs = Array::new();
    for s in ["tnc:k=7", "mrre:k=7", "lcmc:k=7", "nh:k=7", "coranking:k_max=30"] {
        specs.push(&s.into());
    }
    let lows = Array::from(&field(&ex, &["lows"]));
    let await_js = |p: JsValue| wasm_bindgen_futures::JsFuture::from(js_sys::Promise::from(p));
    let whole = Session::create(opts.clone().unchecked_into()).await.unwrap();
    for workers in [2, 3, 7] {
        let sessions: Vec<Session> = {
            let mut v = Vec::new();
            for _ in 0..workers {
                v.push(Session::create(opts.clone().unchecked_into()).await.unwrap());
            }
            v
        };
        for p in [0u32, 1] {
            let req = Object::new();
            Reflect::set(&req, &"low".into(), &lows.get(p)).unwrap();
            Reflect::set(&req, &"specs".into(), &specs).unwrap();
            Reflect::set(&req, &"local".into(), &true.into()).unwrap();
            let want = await_js(whole.measure(req.clone().unchecked_into()).into()).await.unwrap();
            let spans = Array::from(&shard_spans(1797, workers));
            assert_eq!(spans.length() as usize, workers);
            let mut parts = Vec::new();
            for (t, s) in sessions.iter().enumerate() {
                Reflect::set(&req, &"blocks".into(), &spans.get(t as u32)).unwrap();
                let got = await_js(s.map_blocks(req.clone().unchecked_into()).into()).await.unwrap();
                parts.extend(Array::from(&got).iter());
            }
            // The same partials as JSON texts (`faithful shard`'s form) fold to the same bits.
            let texts: Vec<JsValue> = parts
                .iter()
                .map(|b| {
                    let bytes = b.dyn_ref::<js_sys::Uint8Array>().expect("mapBlocks gives Uint8Arrays").to_vec();
                    faithful::Partial::from_bytes(&bytes, "part").unwrap().to_json().into()
                })
                .collect();
            let folded: JsValue = fold_partials(parts, true).unwrap().into();
            let folded_texts: JsValue = fold_partials(texts, true).unwrap().into();
            let text = |v: &JsValue| {
                let scores = field(v, &["projections", "0", "scores"]);
                js_sys::JSON::stringify(&scores).unwrap().as_string().unwrap()
            };
            // Float64Array locals stringify as objects of their values: every bit compared.
            assert_eq!(text(&folded), text(&want), "{workers} workers, projection {p}");
            assert_eq!(text(&folded_texts), text(&want), "{workers} workers, projection {p}, JSON partials");
        }
    }
}

/// `{ data, rows, cols }` as the browser API takes it.
fn matrix_js(data: &[f64], rows: usize, cols: usize) -> JsValue {
    let m = Object::new();
    Reflect::set(&m, &"data".into(), &Float64Array::from(data).into()).unwrap();
    Reflect::set(&m, &"rows".into(), &(rows as f64).into()).unwrap();
    Reflect::set(&m, &"cols".into(), &(cols as f64).into()).unwrap();
    m.into()
}

/// Cityblock and chebyshev (the distance kernels' linear form) and sqeuclidean are served by
/// WebGPU with the CPU's scores bit for bit, on tie-heavy data (values on a grid of 0.1: many
/// exact L1 and L∞ ties, ordered by index); minkowski p = 3 is the CPU's, and the report says
/// why.
#[wasm_bindgen_test]
async fn a_session_serves_cityblock_and_chebyshev_on_webgpu() {
    let (n, d) = (100usize, 5usize);
    let data: Vec<f64> = (0..n * d).map(|t| ((t * 7919) % 31) as f64 / 10.0 + 0.5).collect();
    let low: Vec<f64> = (0..n * 2).map(|t| ((t * 104_729) % 97) as f64).collect();
    for metric in ["cityblock", "chebyshev", "sqeuclidean", "minkowski:p=3"] {
        let mut results = Vec::new();
        for backend in ["cpu", "webgpu"] {
            let opts = Object::new();
            Reflect::set(&opts, &"high".into(), &matrix_js(&data, n, d)).unwrap();
            Reflect::set(&opts, &"backend".into(), &backend.into()).unwrap();
            Reflect::set(&opts, &"metric".into(), &metric.into()).unwrap();
            let s = Session::create(opts.unchecked_into()).await.unwrap();
            let req = Object::new();
            Reflect::set(&req, &"low".into(), &matrix_js(&low, n, 2)).unwrap();
            let specs = Array::new();
            specs.push(&"tnc:k=5".into());
            specs.push(&"mrre:k=7".into());
            Reflect::set(&req, &"specs".into(), &specs).unwrap();
            let p = js_sys::Promise::from(JsValue::from(s.measure(req.unchecked_into())));
            let r = wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
            if backend == "webgpu" {
                let served = field(&r, &["run", "backend"]).as_string();
                let why = field(&r, &["run", "fallback_reason"]).as_string().unwrap_or_default();
                if metric.starts_with("minkowski") {
                    assert_eq!(served.as_deref(), Some("cpu"), "{metric}");
                    assert!(why.contains("has no certified GPU kernel"), "{metric}: {why}");
                } else {
                    assert_eq!(served.as_deref(), Some("gpu"), "WebGPU serves {metric}: {why}");
                }
            }
            let t = field(&r, &["projections", "0", "scores", "0", "values", "trustworthiness"]).as_f64().unwrap();
            let m = field(&r, &["projections", "0", "scores", "1", "values", "mrre_false"]).as_f64().unwrap();
            results.push((t.to_bits(), m.to_bits()));
        }
        assert_eq!(results[0], results[1], "{metric}");
    }
}

/// `Session.create` takes the original space under a metric (served by WebGPU for cosine) or
/// as its distance matrix, with the same scores; a bad metric is a clear error.
#[wasm_bindgen_test]
async fn a_session_takes_a_metric_or_a_distance_matrix() {
    use faithful::{Metric, Points};
    let (n, d) = (120usize, 6usize);
    let data: Vec<f64> = (0..n * d).map(|t| ((t * 7919) % 101) as f64 / 10.0 + 0.5).collect();
    let low: Vec<f64> = (0..n * 2).map(|t| ((t * 104_729) % 97) as f64).collect();
    let cosine = Points::from_vec("h", n, d, data.clone()).unwrap().with_metric(Metric::Cosine).unwrap();
    let mut dist = vec![0.0; n * n];
    for (i, row) in dist.chunks_mut(n).enumerate() {
        faithful::reference::distance_row(&cosine, i, row);
        row[i] = 0.0;
    }
    let distances = Object::new();
    Reflect::set(&distances, &"distances".into(), &Float64Array::from(&dist[..]).into()).unwrap();
    Reflect::set(&distances, &"rows".into(), &(n as f64).into()).unwrap();
    let mut results = Vec::new();
    for (backend, high, metric) in [
        ("cpu", matrix_js(&data, n, d), Some("cosine")),
        ("webgpu", matrix_js(&data, n, d), Some("cosine")),
        ("cpu", distances.clone().into(), None),
    ] {
        let opts = Object::new();
        Reflect::set(&opts, &"high".into(), &high).unwrap();
        Reflect::set(&opts, &"backend".into(), &backend.into()).unwrap();
        if let Some(m) = metric {
            Reflect::set(&opts, &"metric".into(), &m.into()).unwrap();
        }
        let s = Session::create(opts.unchecked_into()).await.unwrap();
        let req = Object::new();
        Reflect::set(&req, &"low".into(), &matrix_js(&low, n, 2)).unwrap();
        let specs = Array::new();
        specs.push(&"tnc:k=5".into());
        specs.push(&"mrre:k=5".into());
        Reflect::set(&req, &"specs".into(), &specs).unwrap();
        let p = js_sys::Promise::from(JsValue::from(s.measure(req.unchecked_into())));
        let r = wasm_bindgen_futures::JsFuture::from(p).await.unwrap();
        let input = field(&r, &["run", "spaces", "high", "input"]).as_string().unwrap();
        assert_eq!(input, if metric.is_some() { "coordinates" } else { "distance matrix" });
        if backend == "webgpu" {
            assert_eq!(field(&r, &["run", "backend"]).as_string().as_deref(), Some("gpu"), "WebGPU serves cosine");
        }
        let t = field(&r, &["projections", "0", "scores", "0", "values", "trustworthiness"]).as_f64().unwrap();
        let m = field(&r, &["projections", "0", "scores", "1", "values", "mrre_false"]).as_f64().unwrap();
        results.push((t.to_bits(), m.to_bits()));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
    let opts = Object::new();
    Reflect::set(&opts, &"high".into(), &matrix_js(&data, n, d)).unwrap();
    Reflect::set(&opts, &"metric".into(), &"hamming".into()).unwrap();
    let err = Session::create(opts.unchecked_into()).await.err().expect("hamming is refused");
    let msg = js_sys::Error::from(err).message().as_string().unwrap();
    assert!(msg.contains("invalid metric 'hamming'"), "{msg}");
}

/// Sammon, CCA and the average local error from the tiles (coordinates: each pair once for both
/// of its rows, the portable tile sums in wasm) are the full-row sweep's bits (the same space as
/// a distance matrix, read row by row): values and every local value, on tied and jittered data.
#[wasm_bindgen_test]
async fn tiled_sweep_is_the_full_row_sweep_in_wasm() {
    use faithful::{DistanceMatrix, Evaluation, Evaluator, Points, Spec};
    let (n, dim) = (203usize, 7usize);
    let v: Vec<f64> = (0..n * dim)
        .map(|t| {
            let (i, c) = (t / dim, t % dim);
            (((i % 41) * 7 + c * 3) % 13) as f64 + if i % 3 == 0 { 1e-9 * c as f64 } else { 0.0 }
        })
        .collect();
    let high = Points::from_vec("x", n, dim, v).unwrap();
    let low = Points::from_vec("y", n, 2, (0..2 * n).map(|t| ((t * 13) % 17) as f64 * 0.5).collect()).unwrap();
    let mut dist = vec![0.0; n * n];
    for (i, row) in dist.chunks_mut(n).enumerate() {
        faithful::reference::distance_row(&high, i, row);
    }
    let matrix = Points::from_distances("d", DistanceMatrix::from_vec("d", n, dist).unwrap());
    let specs: Vec<Spec> =
        ["sammon", "cca_stress:lambda=3", "cca_stress:lambda=2,kernel=step", "ale", "ale:squared=true"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
    let run = |h: &Points| Evaluator::builder(h.clone()).local(true).build();
    let tiled =
        |e: &Evaluation| serde_json::to_value(&e.run).unwrap()["plan"]["pairwise"]["full_row_sweep_tiled"].clone();
    let a = run(&high).measure_many_async(&[&low], None, &specs).await.unwrap();
    let b = run(&matrix).measure_many_async(&[&low], None, &specs).await.unwrap();
    assert_eq!((tiled(&a), tiled(&b)), (Value::Bool(true), Value::Bool(false)));
    for (x, y) in a.projections[0].scores.iter().zip(&b.projections[0].scores) {
        let bits = |s: &faithful::Score| -> Vec<u64> {
            let locals = s.local.iter().flatten().flat_map(|(_, v)| v.iter());
            s.values.iter().map(|(_, v)| v).chain(locals).map(|v| v.to_bits()).collect()
        };
        assert_eq!(bits(x), bits(y), "{}", x.id);
        assert!(x.local.is_some(), "{}: locals asked for", x.id);
    }
}
