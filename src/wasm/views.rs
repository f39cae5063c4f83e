//! `views(request)`: the distortion views' data for the page (the library's
//! [`crate::Evaluator::views`]): the scores with per-point values, each projection's kNN list
//! and cross ranks at k, its binned Shepard diagram and its co-ranking matrix in log bins.
//!
//! ```js
//! const v = await views({ high, lows, labels, specs: ["tnc:k=10", "stress"], optional: ["srho"], k: 10, shepardBins: 64, corankingPerOctave: 4 });
//! v.evaluation.projections[0].scores[0].local.local_trustworthiness;   // Float64Array
//! v.knnHigh;                                     // Int32Array n×k
//! v.projections[0].neighbourhoods.rankLowOfHigh; // Int32Array n×k (above k: a missing neighbour)
//! v.projections[0].shepard.counts;               // Float64Array bins×bins (exact integers)
//! v.projections[0].leftOut;                      // [{ id: "srho", reason }] where srho is undefined
//! ```

use js_sys::{Array, Float64Array, Int32Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::types::{PromiseViews, ViewsRequest as ViewsRequestJs};
use super::{Served, evaluation_js, fail, get, labels, matrix, spec_list, specs};
use crate::{Points, ViewsRequest};

fn count(request: &JsValue, key: &str, default: usize) -> Result<usize, JsValue> {
    let v = get(request, key)?;
    if v.is_undefined() || v.is_null() {
        return Ok(default);
    }
    let x = v.as_f64().ok_or_else(|| fail(format!("{key}: expected a number")))?;
    if !(x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
        return Err(fail(format!("{key}: expected a whole number >= 0, got {x}")));
    }
    Ok(x as usize)
}

fn ints(v: &[u32]) -> Int32Array {
    let v: Vec<i32> = v.iter().map(|&x| x as i32).collect();
    Int32Array::from(v.as_slice())
}

/// Counts as a Float64Array: exact while below 2^53 (n(n − 1) is, for any n a browser holds).
fn counts(v: &[u64]) -> Float64Array {
    let v: Vec<f64> = v.iter().map(|&x| x as f64).collect();
    Float64Array::from(v.as_slice())
}

fn set(o: &Object, key: &str, value: &JsValue) -> Result<(), JsValue> {
    Reflect::set(o, &key.into(), value).map(drop)
}

/// The views' data; see the module docs. Per-point values are on (the views colour by them).
#[wasm_bindgen]
pub fn views(request: ViewsRequestJs) -> PromiseViews {
    let request: JsValue = request.into();
    wasm_bindgen_futures::future_to_promise(async move {
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
        let labels = labels(&request)?;
        let specs = specs(&request, labels.is_some())?;
        let defaults = ViewsRequest::default();
        let req = ViewsRequest::new()
            .k(count(&request, "k", defaults.k)?)
            .shepard_bins(count(&request, "shepardBins", defaults.shepard_bins)?)
            .coranking_per_octave(count(&request, "corankingPerOctave", defaults.coranking_per_octave)?)
            .optional(spec_list(&request, "optional")?.unwrap_or_default());
        let mut served = Served::start(&request).await?;
        served.opts.local = true;
        let eval = served.evaluator(high);
        let refs: Vec<&Points> = lows.iter().collect();
        let mut v = eval.views_async(&refs, labels.as_ref(), &specs, &req).await.map_err(fail)?;
        served.stamp(&mut v.evaluation);

        let out = Object::new();
        set(&out, "evaluation", &evaluation_js(&mut v.evaluation)?)?;
        set(&out, "k", &(v.k as f64).into())?;
        set(&out, "knnHigh", &v.knn_high.as_deref().map_or(JsValue::NULL, |l| ints(l).into()))?;
        let projections = Array::new();
        for p in &v.projections {
            let o = Object::new();
            set(&o, "name", &p.name.as_str().into())?;
            let nb = match &p.neighbourhoods {
                Some(nb) => {
                    let x = Object::new();
                    set(&x, "k", &(nb.k as f64).into())?;
                    set(&x, "knnLow", &ints(&nb.knn_low))?;
                    set(&x, "rankLowOfHigh", &ints(&nb.rank_low_of_high))?;
                    set(&x, "rankHighOfLow", &ints(&nb.rank_high_of_low))?;
                    x.into()
                }
                None => JsValue::NULL,
            };
            set(&o, "neighbourhoods", &nb)?;
            let sh = match &p.shepard {
                Some(s) => {
                    let x = Object::new();
                    set(&x, "bins", &(s.bins as f64).into())?;
                    set(&x, "maxHigh", &s.max_high.into())?;
                    set(&x, "maxLow", &s.max_low.into())?;
                    set(&x, "pairs", &(s.pairs as f64).into())?;
                    set(&x, "counts", &counts(&s.counts))?;
                    x.into()
                }
                None => JsValue::NULL,
            };
            set(&o, "shepard", &sh)?;
            let co = match &p.coranking {
                Some(c) => {
                    let x = Object::new();
                    set(&x, "edges", &ints(&c.edges))?;
                    set(&x, "counts", &counts(&c.counts))?;
                    set(&x, "rnx", &Float64Array::from(c.rnx.as_slice()))?;
                    set(&x, "aucRnx", &c.auc_rnx.into())?;
                    x.into()
                }
                None => JsValue::NULL,
            };
            set(&o, "coranking", &co)?;
            let left_out = Array::new();
            for l in &p.left_out {
                let x = Object::new();
                set(&x, "id", &l.id.as_str().into())?;
                set(&x, "reason", &l.reason.as_str().into())?;
                left_out.push(&x);
            }
            set(&o, "leftOut", &left_out)?;
            projections.push(&o);
        }
        set(&out, "projections", &projections)?;
        Ok(out.into())
    })
    .unchecked_into()
}
