//! Shared checks of the all-pairs measures (ZADU 0.5.4's `require_nonzero_distances` and
//! constant-distance errors).

use crate::error::Error;
use crate::resources::Extent;

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
/// but n² of those squares can still pass f64's 1.8e308): the original space's scale, named,
/// not a NaN or infinite score blamed on the projection.
pub(in crate::measures) fn require_finite_sums(id: &str, high: Option<Extent>, sums: &[f64]) -> Result<(), Error> {
    if sums.iter().all(|s| s.is_finite()) {
        return Ok(());
    }
    let largest =
        high.map(|e| format!(" (the largest original distance is {})", crate::data::shown(e.max))).unwrap_or_default();
    Err(undefined(
        id,
        &format!(
            "the sum of the squared original distances overflows f64{largest}: divide the original space by a power of 2 and measure again"
        ),
    ))
}

pub(in crate::measures) const HIGH: &str = "original space";
pub(in crate::measures) const LOW: &str = "projection";
