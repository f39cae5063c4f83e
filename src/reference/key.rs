//! The neighbour-order key `(d(i,j), j)` packed into one integer.

/// `(distance bits << 32) | index`. Distances are finite and ≥ 0 (never -0.0: they are square
/// roots of sums of squares), and for such f64 the bit pattern orders like the value, so
/// comparing keys compares `(d, j)` lexicographically.
pub type Key = u128;

/// The key of neighbour `j` at distance `d`.
#[inline(always)]
pub fn key(d: f64, j: usize) -> Key {
    debug_assert!(d >= 0.0 && d.is_sign_positive());
    ((d.to_bits() as u128) << 32) | j as u128
}
