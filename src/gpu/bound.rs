//! The f32 bound as the kernels use it: its constants and `eps_of` twin live in
//! [`crate::certify::bound`] (shared with the CPU's certified rows); here the witnesses' loop
//! counts.

pub use crate::certify::bound::*;

use super::shaders::WG;

/// Expected trips of a strided loop `for (j = tid; j < n; j += WG)`.
pub fn strided_trips(n: usize, tid: usize, wg: usize) -> u32 {
    n.saturating_sub(tid).div_ceil(wg) as u32
}

/// Rows of one block whose witness came back short: the distances' coordinate trips
/// (`dist_short`) or the kernel's own (`trips`, WG per row, against `want(row)`).
pub(super) fn short_rows(
    dist_short: &[bool],
    trips: &[u32],
    row0: usize,
    want: impl Fn(usize, usize) -> u64,
) -> Vec<bool> {
    dist_short
        .iter()
        .enumerate()
        .map(|(r, &s)| {
            s || trips[r * WG..(r + 1) * WG].iter().enumerate().any(|(tid, &t)| u64::from(t) != want(row0 + r, tid))
        })
        .collect()
}
