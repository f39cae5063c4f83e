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

pub(in crate::measures) const HIGH: &str = "original space";
pub(in crate::measures) const LOW: &str = "projection";
