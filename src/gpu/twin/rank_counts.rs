//! Twin of `rank_counts.wgsl`: certain and Fast counts, the overlap list and the witness sums of
//! one row, by the kernel's algorithm (queries sorted by L once, each l placed by binary
//! search, a difference array for the certain counts, only the positions that can overlap
//! walked); and the comparison of every l with every query it replaces
//! ([`rank_counts_all_pairs`]), which the unit tests hold it to.

use super::distances::sqdist;
use crate::gpu::bound::Params;
use crate::gpu::prepare::Prepared;
use crate::gpu::shaders::RANK_WITNESS;

/// The kernel's "no value" sentinel (`F32_MAX` in bound.wgsl).
const F32_MAX: f32 = 1.0e38;

/// What `rank_counts.wgsl` returns for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRow {
    pub certain: Vec<u32>,
    pub fast: Vec<u32>,
    /// (query slot, l), at most `cap` of them.
    pub overlaps: Vec<(u32, u32)>,
    pub count: u32,
    /// The workgroup's witness sums (one range of all n points), as the kernel writes them.
    pub witness: [u32; RANK_WITNESS],
    /// The comparisons made outside loops (end tests and probes), a work count.
    pub straight: u32,
}

/// An interval's lower end with NaN replaced as the kernel does (every comparison keeps the
/// outcome it has with NaN: false).
pub fn lower_end(x: f32) -> f32 {
    if x.is_nan() { -F32_MAX } else { x }
}

/// An interval's upper end, likewise.
pub fn upper_end(x: f32) -> f32 {
    if x.is_nan() { F32_MAX } else { x }
}

/// Binary search steps of the kernel for k queries: the bit length of k.
pub fn search_steps(k: usize) -> u32 {
    usize::BITS - k.leading_zeros()
}

/// Twin of `rank_counts.wgsl` for row i and its queries (one range of the points
/// `p.col0..p.col0 + p.n`: all n, or a streamed plan's tile), the device's s̃ and ε taken from
/// the twins of `distances` and `eps_of` (a query's s̃ whichever tile it lies in).
pub fn rank_counts(p: &Params, prep: &Prepared, i: usize, queries: &[u32]) -> RankRow {
    let ni = prep.norms[i];
    let iv = |j: usize| {
        let s = sqdist(prep, i, j);
        let e = p.eps_of(s, ni, prep.norms[j]);
        (s, s - e, s + e)
    };
    let points = p.col0 as usize..(p.col0 + p.n) as usize;
    rank_counts_of(p.cap as usize, i, points, queries, iv)
}

/// The kernel's algorithm for row i over the points `points`, each point's (s̃, s̃ − ε, s̃ + ε)
/// from `iv`, keeping at most `cap` overlaps.
pub fn rank_counts_of(
    cap: usize,
    i: usize,
    points: std::ops::Range<usize>,
    queries: &[u32],
    iv: impl Fn(usize) -> (f32, f32, f32),
) -> RankRow {
    let k = queries.len();
    let steps = search_steps(k);
    let mut w = [0u32; RANK_WITNESS];
    // By slot: s̃, L, U (NaN ends replaced).
    let a: Vec<(f32, f32, f32)> = queries
        .iter()
        .map(|&j| {
            let (s, l, u) = iv(j as usize);
            (s, lower_end(l), upper_end(u))
        })
        .collect();
    w[0] += k as u32;
    // The rank sort: position of q = smaller L's plus equal L's of smaller slots.
    let mut perm = vec![0usize; k];
    for q in 0..k {
        let x = a[q].1;
        let pos = (0..k).filter(|&o| a[o].1 < x || (a[o].1 == x && o < q)).count();
        w[0] += k as u32;
        perm[pos] = q;
    }
    let sl: Vec<f32> = perm.iter().map(|&q| a[q].1).collect();
    let mut mu = vec![0.0f32; k];
    let mut m = -F32_MAX;
    for t in 0..k {
        w[1] += 1;
        m = m.max(a[perm[t]].2);
        mu[t] = m;
    }
    let mut diff = vec![0u32; k];
    let mut fast = vec![0u32; k];
    let mut overlaps = Vec::new();
    let mut count = 0u32;
    let mut straight = 0u32;
    for l in points {
        w[2] += 1;
        if l == i {
            continue;
        }
        let (s, lo, up) = iv(l);
        let (lo_l, up_l) = (lower_end(lo), upper_end(up));
        let mut p = k;
        straight += 1;
        if sl[k - 1] > up_l {
            straight += 1;
            if sl[0] > up_l {
                p = 0;
            } else {
                w[4] += 1;
                let (mut a0, mut len) = (1usize, k - 2);
                for _ in 0..steps {
                    w[3] += 1;
                    if len > 0 {
                        let h = len / 2;
                        if sl[a0 + h] > up_l {
                            len = h;
                        } else {
                            a0 += h + 1;
                            len -= h + 1;
                        }
                    }
                }
                p = a0;
            }
            diff[p] += 1;
        }
        if p == 0 {
            continue;
        }
        let mut p0 = p;
        straight += 1;
        if !(mu[p - 1] < lo_l) {
            w[4] += 1;
            let (mut a0, mut len) = (0usize, p - 1);
            for _ in 0..steps {
                w[3] += 1;
                if len > 0 {
                    let h = len / 2;
                    if mu[a0 + h] < lo_l {
                        a0 += h + 1;
                        len -= h + 1;
                    } else {
                        len = h;
                    }
                }
            }
            p0 = a0;
        }
        w[6] += (p - p0) as u32;
        for &q in &perm[p0..p] {
            w[5] += 1;
            let (sq, _, uq) = a[q];
            let j = queries[q];
            if !(lo_l > uq) && l as u32 != j {
                if (count as usize) < cap {
                    overlaps.push((q as u32, l as u32));
                }
                count += 1;
                if s < sq || (s == sq && (l as u32) < j) {
                    fast[q] += 1;
                }
            }
        }
    }
    let mut certain = vec![0u32; k];
    let mut run = 0;
    for t in 0..k {
        w[1] += 1;
        run += diff[t];
        w[0] += 1;
        certain[perm[t]] = run;
    }
    // The copy of the overlaps to the dense list, when they fit.
    w[7] = if count as usize <= cap { count } else { 0 };
    RankRow { certain, fast, overlaps, count, witness: w, straight }
}

/// Every l compared with every query, the classification `rank_counts.wgsl` must reproduce
/// (overlaps in (l, slot) order; no witness).
pub fn rank_counts_all_pairs(
    cap: usize,
    i: usize,
    n: usize,
    queries: &[u32],
    iv: impl Fn(usize) -> (f32, f32, f32),
) -> RankRow {
    let q: Vec<(f32, f32, f32)> = queries.iter().map(|&j| iv(j as usize)).collect();
    let k = queries.len();
    let mut row = RankRow {
        certain: vec![0; k],
        fast: vec![0; k],
        overlaps: Vec::new(),
        count: 0,
        witness: [0; RANK_WITNESS],
        straight: 0,
    };
    for l in (0..n).filter(|&l| l != i) {
        let (sl, lo, hi) = iv(l);
        for (slot, (&j, &(sq, lq, uq))) in queries.iter().zip(&q).enumerate() {
            if hi < lq {
                row.certain[slot] += 1;
            } else if !(lo > uq) && l as u32 != j {
                if (row.count as usize) < cap {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;

    /// Intervals built to break the search: clustered and spread values, exact ties of L, U
    /// and s̃, nested intervals (U not sorted with L), empty and NaN intervals.
    fn intervals(rng: &mut SplitMix64, n: usize, style: usize) -> Vec<(f32, f32, f32)> {
        (0..n)
            .map(|_| {
                let s = match style {
                    0 => (rng.uniform() * 100.0) as f32,
                    1 => (rng.uniform() * 4.0).floor() as f32, // many exact ties
                    _ => 1.0 + (rng.uniform() * 1e-3) as f32,  // one narrow band
                };
                let e = match (rng.uniform() * 10.0) as u32 {
                    0 => 0.0,
                    1 => f32::NAN,
                    2 => 5.0 * rng.uniform() as f32, // wide: nests the narrow ones
                    _ => (rng.uniform() * 2e-3) as f32,
                };
                let s = if rng.uniform() < 0.03 { f32::NAN } else { s };
                (s, s - e, s + e)
            })
            .collect()
    }

    /// The search finds exactly what comparing every l with every query finds: the certain and
    /// Fast counts, the overlaps (as a set), their number; and its witness sums are the ones
    /// the host accepts.
    #[test]
    fn binary_search_classifies_as_every_pair_compared() {
        let mut rng = SplitMix64(30);
        for case in 0..300 {
            let n = 2 + (rng.uniform() * 300.0) as usize;
            let style = case % 3;
            let ivs = intervals(&mut rng, n, style);
            let i = (rng.uniform() * n as f64) as usize % n;
            let k = 1 + (rng.uniform() * (n - 1).min(128) as f64) as usize % (n - 1).min(128);
            // k distinct queries ≠ i.
            let mut pool: Vec<u32> = (0..n as u32).filter(|&j| j as usize != i).collect();
            for t in 0..k {
                let s = t + (rng.uniform() * (pool.len() - t) as f64) as usize % (pool.len() - t);
                pool.swap(t, s);
            }
            let qs = &pool[..k];
            let iv = |j: usize| ivs[j];
            let fast = rank_counts_of(usize::MAX, i, 0..n, qs, iv);
            let all = rank_counts_all_pairs(usize::MAX, i, n, qs, iv);
            assert_eq!(fast.certain, all.certain, "case {case}: certain");
            assert_eq!(fast.fast, all.fast, "case {case}: fast");
            assert_eq!(fast.count, all.count, "case {case}: count");
            let mut a = fast.overlaps.clone();
            let mut b = all.overlaps.clone();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "case {case}: overlaps");
            let w = fast.witness;
            assert!(
                crate::gpu::rank_counts::rank_witness_complete(&[n], k, &w, fast.count, usize::MAX),
                "case {case}: witness {w:?} (n = {n}, k = {k})"
            );
            assert!(w[5] <= w[6] && w[6] >= fast.count, "case {case}: the walks cover the overlaps");
        }
    }

    /// Queries far from most points: one or two comparisons settle each of those points, so
    /// the kernel's comparisons per point stay near 2 at k = 20 (the all-pairs kernel made 20).
    #[test]
    fn points_outside_the_band_cost_two_comparisons() {
        let n = 2000;
        let iv = |j: usize| {
            let s = j as f32;
            (s, s - 0.25, s + 0.25)
        };
        let qs: Vec<u32> = (100..120).collect();
        let row = rank_counts_of(usize::MAX, 0, 0..n, &qs, iv);
        let cmp = row.witness[3] + row.witness[5] + row.straight;
        assert!(f64::from(cmp) / (n - 1) as f64 <= 2.2, "{:?}", row.witness);
        assert_eq!(row.certain, (0..20).map(|q| 99 + q).collect::<Vec<u32>>());
    }
}
