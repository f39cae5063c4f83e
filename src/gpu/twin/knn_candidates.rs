//! Twin of `knn_candidates.wgsl`: the 64 threads of a workgroup simulated in order.

use super::distances::sqdist;
use crate::gpu::bound::Params;
use crate::gpu::prepare::Prepared;
use crate::gpu::shaders::{KT_MAX, POOL, WG};

/// What `knn_candidates.wgsl` returns for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct KnnRow {
    /// Candidates found (more than `p.cap` means overflow: only the first `p.cap` are kept).
    pub count: u32,
    /// The first `p.cap` candidates (j, s̃).
    pub candidates: Vec<(u32, f32)>,
    /// Whether τ' came from the tile minima (else from a pass over s̃).
    pub from_minima: bool,
}

/// Inserts `x` into the ascending `top[..kt]` (the kernel's `insert`; NaN never enters).
fn insert(top: &mut [f32; KT_MAX], kt: usize, x: f32) {
    if x < top[kt - 1] {
        let mut q = kt - 1;
        while q > 0 && top[q - 1] > x {
            top[q] = top[q - 1];
            q -= 1;
        }
        top[q] = x;
    }
}

/// Twin of `knn_candidates.wgsl` for row i over the points `p.col0..p.col0 + p.n` (all n, or a
/// streamed plan's tile), with the row's tile minima from `twin::tile_minima` (empty for the
/// classic kernel set, which has none).
pub fn knn_candidates(p: &Params, prep: &Prepared, i: usize, minima: &[f32]) -> KnnRow {
    knn_candidates_carried(p, prep, i, minima, &[]).0
}

/// [`knn_candidates`] in a streamed plan (`P.streamed = 1`): `carried` holds the k smallest U
/// of the row's earlier tiles (empty before the first tile), which enter the pool; returns the
/// pool's k smallest too, which the kernel carries to the next tile (unchanged when the pool
/// overflowed). `from_minima` is then "no pass over s̃ for τ′".
pub fn knn_candidates_carried(
    p: &Params,
    prep: &Prepared,
    i: usize,
    minima: &[f32],
    carried: &[f32],
) -> (KnnRow, Vec<f32>) {
    let (c0, n, k, kt) = (p.col0 as usize, p.n as usize, p.k as usize, p.kt as usize);
    let ni = prep.norms[i];
    let up = |j: usize| {
        let s = sqdist(prep, i, j);
        (s, s + p.eps_of(s, ni, prep.norms[j]), s - p.eps_of(s, ni, prep.norms[j]))
    };
    let sentinel = 1.0e38f32;
    // τ': the c-th smallest (c = ⌈k/kt⌉) of the threads' kt-th smallest minima, on the bits.
    let mut vals: Vec<u32> = (0..WG)
        .map(|t| {
            let mut top = [sentinel; KT_MAX];
            for &x in minima.iter().skip(t).step_by(WG) {
                insert(&mut top, kt, x);
            }
            top[kt - 1].to_bits()
        })
        .collect();
    vals.sort_unstable();
    let mut tau1 = f32::from_bits(vals[k.div_ceil(kt) - 1]);
    if carried.len() == k {
        tau1 = tau1.min(carried.iter().copied().fold(0.0, f32::max));
    }
    let from_minima = tau1 < sentinel;
    if !from_minima {
        tau1 = 0.0;
        for t in 0..WG {
            let mut top = [sentinel; KT_MAX];
            for j in (t..n).step_by(WG).map(|j| c0 + j).filter(|&j| j != i) {
                insert(&mut top, kt, up(j).1);
            }
            tau1 = tau1.max(top[kt - 1]);
        }
    }
    let mut pool = carried.to_vec();
    pool.extend((c0..c0 + n).filter(|&j| j != i).map(|j| up(j).1).filter(|&u| u <= tau1));
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
    let cands: Vec<(u32, f32)> = (c0..c0 + n)
        .filter(|&j| j != i)
        .filter_map(|j| {
            let (s, _, lo) = up(j);
            (!(lo > tau)).then_some((j as u32, s))
        })
        .collect();
    let count = cands.len() as u32;
    let next = if pool.len() <= POOL {
        let mut sorted = pool;
        sorted.sort_by(f32::total_cmp);
        sorted.truncate(k);
        sorted
    } else {
        carried.to_vec()
    };
    (KnnRow { count, candidates: cands.into_iter().take(p.cap as usize).collect(), from_minima }, next)
}
