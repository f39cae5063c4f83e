//! Twin of `knn_candidates.wgsl`: the 64 threads of a workgroup simulated in order.

use super::distances::sqdist;
use crate::gpu::bound::Params;
use crate::gpu::prepare::Prepared;
use crate::gpu::shaders::{KT_MAX, POOL, WG};

/// Twin of `knn_candidates.wgsl` for row i: the count and the first `p.cap` candidates (j, s̃).
pub fn knn_candidates(p: &Params, prep: &Prepared, i: usize) -> (u32, Vec<(u32, f32)>) {
    let (n, k, kt) = (prep.n, p.k as usize, p.kt as usize);
    let ni = prep.norms[i];
    let up = |j: usize| {
        let s = sqdist(prep, i, j);
        (s, s + p.eps_of(s, ni, prep.norms[j]), s - p.eps_of(s, ni, prep.norms[j]))
    };
    let mut tau1 = 0.0f32;
    for t in 0..WG {
        let mut top = [1.0e38f32; KT_MAX];
        for j in (t..n).step_by(WG).filter(|&j| j != i) {
            let u = up(j).1;
            if u < top[kt - 1] {
                let mut q = kt - 1;
                while q > 0 && top[q - 1] > u {
                    top[q] = top[q - 1];
                    q -= 1;
                }
                top[q] = u;
            }
        }
        tau1 = tau1.max(top[kt - 1]);
    }
    let pool: Vec<f32> = (0..n).filter(|&j| j != i).map(|j| up(j).1).filter(|&u| u <= tau1).collect();
    let mut tau = tau1;
    if pool.len() <= POOL {
        for &x in &pool {
            let less = pool.iter().filter(|&&y| y < x).count();
            let leq = pool.iter().filter(|&&y| y <= x).count();
            if less < k && leq >= k {
                tau = tau.min(x);
            }
        }
    }
    let cands: Vec<(u32, f32)> = (0..n)
        .filter(|&j| j != i)
        .filter_map(|j| {
            let (s, _, lo) = up(j);
            (!(lo > tau)).then_some((j as u32, s))
        })
        .collect();
    let count = cands.len() as u32;
    (count, cands.into_iter().take(p.cap as usize).collect())
}
