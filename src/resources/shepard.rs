//! The binned Shepard diagram: every pair i < j counted once in a `bins × bins` grid of
//! (d^X, d^Y), in one sweep over the rows with O(bins²) memory per worker (never the n² points).
//!
//! The axes run from 0 to each space's largest pair distance (its [`Extent`]'s max, found
//! first). A pair lands in bin `a = min(⌊d^X / max^X · bins⌋, bins − 1)` (0 when max^X = 0), the
//! same on the other axis: a fixed function of the reference's f64 distances, so the counts are
//! exact integers, the same for any thread count and block size, and they sum to n(n−1)/2.

use std::sync::Mutex;

use rayon::prelude::*;

use super::Extent;
use super::pairs::{PairJob, pair_pass};
use super::pairwise::PairwiseCache;
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row_from;

/// The most bins per axis: the grid is held once per worker (1024² counts are 8 MiB).
pub const MAX_SHEPARD_BINS: usize = 1024;

/// The pairs i < j of two spaces counted in a `bins × bins` grid of their distances.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShepardHistogram {
    /// Bins per axis.
    pub bins: usize,
    /// The original space's largest pair distance: the end of the d^X axis.
    pub max_high: f64,
    /// The projection's largest pair distance: the end of the d^Y axis.
    pub max_low: f64,
    /// Pairs counted: n(n−1)/2, the sum of `counts`.
    pub pairs: u64,
    /// `counts[a * bins + b]`: the pairs with d^X in bin a and d^Y in bin b.
    pub counts: Vec<u64>,
}

impl ShepardHistogram {
    /// The count of bin (a, b): a on the d^X axis, b on the d^Y axis.
    pub fn count(&self, a: usize, b: usize) -> u64 {
        self.counts[a * self.bins + b]
    }
}

/// The bin of distance `d` on an axis from 0 to `max` with `bins` bins.
#[inline]
pub fn shepard_bin(d: f64, max: f64, bins: usize) -> usize {
    if max > 0.0 { ((d / max * bins as f64) as usize).min(bins - 1) } else { 0 }
}

/// The extents of both spaces' pair distances (the Shepard diagram's axes): the original
/// space's from `cache` when an earlier call found it, the rest from one extents-only sweep
/// (which measures the original space only when it must).
pub fn pair_extents(
    high: &Points,
    low: &Points,
    cache: &Mutex<PairwiseCache>,
    block_rows: usize,
    ctl: &Control,
) -> Result<(Extent, Extent)> {
    let cached = cache.lock().expect("pairwise cache").high_extent();
    let job = PairJob { high_extent: cached.is_none(), sums: false, records: None, densities: None };
    let pass = pair_pass(high, &[low], job, block_rows, ctl)?;
    if let Some(h) = pass.high {
        cache.lock().expect("pairwise cache").keep_high_extent(h);
    }
    let high_extent = cached.or(pass.high).expect("the sweep measured the original space");
    Ok((high_extent, pass.lows[0].0))
}

/// Counts every pair i < j of `high` and `low` (the same n rows) into the grid whose axes end
/// at the spaces' extents. `bins` must be in `1 ..= MAX_SHEPARD_BINS`.
pub fn shepard_pass(
    high: &Points,
    low: &Points,
    bins: usize,
    extents: (Extent, Extent),
    block_rows: usize,
    ctl: &Control,
) -> Result<ShepardHistogram> {
    let n = high.n();
    assert_eq!(low.n(), n, "both spaces have the same rows");
    assert!((1..=MAX_SHEPARD_BINS).contains(&bins), "bins {bins} out of range");
    let (max_high, max_low) = (extents.0.max.max(0.0), extents.1.max.max(0.0));
    let block_rows = block_rows.max(1);
    let blocks: Vec<std::ops::Range<usize>> = (0..n).step_by(block_rows).map(|s| s..(s + block_rows).min(n)).collect();
    let done = std::sync::atomic::AtomicU64::new(0);
    let counts = blocks
        .par_iter()
        .try_fold(
            || (vec![0u64; bins * bins], Vec::new(), Vec::new()),
            |(mut counts, mut dx, mut dy): (Vec<u64>, Vec<f64>, Vec<f64>), rows| {
                ctl.check()?;
                for i in rows.clone() {
                    let m = n - 1 - i;
                    dx.resize(m, 0.0);
                    dy.resize(m, 0.0);
                    distance_row_from(high, i, i + 1, &mut dx);
                    distance_row_from(low, i, i + 1, &mut dy);
                    for (&x, &y) in dx.iter().zip(&dy) {
                        counts[shepard_bin(x, max_high, bins) * bins + shepard_bin(y, max_low, bins)] += 1;
                    }
                }
                let d = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
                ctl.report("shepard", d, n as u64);
                Ok((counts, dx, dy))
            },
        )
        .map(|r: Result<_>| r.map(|(c, _, _)| c))
        .try_reduce(
            || vec![0u64; bins * bins],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                Ok(a)
            },
        )?;
    let pairs = counts.iter().sum();
    Ok(ShepardHistogram { bins, max_high, max_low, pairs, counts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::distance_pair;

    fn points(name: &str, n: usize, d: usize, seed: u64) -> Points {
        let v = (0..n * d).map(|t| (((t as u64 + 1) * seed) % 97) as f64 * 0.25).collect();
        Points::from_vec(name, n, d, v).unwrap()
    }

    fn extent(p: &Points) -> Extent {
        let n = p.n();
        let mut e = Extent::EMPTY;
        for i in 0..n {
            for j in i + 1..n {
                let d = distance_pair(p, i, j);
                e = Extent { min: e.min.min(d), max: e.max.max(d) };
            }
        }
        e
    }

    /// Every pair is counted once, in the bin its two distances name, for any block size.
    #[test]
    fn counts_every_pair_in_its_bin() {
        let (high, low) = (points("high", 61, 5, 13), points("low", 61, 2, 7));
        let ext = (extent(&high), extent(&low));
        let bins = 9;
        let mut want = vec![0u64; bins * bins];
        for i in 0..61 {
            for j in i + 1..61 {
                let (x, y) = (distance_pair(&high, i, j), distance_pair(&low, i, j));
                want[shepard_bin(x, ext.0.max, bins) * bins + shepard_bin(y, ext.1.max, bins)] += 1;
            }
        }
        for block_rows in [1, 4, 32, 100] {
            let h = shepard_pass(&high, &low, bins, ext, block_rows, &Control::default()).unwrap();
            assert_eq!(h.counts, want, "block_rows {block_rows}");
            assert_eq!(h.pairs, 61 * 60 / 2);
        }
        // The largest distance lands in the last bin, not past it.
        assert!(want[(bins - 1) * bins..].iter().sum::<u64>() > 0);
    }

    #[test]
    fn a_space_of_equal_points_bins_everything_at_zero() {
        let high = Points::from_vec("same", 4, 1, vec![3.0; 4]).unwrap();
        let low = points("low", 4, 2, 5);
        let h = shepard_pass(&high, &low, 4, (extent(&high), extent(&low)), 2, &Control::default()).unwrap();
        assert_eq!(h.pairs, 6);
        assert_eq!(h.counts[..4].iter().sum::<u64>(), 6);
    }
}
