//! Magnitude bounds on input values, shared by the readers of coordinates and of distances.

/// Largest magnitude accepted for a coordinate or a given distance: squares of such values
/// stay finite in f64.
pub const MAX_ABS: f64 = 1e150;
