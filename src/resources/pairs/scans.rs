//! The scans over the sorted records, shared by every path.
//!
//! * Scan 1 walks the records in `(d^X, d^Y)` order. Each tie group of d^X (start s, size c)
//!   has the doubled average rank `a = 2s + c + 1`. For non-metric stress it pools the group's
//!   d^Y (count, mean, centred sum of squares, Welford) and runs PAVA on the pooled groups
//!   ([`PavaStack`]), accumulating the residual Σ (d^Y − d̂)² as the groups' own squared
//!   deviations plus each merge's `δ² w_a w_b / (w_a + w_b)` (compensated sums, in sequence
//!   order).
//! * For Spearman, scan 1 rewrites each record as `(bits(d^Y) << 64) | payload(a)`; these are
//!   sorted again and scan 2 walks the d^Y tie groups, with doubled ranks b. ρ is the Pearson
//!   correlation of a and b, from the exact integer sums Σa², Σb², Σab (u128), so it is the
//!   correctly rounded ratio of exact integers, up to two roundings.
//!
//! [`Scan1`] and [`Scan2`] take one record at a time (the external path streams its merges
//! through them); [`rank_scan_parallel`] and [`scan2_parallel`] are the same scans for ranks
//! alone over records in memory, on independent tie groups in parallel (exact integer sums,
//! so the same bits as the sequential scans).

use std::collections::HashMap;

use rayon::prelude::*;

use super::extent::Extent;
use super::order_stats::{OrderPath, OrderStats, RankMoments};
use super::pava::PavaStack;
use super::record::{by_y, final_payload, final_rank, key, low_half};
use super::tie_groups::{TieGroup, TieWalk, each_group, group_chunks};
use crate::error::Result;
use crate::sum::{Compensated, pairwise_sum};

/// The end of a d^X tie group: its start, size and doubled average rank.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ended {
    pub start: u64,
    pub count: u64,
    pub a: u64,
}

const SQUARES_CHUNK: usize = 4096;

/// Scan 1 over the records in (d^X, d^Y) order.
pub(crate) struct Scan1 {
    rank: bool,
    nm: bool,
    walk: TieWalk,
    g_mean: f64,
    g_m2: f64,
    stack: PavaStack,
    raw: Compensated,
    norm: Compensated,
    squares: Vec<f64>,
    sxx: u128,
    high: Extent,
    low: Extent,
}

impl Scan1 {
    pub fn new(rank: bool, nm: bool, stack: PavaStack) -> Self {
        Scan1 {
            rank,
            nm,
            walk: TieWalk::default(),
            g_mean: 0.0,
            g_m2: 0.0,
            stack,
            raw: Compensated::default(),
            norm: Compensated::default(),
            squares: Vec::with_capacity(SQUARES_CHUNK),
            sxx: 0,
            // (With no records, 0: the bits of no key.)
            high: Extent { min: 0.0, max: 0.0 },
            low: Extent::EMPTY,
        }
    }

    /// Frees the PAVA stack (and removes its spill file) once the scan is finished.
    pub fn release_stack(&mut self) {
        self.stack = PavaStack::in_memory(Vec::new());
    }

    /// Takes the stack's allocation back (the in-memory path reuses it as sort scratch).
    pub(super) fn take_store(&mut self) -> Vec<u128> {
        std::mem::replace(&mut self.stack, PavaStack::in_memory(Vec::new())).into_store()
    }

    /// The start of the group the last record belongs to.
    pub fn group_start(&self) -> u64 {
        self.walk.start()
    }

    /// Feeds the next record; returns the group that it ended, if any.
    #[inline]
    pub fn push(&mut self, rec: u128) -> Result<Option<Ended>> {
        let kx = key(rec);
        let y = f64::from_bits(low_half(rec));
        let ended = match self.walk.push(kx) {
            Some(g) => Some(self.close(g)?),
            None => None,
        };
        let count = self.walk.count();
        if count == 1 {
            // A new group: its key is the largest d^X so far (the first, the smallest).
            if ended.is_none() {
                self.high.min = f64::from_bits(kx);
            }
            self.high.max = f64::from_bits(kx);
        }
        if self.nm {
            if count == 1 {
                // Welford's first step, exactly: mean = y, m2 = 0.
                self.g_mean = y;
                self.g_m2 = 0.0;
            } else {
                let d = y - self.g_mean;
                self.g_mean += d / count as f64;
                self.g_m2 += d * (y - self.g_mean);
            }
            self.squares.push(y * y);
            if self.squares.len() == SQUARES_CHUNK {
                self.flush_squares();
            }
        }
        self.low.min = self.low.min.min(y);
        self.low.max = self.low.max.max(y);
        Ok(ended)
    }

    /// Σ (d^Y)² in chunks of [`SQUARES_CHUNK`] consecutive records: NumPy's pairwise sum
    /// within a chunk, a compensated sum across chunks. The chunks depend only on the sequence.
    fn flush_squares(&mut self) {
        if !self.squares.is_empty() {
            self.norm.add(pairwise_sum(&self.squares));
            self.squares.clear();
        }
    }

    fn close(&mut self, g: TieGroup) -> Result<Ended> {
        let a = g.rank();
        if self.rank {
            self.sxx += weighted_square(g.count, a);
        }
        if self.nm {
            if self.g_m2 != 0.0 {
                // (Adding 0 to a compensated sum changes nothing.)
                self.raw.add(self.g_m2);
            }
            self.stack.add(g.count, self.g_mean, &mut self.raw)?;
        }
        Ok(Ended { start: g.start, count: g.count, a })
    }

    /// Ends the last group.
    pub fn finish(&mut self) -> Result<Option<Ended>> {
        self.flush_squares();
        match self.walk.finish() {
            Some(g) => self.close(g).map(Some),
            None => Ok(None),
        }
    }
}

/// Scan 2 over the records in (d^Y, payload) order.
#[derive(Default)]
pub(crate) struct Scan2 {
    walk: TieWalk,
    g_sum_a: u128,
    sxy: u128,
    syy: u128,
}

impl Scan2 {
    /// Feeds the next record, its payload final or (external path) naming an open group
    /// whose size `spans` holds.
    #[inline]
    pub fn push(&mut self, rec: u128, spans: &HashMap<u64, u64>) {
        let payload = low_half(rec);
        let a = if payload & 1 == 1 {
            let s = payload >> 1;
            2 * s + spans[&s] + 1
        } else {
            payload >> 1
        };
        self.add(key(rec), a);
    }

    #[inline]
    fn add(&mut self, ky: u64, a: u64) {
        if let Some(g) = self.walk.push(ky) {
            self.close(g);
        }
        self.g_sum_a += a as u128;
    }

    fn close(&mut self, g: TieGroup) {
        let b = g.rank();
        // A group of one (the usual case) needs only 64×64-bit products.
        self.sxy += if g.count == 1 { b as u128 * (self.g_sum_a as u64) as u128 } else { b as u128 * self.g_sum_a };
        self.syy += weighted_square(g.count, b);
        self.g_sum_a = 0;
    }

    pub fn finish(&mut self) {
        if let Some(g) = self.walk.finish() {
            self.close(g);
        }
    }
}

/// The final statistics from the scans.
pub(crate) fn stats(pairs: u64, scan1: &Scan1, scan2: Option<&Scan2>, path: OrderPath) -> OrderStats {
    OrderStats {
        pairs,
        high: scan1.high,
        low: scan1.low,
        ranks: scan2.map(|s2| RankMoments::from_sums(pairs, scan1.sxx, s2.sxy, s2.syy)),
        isotonic: scan1.nm.then(|| (scan1.raw.value(), scan1.norm.value())),
        path,
    }
}

/// Scan 1 without the isotonic fit over all records in memory (sorted): each d^X group's
/// doubled rank `a = 2s + c + 1` becomes the payload of its records, re-keyed by d^Y; returns
/// the scan's sums (Σ c·a² and both spaces' extents) for [`stats`].
pub(super) fn rank_scan_parallel(v: &mut [u128]) -> Scan1 {
    let mut scan = Scan1::new(true, false, PavaStack::in_memory(Vec::new()));
    let p = v.len();
    if p == 0 {
        return scan;
    }
    scan.high = Extent { min: f64::from_bits(key(v[0])), max: f64::from_bits(key(v[p - 1])) };
    let chunks = group_chunks(v);
    let mut parts: Vec<(usize, &mut [u128])> = Vec::with_capacity(chunks.len());
    let mut rest = &mut v[..];
    let mut at = 0;
    for c in &chunks {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(c.end - at);
        parts.push((at, head));
        rest = tail;
        at = c.end;
    }
    let results: Vec<(u128, f64, f64)> = parts
        .into_par_iter()
        .map(|(start, recs)| {
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            let sxx = rank_x_groups(recs, start as u64, |y| {
                let yf = f64::from_bits(y);
                lo = lo.min(yf);
                hi = hi.max(yf);
            });
            (sxx, lo, hi)
        })
        .collect();
    for (sxx, lo, hi) in results {
        scan.sxx += sxx;
        scan.low.min = scan.low.min.min(lo);
        scan.low.max = scan.low.max.max(hi);
    }
    scan
}

/// Rewrites each d^X tie group of `recs` (grouped by their high halves, whole groups only,
/// `start` the global position of `recs[0]`) as `(bits(d^Y) << 64) | payload(a)` with its
/// doubled average rank `a = 2s + c + 1`; calls `each` with every record's d^Y bits and
/// returns Σ c·a².
pub(super) fn rank_x_groups(recs: &mut [u128], start: u64, mut each: impl FnMut(u64)) -> u128 {
    let mut sxx = 0u128;
    each_group(recs, start, |g, members| {
        let a = g.rank();
        sxx += weighted_square(g.count, a);
        let pay = final_payload(a);
        for r in members {
            each(low_half(*r));
            *r = by_y(*r, pay);
        }
    });
    sxx
}

/// Scan 2 over fully resolved payloads (the in-memory path), in parallel by d^Y groups.
pub(super) fn scan2_parallel(v: &[u128]) -> Scan2 {
    let chunks = group_chunks(v);
    let parts: Vec<(u128, u128)> =
        chunks.into_par_iter().map(|r| scan2_groups(&v[r.clone()], r.start as u64)).collect();
    let mut s2 = Scan2::default();
    for (sxy, syy) in parts {
        s2.sxy += sxy;
        s2.syy += syy;
    }
    s2
}

/// Σ b·(Σa of the group) and Σ c·b² over the d^Y tie groups of `recs` (sorted or grouped by
/// their high halves, whole groups only, payloads resolved), `start` being the global position
/// of `recs[0]`.
pub(super) fn scan2_groups(recs: &[u128], start: u64) -> (u128, u128) {
    let mut s2 = Scan2 { walk: TieWalk::at(start), ..Default::default() };
    for &r in recs {
        s2.add(key(r), final_rank(r));
    }
    s2.finish();
    (s2.sxy, s2.syy)
}

/// `c · x²` exactly; one 64×64-bit product for a group of one.
#[inline]
fn weighted_square(c: u64, x: u64) -> u128 {
    let sq = x as u128 * x as u128;
    if c == 1 { sq } else { c as u128 * sq }
}
