//! Shared checks of the all-pairs measures (ZADU 0.5.4's `require_nonzero_distances` and
//! constant-distance errors).

use crate::error::Error;
use crate::resources::{Extent, Pairwise};

pub(in crate::measures) fn undefined(id: &str, reason: &str) -> Error {
    Error::Undefined { id: id.into(), projection: None, reason: reason.into() }
}

/// Errors when every pair distance of the space is zero.
pub(in crate::measures) fn require_nonzero(id: &str, e: Extent, space: &str) -> Result<(), Error> {
    if e.max <= 0.0 {
        return Err(undefined(id, &format!("all pairwise distances are zero in the {space}")));
    }
    Ok(())
}

/// Errors when all pair distances of the space are equal.
pub(in crate::measures) fn require_varying(id: &str, e: Extent, space: &str) -> Result<(), Error> {
    if e.min == e.max {
        return Err(undefined(id, &format!("the pairwise distances are constant in the {space}")));
    }
    Ok(())
}

/// Errors when a sum over the pairs overflowed f64 (inputs below 1e150 square to below 1e300,
/// but n² of those squares can still pass f64's 1.8e308), naming what overflowed rather than
/// scoring NaN or infinity: `original` are sums of the original distances alone, `mixed`
/// those that also hold the projection's.
pub(in crate::measures) fn require_finite_sums(
    id: &str,
    pw: &Pairwise,
    original: &[f64],
    mixed: &[f64],
) -> Result<(), Error> {
    let largest = |e: Option<Extent>| e.map(|e| crate::data::shown(e.max)).unwrap_or_else(|| "unknown".into());
    if original.iter().any(|s| !s.is_finite()) {
        let why = format!(
            "the sum of the squared original distances overflows f64 (the largest original distance is {})",
            largest(pw.high)
        );
        return Err(undefined(id, &why));
    }
    if mixed.iter().any(|s| !s.is_finite()) {
        let why = format!(
            "a sum over the pairs overflows f64 (the largest original distance is {}, the largest projected one {})",
            largest(pw.high),
            largest(pw.low)
        );
        return Err(undefined(id, &why));
    }
    Ok(())
}

pub(in crate::measures) const HIGH: &str = "original space";
pub(in crate::measures) const LOW: &str = "projection";
