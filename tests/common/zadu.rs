//! ZADU fixtures (`tests/fixtures/*/zadu*.json`): a measure's spec from its recorded id and
//! parameters, and the 1e-12 tolerance the golden comparisons use.

use faithful::{ParamValue, Spec};
use serde_json::Value;

/// Relative tolerance against ZADU's scores (absolute below 1).
pub const TOL: f64 = 1e-12;

/// `a` equals ZADU's `b` within [`TOL`].
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= TOL * b.abs().max(1.0)
}

/// The spec of measure `id` with the fixture's `params` object (ints, floats, strings).
pub fn spec(id: &str, params: &Value) -> Spec {
    let mut spec = Spec::new(id);
    for (name, v) in params.as_object().unwrap() {
        let value = match v {
            Value::Number(x) if x.is_i64() => ParamValue::Int(x.as_i64().unwrap()),
            Value::Number(x) => ParamValue::Float(x.as_f64().unwrap()),
            Value::String(s) => ParamValue::Str(s.clone()),
            other => panic!("unexpected param {other}"),
        };
        spec = spec.with(name.clone(), value);
    }
    spec
}
