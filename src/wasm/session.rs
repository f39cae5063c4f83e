//! `Session`: the original space resident in the page (its points, its kNN once built, the
//! started WebGPU device), scoring projection after projection through one library `Evaluator`.
//!
//! ```js
//! const s = await Session.create({ high: { data, rows, cols }, labels, backend: "webgpu" });
//! // or: { high: { data, rows, cols }, metric: "cosine" }, or { high: { distances, rows } }
//! const r = await s.measure({ low: { data: y, rows, cols: 2 }, specs: ["tnc:k=20"], local: true });
//! const nn = await s.neighbours({ space: "high", k: 10 });   // Int32Array, n×k
//! s.free();
//! ```
//! Calls run one at a time in call order (a queue), so a page may fire them without waiting.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Int32Array, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use super::types::{
    MapBlocksRequest, MeasureRequest, NeighboursRequest, PromiseEvaluation, PromiseNeighbours, PromisePartials,
    SessionOptions,
};
use super::{Served, evaluation_js, fail, get, labels, matrix, numerics, original, specs};
use crate::control::{Cancel, Progress, ProgressFn};
use crate::{Evaluator, Labels};

/// A resident original space; see the module docs.
#[wasm_bindgen]
pub struct Session {
    inner: Rc<Inner>,
}

struct Inner {
    /// Taken out while a call runs (calls are queued, so it is always back for the next).
    eval: RefCell<Option<Evaluator>>,
    /// Points in the original space.
    n: usize,
    labels: Option<Labels>,
    served: Served,
    /// The last queued call: the next waits for it to settle.
    tail: RefCell<Promise>,
}

/// A JavaScript callback for the library's `ProgressFn`, which must be Send + Sync: wasm32 without
/// atomics has one thread, so the callback is only ever called on the thread that made it.
struct JsProgress(Function);
unsafe impl Send for JsProgress {}
unsafe impl Sync for JsProgress {}

impl JsProgress {
    fn report(&self, p: Progress) {
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"phase".into(), &p.phase.into());
        let _ = js_sys::Reflect::set(&o, &"done".into(), &(p.done as f64).into());
        let _ = js_sys::Reflect::set(&o, &"total".into(), &(p.total as f64).into());
        // A throwing callback must not stop the run.
        let _ = self.0.call1(&JsValue::NULL, &o);
    }
}

/// The signal's reason (an AbortError DOMException for `controller.abort()`), else an Error
/// named AbortError.
fn abort_error(signal: &JsValue) -> JsValue {
    let reason = get(signal, "reason").unwrap_or(JsValue::UNDEFINED);
    if !reason.is_undefined() {
        return reason;
    }
    let e = js_sys::Error::new("the call was aborted");
    e.set_name("AbortError");
    e.into()
}

fn aborted(signal: &JsValue) -> bool {
    !signal.is_undefined() && !signal.is_null() && get(signal, "aborted").ok().and_then(|a| a.as_bool()) == Some(true)
}

/// Resolves after the current task, so that an abort issued just after the call is seen.
async fn next_task() -> Result<(), JsValue> {
    let set_timeout: Function = get(&js_sys::global(), "setTimeout")?.dyn_into()?;
    let p = Promise::new(&mut |resolve, _| {
        let _ = set_timeout.call2(&JsValue::NULL, &resolve, &0.into());
    });
    JsFuture::from(p).await.map(|_| ())
}

#[wasm_bindgen]
impl Session {
    /// Keeps `high` (and labels) resident and starts the backend asked for (default WebGPU,
    /// falling back to the wasm CPU with the reason in every result's `run.fallback_reason`).
    pub async fn create(options: SessionOptions) -> Result<Session, JsValue> {
        let options: JsValue = options.into();
        let high = original(&options)?;
        let labels = labels(&options)?;
        if let Some(l) = &labels {
            l.check_len(high.n()).map_err(fail)?;
        }
        let served = Served::start(&options).await?;
        let n = high.n();
        let eval = served.evaluator(high);
        let inner = Inner {
            eval: RefCell::new(Some(eval)),
            n,
            labels,
            served,
            tail: RefCell::new(Promise::resolve(&JsValue::UNDEFINED)),
        };
        Ok(Session { inner: Rc::new(inner) })
    }

    /// Points in the original space.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> usize {
        self.inner.n
    }

    /// The backend that serves: "gpu" (WebGPU) or "cpu" (the wasm CPU reference).
    #[wasm_bindgen(getter, unchecked_return_type = "\"gpu\" | \"cpu\"")]
    pub fn backend(&self) -> String {
        if self.inner.served.gpu.is_some() { "gpu" } else { "cpu" }.into()
    }

    /// Why the wasm CPU serves although WebGPU was asked for, if it does.
    #[wasm_bindgen(getter, js_name = fallbackReason)]
    pub fn fallback_reason(&self) -> Option<String> {
        self.inner.served.fallback.clone()
    }

    /// Scores one projection of the session's points: an `Evaluation` in the CLI's schema.
    pub fn measure(&self, request: MeasureRequest) -> PromiseEvaluation {
        let request: JsValue = request.into();
        self.queued(move |inner| async move {
            let signal = get(&request, "signal")?;
            let low = matrix(&get(&request, "low")?, "low")?;
            let specs = specs(&request, inner.labels.is_some())?;
            let local = get(&request, "local")?.as_bool().unwrap_or(false);
            // This call's numerics (the session's by default): the resident kNN list keeps the
            // numerics it was built with and serves only calls that accept it.
            let numerics = numerics(&request, inner.served.opts.numerics)?;
            let progress = get(&request, "onProgress")?.dyn_into::<Function>().ok().map(|f| {
                let f = JsProgress(f);
                // A method call captures the whole Send wrapper, not its Function field.
                ProgressFn::new(move |p: Progress| f.report(p))
            });
            let cancel = Cancel::new();
            // The listener sets the library's flag: the all-pairs passes stop at their next
            // check; work between checks (and the wasm CPU's synchronous row pass) runs on, and
            // its result is dropped below.
            let on_abort = {
                let cancel = cancel.clone();
                Closure::<dyn FnMut()>::new(move || {
                    cancel.request();
                })
            };
            let listening = !signal.is_undefined() && !signal.is_null();
            if listening {
                next_task().await?;
                if aborted(&signal) {
                    return Err(abort_error(&signal));
                }
                let add: Function = get(&signal, "addEventListener")?.dyn_into()?;
                add.call2(&signal, &"abort".into(), on_abort.as_ref())?;
            }
            let mut eval = inner.eval.borrow_mut().take().ok_or_else(|| fail("the session was freed"))?;
            eval.set_numerics(numerics);
            let opts = eval.options_mut();
            opts.local = local;
            opts.progress = progress;
            opts.cancel = Some(cancel.clone());
            let result = eval.measure_many_async(&[&low], inner.labels.as_ref(), &specs).await;
            let opts = eval.options_mut();
            (opts.progress, opts.cancel) = (None, None);
            *inner.eval.borrow_mut() = Some(eval);
            if listening {
                let remove: Function = get(&signal, "removeEventListener")?.dyn_into()?;
                remove.call2(&signal, &"abort".into(), on_abort.as_ref())?;
                if cancel.is_requested() || aborted(&signal) {
                    return Err(abort_error(&signal));
                }
            }
            let mut result = result.map_err(fail)?;
            inner.served.stamp(&mut result);
            evaluation_js(&mut result)
        })
        .unchecked_into()
    }

    /// The worker pool's share of a call (npm/pool.js): the shardable `specs` on the
    /// consecutive blocks `blocks` of the shard plan, as one partial per block (their binary
    /// form, `Partial::to_bytes`: a Uint8Array each, transferable) for `foldPartials`. A session that maps the same span again
    /// keeps the original space's kNN and rank-table rows of that span only.
    #[wasm_bindgen(js_name = mapBlocks)]
    pub fn map_blocks(&self, request: MapBlocksRequest) -> PromisePartials {
        let request: JsValue = request.into();
        self.queued(move |inner| async move {
            let low = matrix(&get(&request, "low")?, "low")?;
            let specs = specs(&request, inner.labels.is_some())?;
            let blocks_js = get(&request, "blocks")?;
            if !js_sys::Array::is_array(&blocks_js) {
                return Err(fail("blocks: expected an array of [start, end] pairs"));
            }
            let mut blocks = Vec::new();
            for b in js_sys::Array::from(&blocks_js).iter() {
                let pair = js_sys::Array::from(&b);
                let at = |t: u32| pair.get(t).as_f64().filter(|v| *v >= 0.0 && v.fract() == 0.0);
                match (pair.length(), at(0), at(1)) {
                    (2, Some(a), Some(e)) => blocks.push(a as usize..e as usize),
                    _ => return Err(fail("blocks: expected an array of [start, end] pairs of whole numbers")),
                }
            }
            let eval = inner.eval.borrow_mut().take().ok_or_else(|| fail("the session was freed"))?;
            let result = eval.map_blocks_async(&low, inner.labels.as_ref(), &blocks, &specs).await;
            *inner.eval.borrow_mut() = Some(eval);
            let out = js_sys::Array::new();
            for p in result.map_err(fail)? {
                out.push(&js_sys::Uint8Array::from(&p.to_bytes()[..]).into());
            }
            Ok(out.into())
        })
        .unchecked_into()
    }

    /// The k nearest neighbours (ties by index, self excluded) of the original space
    /// (`space: "high"`) or of the projection `low` (`space: "low"`): an Int32Array, n×k
    /// row-major, with what served it as properties: `numerics` ("exact": the reference's lists;
    /// "fast": the GPU's f32 order, not certified), `backend` and `run` (the run report).
    /// `numerics` in the request overrides the session's for this call.
    pub fn neighbours(&self, request: NeighboursRequest) -> PromiseNeighbours {
        let request: JsValue = request.into();
        self.queued(move |inner| async move {
            let k = get(&request, "k")?.as_f64().ok_or_else(|| fail("k: expected a number"))?;
            if !(k >= 1.0 && k.fract() == 0.0 && k <= u32::MAX as f64) {
                return Err(fail(format!("k: expected a whole number >= 1, got {k}")));
            }
            let k = k as usize;
            let numerics = numerics(&request, inner.served.opts.numerics)?;
            let space = get(&request, "space")?.as_string().unwrap_or_default();
            let graph = match space.as_str() {
                "high" => {
                    let mut eval = inner.eval.borrow_mut().take().ok_or_else(|| fail("the session was freed"))?;
                    eval.set_numerics(numerics);
                    let graph = eval.knn_async(k).await;
                    *inner.eval.borrow_mut() = Some(eval);
                    graph
                }
                "low" => {
                    let low = matrix(&get(&request, "low")?, "low")?;
                    let n = inner.n;
                    if low.n() != n {
                        return Err(fail(format!("low: {} rows, but the session has {n} points", low.n())));
                    }
                    let mut eval = inner.served.evaluator(low);
                    eval.set_numerics(numerics);
                    eval.knn_async(k).await
                }
                other => return Err(fail(format!("space: expected \"high\" or \"low\", got \"{other}\""))),
            };
            let (graph, mut report) = graph.map_err(fail)?;
            inner.served.stamp_run(&mut report);
            let idx: Vec<i32> = graph.idx.iter().map(|&j| j as i32).collect();
            let out = Int32Array::from(idx.as_slice());
            // What served, on the array itself: a Fast list is never mistaken for the exact one.
            let run = js_sys::JSON::parse(&serde_json::to_string(&report).map_err(fail)?)?;
            js_sys::Reflect::set(&out, &"numerics".into(), &report.numerics.as_str().into())?;
            js_sys::Reflect::set(&out, &"backend".into(), &report.backend.as_str().into())?;
            js_sys::Reflect::set(&out, &"run".into(), &run)?;
            Ok(out.into())
        })
        .unchecked_into()
    }
}

impl Session {
    /// Runs `call` after every earlier call of this session has settled.
    fn queued<F>(&self, call: impl FnOnce(Rc<Inner>) -> F + 'static) -> Promise
    where
        F: std::future::Future<Output = Result<JsValue, JsValue>> + 'static,
    {
        let before = self.inner.tail.borrow().clone();
        let inner = self.inner.clone();
        let promise = future_to_promise(async move {
            // An earlier call's failure is its caller's; this one runs regardless.
            let _ = JsFuture::from(before).await;
            call(inner).await
        });
        *self.inner.tail.borrow_mut() = promise.clone();
        promise
    }
}
