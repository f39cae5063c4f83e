//! Twin of `distances.wgsl`: s̃(i, j) in coordinate order, one rounding per operation, under
//! the prepared space's distance form.

use crate::gpu::bound::Form;
use crate::gpu::prepare::Prepared;

/// The kernel's value for the pair (i, j): coordinate order, one rounding per operation, by
/// the prepared space's form (squared distance; cityblock `Σ |t|`; chebyshev `max |t|`).
pub fn sqdist(prep: &Prepared, i: usize, j: usize) -> f32 {
    let d = prep.dim;
    let (a, b) = (&prep.pts[i * d..(i + 1) * d], &prep.pts[j * d..(j + 1) * d]);
    let mut s = 0.0f32;
    for c in 0..d {
        s = term(prep.form, s, a[c] - b[c]);
    }
    s
}

/// One coordinate's term of the form's accumulation (the kernels' loop bodies).
#[inline]
pub fn term(form: Form, acc: f32, t: f32) -> f32 {
    match form {
        Form::Squared => acc + t * t,
        Form::Cityblock => acc + t.abs(),
        Form::Chebyshev => acc.max(t.abs()),
    }
}
