//! Twin of `distances.wgsl`: s̃(i, j) by `sqdist` in bound.wgsl, coordinate order, one rounding
//! per operation.

use crate::gpu::prepare::Prepared;

/// `sqdist` in bound.wgsl: coordinate order, one rounding per operation.
pub fn sqdist(prep: &Prepared, i: usize, j: usize) -> f32 {
    let d = prep.dim;
    let (a, b) = (&prep.pts[i * d..(i + 1) * d], &prep.pts[j * d..(j + 1) * d]);
    let mut s = 0.0f32;
    for c in 0..d {
        let t = a[c] - b[c];
        s += t * t;
    }
    s
}
