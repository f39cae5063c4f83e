//! The in-memory pair order for Spearman's ρ alone: bucketed, so that every sort runs in cache
//! and the records are stored once.
//!
//! The general path ([`super::in_memory::sort_and_scan`]) radix-sorts all records twice with a
//! second array as scratch. Ranks need less: the records only have to be grouped by exact d^X
//! (then by exact d^Y) with their global positions known. So:
//!
//! 0. the pass that measures the pairs drops each record into an X-chunk (a monotone function
//!    of d^X's bits, [`Digit`]) within its block's region;
//! 1. each X-chunk is gathered from the blocks, sorted in cache, and its tie groups get their
//!    doubled average ranks `a = 2s + c + 1` (s: the group's global start, the sizes of the
//!    chunks before it plus its place in the chunk); each record becomes
//!    `(bits(d^Y) << 64) | payload(a)`, and the chunk goes back to its own slots grouped by
//!    Y-bucket;
//! 2. each Y-bucket is gathered from the chunks, sorted in cache and scanned for the doubled
//!    ranks b of d^Y's tie groups (s: the sizes of the Y-buckets before it plus the place).
//!
//! A chunk or bucket holds whole tie groups (equal bits give equal digits) and they are ordered
//! like their keys, so the groups, starts and ranks are exactly those of the full sort, and the
//! exact integer sums Σa², Σb², Σab (hence ρ) are the same bits as the general path's, for any
//! thread count and block size. When a chunk or a Y-bucket (counted in step 0) is too large
//! for the per-thread scratch (tie-heavy data), the caller falls back to the general path on
//! the same records.

use std::sync::Mutex;

use rayon::prelude::*;

use super::super::radix;
use super::super::scratch_pool::Pool;
use super::digit::Digit;
use super::group_sort::group_sort;
use super::order_stats::OrderPath;
use super::record::{key, low_half};
use super::scans::{rank_x_groups, scan2_groups};
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_pair;
use crate::splitmix::SplitMix64;

/// Pairs sampled to place the buckets.
const SAMPLE: usize = 1 << 15;
/// Fewer pairs than this take the general path (its sort is in cache anyway).
pub(super) const MIN_PAIRS: usize = 1 << 16;
/// Y-buckets per task of step 2.
const Y_PER_TASK: usize = 16;

/// `bits(pairs) − 16`, clamped: chunks of about 2^16 records (1 MiB, an L2 cache).
fn chunk_bits(pairs: usize) -> u32 {
    (usize::BITS - pairs.leading_zeros()).saturating_sub(16).clamp(2, 11)
}

/// How the pair pass lays the records out: the digits of both spaces, and the Y-bucket sizes
/// counted on the way.
pub(crate) struct Writer {
    x: Digit,
    y: Digit,
    y_sizes: Mutex<Vec<u64>>,
}

impl Writer {
    /// Places the buckets from a deterministic sample of pairs of both spaces.
    pub fn new(high: &Points, low: &Points) -> Writer {
        let n = high.n();
        let pairs = n * n.saturating_sub(1) / 2;
        let mut rng = SplitMix64(0x05EE_DB0C_4E75_u64);
        let (mut sx, mut sy) = (Vec::with_capacity(SAMPLE), Vec::with_capacity(SAMPLE));
        if n >= 2 {
            for _ in 0..SAMPLE {
                let i = rng.below(n as u64) as usize;
                let j = (i + 1 + rng.below(n as u64 - 1) as usize) % n;
                sx.push(distance_pair(high, i, j).to_bits());
                sy.push(distance_pair(low, i, j).to_bits());
            }
        }
        let y = Digit::from_sample(sy, 11);
        let y_sizes = Mutex::new(vec![0; y.buckets()]);
        Writer { x: Digit::from_sample(sx, chunk_bits(pairs)), y, y_sizes }
    }

    /// Writes one block's records (`recs`, any order) into `out` grouped by X-chunk, and
    /// returns the chunks' starts within `out` (one more entry than chunks).
    pub fn block(&self, recs: &[u128], out: &mut [u128]) -> Vec<u32> {
        debug_assert_eq!(recs.len(), out.len());
        let mut starts = vec![0u32; self.x.buckets() + 1];
        let mut y_sizes = vec![0u64; self.y.buckets()];
        for &r in recs {
            starts[self.x.of(key(r)) + 1] += 1;
            y_sizes[self.y.of(low_half(r))] += 1;
        }
        for (t, c) in self.y_sizes.lock().expect("bucket sizes").iter_mut().zip(y_sizes) {
            *t += c;
        }
        for d in 0..self.x.buckets() {
            starts[d + 1] += starts[d];
        }
        let mut next = starts.clone();
        for &r in recs {
            let d = self.x.of(key(r));
            out[next[d] as usize] = r;
            next[d] += 1;
        }
        starts
    }

    /// The layout once every block is written: `starts` per block, blocks back to back.
    pub fn finish(self, starts: Vec<Vec<u32>>) -> Layout {
        let mut offsets = Vec::with_capacity(starts.len());
        let mut at = 0usize;
        for s in &starts {
            offsets.push(at);
            at += *s.last().expect("bucket starts") as usize;
        }
        let y_sizes = self.y_sizes.into_inner().expect("bucket sizes");
        Layout { x: self.x, y: self.y, starts, offsets, y_sizes }
    }
}

/// Where the pair pass put the records.
pub(crate) struct Layout {
    x: Digit,
    y: Digit,
    /// Per block: X-chunk starts within the block's region.
    starts: Vec<Vec<u32>>,
    /// Per block: the region's start.
    offsets: Vec<usize>,
    /// Records per Y-bucket.
    y_sizes: Vec<u64>,
}

impl Layout {
    /// The pieces (ranges of the records) that make up chunk `c`, in block order.
    fn pieces(&self, c: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.starts.iter().zip(&self.offsets).map(move |(s, &o)| o + s[c] as usize..o + s[c + 1] as usize)
    }
}

/// Largest X-chunk or Y-bucket the per-thread scratch takes for `pairs` records: at least
/// four times the average chunk (about 2^16 records, [`chunk_bits`]).
pub(super) fn chunk_limit(pairs: u64) -> u64 {
    (pairs / 64).max(1 << 18)
}

/// Bytes of per-thread scratch beyond the records.
pub(super) fn scratch_bytes(pairs: u64) -> u64 {
    rayon::current_num_threads() as u64 * 48 * chunk_limit(pairs)
}

/// A chunk's Y-bucket starts within its pieces taken end to end (one more than Y-buckets).
type YStarts = Vec<u32>;

/// Exact Σa², Σab, Σb² of the doubled average ranks (a of d^X, b of d^Y), or the records back,
/// untouched, when an X-chunk or a Y-bucket holds more than `limit` records ([`chunk_limit`]).
/// Stops with the control's error when a stop is asked for.
pub(super) fn rank_sums(
    mut recs: Vec<u128>,
    layout: &Layout,
    limit: u64,
    ctl: &Control,
) -> Result<std::result::Result<((u128, u128, u128), OrderPath), Vec<u128>>> {
    let chunks = layout.x.buckets();
    let ybuckets = layout.y.buckets();
    let mut x_start = vec![0u64; chunks + 1];
    for c in 0..chunks {
        x_start[c + 1] = x_start[c] + layout.pieces(c).map(|r| r.len() as u64).sum::<u64>();
    }
    let largest_chunk = (0..chunks).map(|c| x_start[c + 1] - x_start[c]).max().unwrap_or(0);
    let largest_y_bucket = layout.y_sizes.iter().copied().max().unwrap_or(0);
    if largest_chunk > limit || largest_y_bucket > limit {
        return Ok(Err(recs));
    }

    // Where each chunk's pieces start, taken end to end: prefix[c][b] for block b.
    let prefix: Vec<Vec<usize>> = (0..chunks)
        .map(|c| {
            let mut p = Vec::with_capacity(layout.starts.len() + 1);
            let mut at = 0;
            p.push(0);
            for r in layout.pieces(c) {
                at += r.len();
                p.push(at);
            }
            p
        })
        .collect();

    // Step 1: each chunk in place (a chunk's pieces are disjoint from the others').
    let ptr = radix::SendPtr(recs.as_mut_ptr());
    let pool: Pool<(Vec<u128>, Vec<u128>, Vec<u32>)> = Pool::new();
    let results: Vec<(u128, YStarts)> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            ctl.check()?;
            Ok(pool.with(|(v, buf, counts)| {
                let ptr = ptr;
                let base = ptr.0;
                v.clear();
                for r in layout.pieces(c) {
                    // SAFETY: chunk c's pieces are read and written by this task only.
                    v.extend_from_slice(unsafe { std::slice::from_raw_parts(base.add(r.start), r.len()) });
                }
                buf.resize(v.len(), 0);
                let (sorted, spare) = if group_sort(v, buf, layout.x.range(c), counts) {
                    (&mut buf[..], &mut v[..])
                } else {
                    (&mut v[..], &mut buf[..])
                };
                let mut ystarts = vec![0u32; ybuckets + 1];
                let sxx = rank_x_groups(sorted, x_start[c], |y| ystarts[layout.y.of(y) + 1] += 1);
                for b in 0..ybuckets {
                    ystarts[b + 1] += ystarts[b];
                }
                let mut next: Vec<u32> = ystarts[..ybuckets].to_vec();
                for &r in sorted.iter() {
                    let b = layout.y.of(key(r));
                    spare[next[b] as usize] = r;
                    next[b] += 1;
                }
                // Back into the chunk's pieces, grouped by Y-bucket.
                let mut at = 0;
                for r in layout.pieces(c) {
                    // SAFETY: as above.
                    unsafe { std::slice::from_raw_parts_mut(base.add(r.start), r.len()) }
                        .copy_from_slice(&spare[at..at + r.len()]);
                    at += r.len();
                }
                (sxx, ystarts)
            }))
        })
        .collect::<Result<_>>()?;
    let sxx: u128 = results.iter().map(|r| r.0).sum();
    let ystarts: Vec<YStarts> = results.into_iter().map(|r| r.1).collect();

    // Step 2: Y-buckets, a few per task; each gathers its records from every chunk.
    let mut y_start = vec![0u64; ybuckets + 1];
    for b in 0..ybuckets {
        y_start[b + 1] = y_start[b] + ystarts.iter().map(|s| (s[b + 1] - s[b]) as u64).sum::<u64>();
    }
    debug_assert!((0..ybuckets).all(|b| y_start[b + 1] - y_start[b] == layout.y_sizes[b]));
    let recs = &recs[..];
    let (sxy, syy) = (0..ybuckets.div_ceil(Y_PER_TASK))
        .into_par_iter()
        .map(|t| {
            ctl.check()?;
            Ok::<_, crate::Error>(pool.with(|(v, buf, counts)| {
                let (mut sxy, mut syy) = (0u128, 0u128);
                for b in t * Y_PER_TASK..((t + 1) * Y_PER_TASK).min(ybuckets) {
                    v.clear();
                    for (c, ys) in ystarts.iter().enumerate() {
                        gather(recs, layout, c, &prefix[c], ys[b] as usize..ys[b + 1] as usize, v);
                    }
                    buf.resize(v.len(), 0);
                    let sorted = if group_sort(v, buf, layout.y.range(b), counts) { &buf[..] } else { &v[..] };
                    let (xy, yy) = scan2_groups(sorted, y_start[b]);
                    sxy += xy;
                    syy += yy;
                }
                (sxy, syy)
            }))
        })
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
    Ok(Ok(((sxx, sxy, syy), OrderPath::Bucketed { chunks, largest_chunk, largest_y_bucket })))
}

/// Appends the records at positions `want` of chunk `c`'s pieces taken end to end
/// (`prefix`: where each block's piece starts in that sequence).
fn gather(
    recs: &[u128],
    layout: &Layout,
    c: usize,
    prefix: &[usize],
    want: std::ops::Range<usize>,
    out: &mut Vec<u128>,
) {
    if want.is_empty() {
        return;
    }
    let mut b = prefix.partition_point(|&p| p <= want.start) - 1;
    let mut from = want.start;
    while from < want.end {
        let (s, o) = (&layout.starts[b], layout.offsets[b]);
        let piece_start = o + s[c] as usize;
        let to = want.end.min(prefix[b + 1]);
        out.extend_from_slice(&recs[piece_start + (from - prefix[b])..piece_start + (to - prefix[b])]);
        from = to;
        b += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::in_memory::sort_and_scan;
    use super::super::order_stats::RankMoments;
    use super::super::pair_pass::{PairJob, pair_pass};
    use super::*;

    /// Records laid out by the pair pass, as the in-memory path makes them.
    fn laid_out(high: &Points, low: &Points, block_rows: usize) -> (Vec<u128>, Layout) {
        let n = high.n();
        let writer = Writer::new(high, low);
        let mut v = vec![0u128; n * (n - 1) / 2];
        let job = PairJob { high_extent: true, sums: false, records: Some((&mut v, &writer)), densities: None };
        let pass = pair_pass(high, &[low], job, block_rows, &Control::default()).unwrap();
        (v, writer.finish(pass.record_starts))
    }

    fn moments(sums: (u128, u128, u128), pairs: u64) -> RankMoments {
        RankMoments::from_sums(pairs, sums.0, sums.1, sums.2)
    }

    fn points(n: usize, d: usize, mut f: impl FnMut(usize, usize) -> f64) -> Points {
        Points::from_vec("p", n, d, (0..n * d).map(|t| f(t / d, t % d)).collect()).unwrap()
    }

    /// The bucketed ranks equal the full sort's, bit for bit, on generic and tie-heavy data
    /// and for several block sizes; a chunk over the limit hands the records back unchanged.
    #[test]
    fn bucketed_ranks_equal_the_full_sort() {
        let mut rng = SplitMix64(7);
        let generic_h = points(420, 5, |_, _| rng.normal());
        let mut rng = SplitMix64(8);
        let generic_l = points(420, 2, |_, _| rng.normal());
        // Lattice coordinates: a few distinct distances, huge tie groups in both spaces.
        let tied_h = points(400, 3, |i, c| ((i * (c + 3)) % 7) as f64);
        let tied_l = points(400, 2, |i, c| ((i / (c + 2)) % 5) as f64);
        // The lattice with 1e-12 jitter: thousands of distinct distances within a few ulps of
        // each other, long runs for the in-cache sort's last step.
        let mut rng = SplitMix64(9);
        let dense_h = points(400, 3, |i, c| ((i * (c + 3)) % 7) as f64 + 1e-12 * rng.uniform());
        let mut rng = SplitMix64(10);
        let dense_l = points(400, 2, |i, c| ((i / (c + 2)) % 5) as f64 + 1e-12 * rng.uniform());
        for (high, low) in [(&generic_h, &generic_l), (&tied_h, &tied_l), (&dense_h, &dense_l)] {
            let (v, _) = laid_out(high, low, 32);
            let want = sort_and_scan(v.clone(), true, false, &Control::default()).unwrap().ranks.unwrap();
            for block_rows in [1, 7, 64] {
                let (v, layout) = laid_out(high, low, block_rows);
                let p = v.len() as u64;
                let got = rank_sums(v, &layout, u64::MAX, &Control::default())
                    .unwrap()
                    .unwrap_or_else(|_| panic!("no limit"))
                    .0;
                assert_eq!(moments(got, p), want, "block_rows {block_rows}");
            }
            let (v, layout) = laid_out(high, low, 32);
            let back = rank_sums(v.clone(), &layout, 10, &Control::default()).unwrap().expect_err("over the limit");
            assert_eq!(back, v);
        }
    }

    #[test]
    fn a_stop_ends_the_bucketed_pass() {
        let mut rng = SplitMix64(11);
        let high = points(300, 3, |_, _| rng.normal());
        let low = points(300, 2, |i, c| high.row(i)[c]);
        let (v, layout) = laid_out(&high, &low, 16);
        let cancel = crate::control::Cancel::new();
        cancel.request();
        let ctl = Control { progress: None, cancel: Some(cancel) };
        assert!(matches!(rank_sums(v, &layout, u64::MAX, &ctl), Err(crate::Error::Interrupted)));
    }
}
