//! Measures whose output key depends on a parameter, as in ZADU: `ivm` returns the measure's
//! name (`silhouette`, ...), `c_evm` returns `{clustering}_{measure}` (`kmeans_arand`, ...).
//!
//! The registry lists each such measure once, with its default key; [`variant`] gives the
//! registry entry's twin whose `keys` are those of the resolved parameters.

use std::sync::OnceLock;

use super::registry::{MeasureDef, REGISTRY};
use crate::spec::ParamValue;

/// The output key of `def` with these (typed, complete) parameters, for the keyed measures.
fn key_for(def: &MeasureDef, params: &[(String, ParamValue)]) -> Option<String> {
    let get = |name: &str| params.iter().find(|(n, _)| n == name).map(|(_, v)| v.to_string()).unwrap_or_default();
    match def.id {
        "ivm" => Some(get("measure")),
        "c_evm" => Some(format!("{}_{}", get("clustering"), get("measure"))),
        _ => None,
    }
}

/// Every key a keyed measure can return, from its choice parameters.
fn all_keys(def: &MeasureDef) -> Vec<&'static str> {
    use super::registry::ParamKind::Choice;
    let choices = |name: &str| match def.params.iter().find(|p| p.name == name).map(|p| p.kind) {
        Some(Choice(c)) => c.to_vec(),
        _ => Vec::new(),
    };
    match def.id {
        "ivm" => choices("measure"),
        "c_evm" => choices("clustering")
            .iter()
            .flat_map(|c| choices("measure").into_iter().map(move |m| &*Box::leak(format!("{c}_{m}").into_boxed_str())))
            .collect(),
        _ => Vec::new(),
    }
}

/// One twin per (keyed measure, key), built once.
fn twins() -> &'static [MeasureDef] {
    static TWINS: OnceLock<Vec<MeasureDef>> = OnceLock::new();
    TWINS.get_or_init(|| {
        REGISTRY
            .iter()
            .flat_map(|d| {
                all_keys(d).into_iter().map(move |key| MeasureDef {
                    id: d.id,
                    zadu_id: d.zadu_id,
                    params: d.params,
                    min_classes: d.min_classes,
                    k_rule: d.k_rule,
                    keys: Box::leak(Box::new([key])),
                    local_keys: d.local_keys,
                    needs: d.needs,
                    compute: d.compute,
                    about: d.about,
                })
            })
            .collect()
    })
}

/// `def` itself, or for a keyed measure the twin whose key matches `params`.
pub(super) fn variant(def: &'static MeasureDef, params: &[(String, ParamValue)]) -> &'static MeasureDef {
    match key_for(def, params) {
        Some(key) => twins().iter().find(|t| t.id == def.id && t.keys[0] == key).unwrap_or(def),
        None => def,
    }
}
