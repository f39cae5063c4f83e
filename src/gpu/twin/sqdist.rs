//! Twin of `sqdist.wgsl`: s̃ and the bound ε for one row.

use super::distances::sqdist;
use crate::gpu::bound::Params;
use crate::gpu::prepare::Prepared;

/// Twin of `sqdist.wgsl` for one row: (s̃(i, ·), ε(i, ·)).
pub fn sqdist_row(p: &Params, prep: &Prepared, i: usize) -> (Vec<f32>, Vec<f32>) {
    (0..prep.n)
        .map(|j| {
            let s = sqdist(prep, i, j);
            (s, p.eps_of(s, prep.norms[i], prep.norms[j]))
        })
        .unzip()
}
