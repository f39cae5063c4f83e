//! The extremes of f(r) − g(e) over many pairs of integers (r, e), with f and g non-increasing
//! and known only after the pass that meets the pairs (snc's distortion range
//! 1/(S_X/max_X + α) − 1/(S_Y/max_Y + α) needs both graphs' largest S first).
//!
//! Correctly rounded division, addition and subtraction are monotone, so for a fixed r the
//! difference is smallest at the smallest e met with r and largest at the largest: keeping
//! those two per r (`note`) and evaluating them later gives exactly the extremes over all the
//! pairs, without holding the pairs.

use std::collections::HashMap;

/// Largest r bound kept in flat arrays (8 MiB); above it a hash map holds the r met.
const FLAT_MAX: u64 = 1 << 20;

/// Per r met, the smallest and largest e met with it.
pub(in crate::measures) struct Frontier {
    /// Flat, indexed by r: (smallest e, largest e), `u32::MAX` smallest when r was not met.
    flat: Vec<(u32, u32)>,
    /// The r met, to drain the flat arrays in O(r met).
    met: Vec<u32>,
    map: HashMap<u64, (u64, u64)>,
}

impl Frontier {
    /// For pairs with r, e <= `bound`.
    pub(in crate::measures) fn new(bound: u64) -> Self {
        let flat = if bound <= FLAT_MAX { vec![(u32::MAX, 0); bound as usize + 1] } else { Vec::new() };
        Frontier { flat, met: Vec::new(), map: HashMap::new() }
    }

    #[inline]
    pub(in crate::measures) fn note(&mut self, r: u64, e: u64) {
        if self.flat.is_empty() {
            let x = self.map.entry(r).or_insert((e, e));
            *x = (x.0.min(e), x.1.max(e));
            return;
        }
        let (e32, x) = (e as u32, &mut self.flat[r as usize]);
        if x.0 == u32::MAX {
            self.met.push(r as u32);
            *x = (e32, e32);
        } else {
            *x = (x.0.min(e32), x.1.max(e32));
        }
    }

    /// Appends (r, smallest e, largest e) for every r met since the last drain, and forgets them.
    pub(in crate::measures) fn drain(&mut self, out: &mut Vec<(u64, u64, u64)>) {
        for r in self.met.drain(..) {
            let x = std::mem::replace(&mut self.flat[r as usize], (u32::MAX, 0));
            out.push((u64::from(r), u64::from(x.0), u64::from(x.1)));
        }
        out.extend(self.map.drain().map(|(r, (lo, hi))| (r, lo, hi)));
    }

    /// Takes in what `other` has met (leaving it empty): the same as noting its pairs here.
    pub(in crate::measures) fn absorb(&mut self, other: &mut Frontier) {
        let mut kept = Vec::new();
        other.drain(&mut kept);
        for (r, lo, hi) in kept {
            self.note(r, lo);
            self.note(r, hi);
        }
    }
}

/// (min(0, f(r) − g(e)), max(0, f(r) − g(e))) over the drained pairs of a [`Frontier`].
pub(in crate::measures) fn extremes(
    kept: &[(u64, u64, u64)],
    f: impl Fn(u64) -> f64,
    g: impl Fn(u64) -> f64,
) -> (f64, f64) {
    kept.iter().fold((0.0f64, 0.0f64), |(lo, hi), &(r, e_lo, e_hi)| (lo.min(f(r) - g(e_lo)), hi.max(f(r) - g(e_hi))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both layouts give the extremes of evaluating every pair, for snc's kind of f and g.
    #[test]
    fn equals_the_extremes_over_every_pair() {
        let (max_r, max_e, alpha) = (997.0, 1013.0, 0.1);
        let f = |r: u64| 1.0 / (r as f64 / max_r + alpha);
        let g = |e: u64| 1.0 / (e as f64 / max_e + alpha);
        let mut state = 12345u64;
        let mut next = |m: u64| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % m
        };
        let pairs: Vec<(u64, u64)> = (0..5000).map(|_| (next(998), next(1014))).collect();
        let want = pairs.iter().fold((0.0f64, 0.0f64), |(lo, hi), &(r, e)| (lo.min(f(r) - g(e)), hi.max(f(r) - g(e))));
        assert!(want.0 < -1.0 && want.1 > 1.0, "{want:?}");
        for bound in [1013, FLAT_MAX + 1] {
            let mut fr = Frontier::new(bound);
            let mut kept = Vec::new();
            for (i, &(r, e)) in pairs.iter().enumerate() {
                fr.note(r, e);
                if i % 1000 == 999 {
                    fr.drain(&mut kept);
                }
            }
            fr.drain(&mut kept);
            assert!(kept.len() < pairs.len());
            assert_eq!(extremes(&kept, f, g), want, "bound {bound}");
            // Two halves met apart and absorbed: the same extremes.
            let (mut a, mut b) = (Frontier::new(bound), Frontier::new(bound));
            for (i, &(r, e)) in pairs.iter().enumerate() {
                if i % 2 == 0 { a.note(r, e) } else { b.note(r, e) }
            }
            a.absorb(&mut b);
            let mut kept = Vec::new();
            a.drain(&mut kept);
            assert_eq!(extremes(&kept, f, g), want, "absorbed, bound {bound}");
        }
    }
}
