//! Typed access to a resolved spec's parameters (validated by the registry).

use crate::measures::Resolved;
use crate::spec::ParamValue;

fn get<'a>(r: &'a Resolved, name: &str) -> &'a ParamValue {
    &r.params.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{}: parameter {name} is declared", r.def.id)).1
}

/// A string (choice) parameter.
pub(in crate::measures) fn param_str<'a>(r: &'a Resolved, name: &str) -> &'a str {
    match get(r, name) {
        ParamValue::Str(s) => s,
        other => panic!("{}: parameter {name} is a choice, got {other:?}", r.def.id),
    }
}

/// An integer parameter.
pub(in crate::measures) fn param_int(r: &Resolved, name: &str) -> i64 {
    match get(r, name) {
        ParamValue::Int(i) => *i,
        other => panic!("{}: parameter {name} is an integer, got {other:?}", r.def.id),
    }
}
