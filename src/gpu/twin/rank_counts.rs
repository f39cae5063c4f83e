//! Twin of `rank_counts.wgsl`: certain and Fast counts and the overlap list of one row.

use super::distances::sqdist;
use crate::gpu::bound::Params;
use crate::gpu::prepare::Prepared;

/// What `rank_counts.wgsl` returns for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub certain: Vec<u32>,
    pub fast: Vec<u32>,
    /// (query slot, l), at most `p.cap` of them.
    pub overlaps: Vec<(u32, u32)>,
    pub count: u32,
}

/// Twin of `rank_counts.wgsl` for row i and its queries.
pub fn rank_counts(p: &Params, prep: &Prepared, i: usize, queries: &[u32]) -> RankRow {
    let ni = prep.norms[i];
    let iv = |j: usize| {
        let s = sqdist(prep, i, j);
        let e = p.eps_of(s, ni, prep.norms[j]);
        (s, s - e, s + e)
    };
    let q: Vec<(f32, f32, f32)> = queries.iter().map(|&j| iv(j as usize)).collect();
    let mut row =
        RankRow { certain: vec![0; queries.len()], fast: vec![0; queries.len()], overlaps: Vec::new(), count: 0 };
    for l in (0..prep.n).filter(|&l| l != i) {
        let (sl, lo, hi) = iv(l);
        for (slot, (&j, &(sq, lq, uq))) in queries.iter().zip(&q).enumerate() {
            if hi < lq {
                row.certain[slot] += 1;
            } else if !(lo > uq) && l as u32 != j {
                if (row.count as usize) < p.cap as usize {
                    row.overlaps.push((slot as u32, l as u32));
                }
                row.count += 1;
                if sl < sq || (sl == sq && (l as u32) < j) {
                    row.fast[slot] += 1;
                }
            }
        }
    }
    row
}
