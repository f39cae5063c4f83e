//! The in-memory pair order for Spearman's ρ alone: bucketed, so that every sort runs in cache
//! and the records are stored once.
//!
//! The general path ([`super::pair_order::sort_and_scan`]) radix-sorts all records twice with a
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

use super::pair_order::{rank_x_groups, scan2_groups, OrderPath};
use super::radix;
use super::scratch_pool::Pool;
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

/// Cells of the fine grid behind a [`Digit`].
const CELLS: usize = 1 << 16;

/// A monotone map from a distance's bit pattern to one of `2^bits` buckets of about equal
/// size: the bits between two sample quantiles fall into a fine grid of [`CELLS`] equal cells
/// (keys beyond them into the end cells), and a table gives each cell its bucket, the cells
/// dealt out by the sample's counts (equal depth), never decreasing.
#[derive(Debug, Clone)]
pub(super) struct Digit {
    lo: u64,
    shift: u32,
    bits: u32,
    /// Bucket of each cell, non-decreasing.
    table: Vec<u16>,
    /// First cell of each bucket (one more entry than buckets).
    first: Vec<u32>,
}

impl Digit {
    #[inline]
    fn cell(&self, key: u64) -> usize {
        ((key.saturating_sub(self.lo) >> self.shift) as usize).min(CELLS - 1)
    }

    #[inline]
    pub fn of(&self, key: u64) -> usize {
        self.table[self.cell(key)] as usize
    }

    pub fn buckets(&self) -> usize {
        1 << self.bits
    }

    /// Bounds on the high keys of bucket `d`, `base..base + 2^shift`, when it holds neither end
    /// cell (those also take the keys beyond the sample's quantiles).
    fn range(&self, d: usize) -> Option<(u64, u32)> {
        let (c0, c1) = (self.first[d] as usize, self.first[d + 1] as usize);
        (c0 > 0 && c1 < CELLS && c1 > c0).then(|| {
            let width = (c1 - c0).next_power_of_two().trailing_zeros();
            (self.lo + ((c0 as u64) << self.shift), self.shift + width)
        })
    }

    /// `2^bits` buckets from `sample` (bit patterns of distances).
    fn from_sample(mut sample: Vec<u64>, bits: u32) -> Digit {
        let buckets = 1usize << bits;
        sample.sort_unstable();
        let (lo, shift) = match sample.len() {
            0 => (0, 63),
            len => {
                let cut = len / 1024;
                let (lo, hi) = (sample[cut], sample[len - 1 - cut]);
                let span = u64::BITS - (hi - lo).leading_zeros();
                (lo, span.saturating_sub(CELLS.trailing_zeros()))
            }
        };
        let mut d = Digit { lo, shift, bits, table: Vec::new(), first: Vec::new() };
        // Equal depth: a cell goes to the bucket of the sample's share below it.
        let mut counts = vec![0u64; CELLS];
        for &k in &sample {
            counts[d.cell(k)] += 1;
        }
        let total = sample.len().max(1) as u64;
        let mut below = 0u64;
        d.table = counts
            .iter()
            .map(|&c| {
                let b = ((below * buckets as u64) / total).min(buckets as u64 - 1) as u16;
                below += c;
                b
            })
            .collect();
        d.first = vec![CELLS as u32; buckets + 1];
        for (cell, &b) in d.table.iter().enumerate().rev() {
            d.first[b as usize] = cell as u32;
        }
        // Buckets that got no cell start where the next one does.
        for b in (0..buckets).rev() {
            d.first[b] = d.first[b].min(d.first[b + 1]);
        }
        d
    }
}

/// `bits(pairs) − 16`, clamped: chunks of about 2^16 records (1 MiB, an L2 cache).
fn chunk_bits(pairs: usize) -> u32 {
    (usize::BITS - pairs.leading_zeros()).saturating_sub(16).clamp(2, 11)
}

/// How the pair pass lays the records out: the digits of both spaces, and the Y-bucket sizes
/// counted on the way.
pub(super) struct Writer {
    x: Digit,
    y: Digit,
    y_sizes: Mutex<Vec<u64>>,
}

impl Writer {
    /// Places the buckets from a deterministic sample of pairs of both spaces.
    pub fn new(high: &Points, low: &Points) -> Writer {
        let n = high.n();
        let pairs = n * n.saturating_sub(1) / 2;
        let mut rng = SplitMix64(0x5EED_B0C4_E75u64);
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
            starts[self.x.of((r >> 64) as u64) + 1] += 1;
            y_sizes[self.y.of(r as u64)] += 1;
        }
        for (t, c) in self.y_sizes.lock().expect("bucket sizes").iter_mut().zip(y_sizes) {
            *t += c;
        }
        for d in 0..self.x.buckets() {
            starts[d + 1] += starts[d];
        }
        let mut next = starts.clone();
        for &r in recs {
            let d = self.x.of((r >> 64) as u64);
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
pub(super) struct Layout {
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
pub(super) fn rank_sums(mut recs: Vec<u128>, layout: &Layout, limit: u64, ctl: &Control) -> Result<std::result::Result<((u128, u128, u128), OrderPath), Vec<u128>>> {
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
                let (sorted, spare) = if group_sort(v, buf, layout.x.range(c), counts) { (&mut buf[..], &mut v[..]) } else { (&mut v[..], &mut buf[..]) };
                let mut ystarts = vec![0u32; ybuckets + 1];
                let sxx = rank_x_groups(sorted, x_start[c], |y| ystarts[layout.y.of(y) + 1] += 1);
                for b in 0..ybuckets {
                    ystarts[b + 1] += ystarts[b];
                }
                let mut next: Vec<u32> = ystarts[..ybuckets].to_vec();
                for &r in sorted.iter() {
                    let b = layout.y.of((r >> 64) as u64);
                    spare[next[b] as usize] = r;
                    next[b] += 1;
                }
                // Back into the chunk's pieces, grouped by Y-bucket.
                let mut at = 0;
                for r in layout.pieces(c) {
                    // SAFETY: as above.
                    unsafe { std::slice::from_raw_parts_mut(base.add(r.start), r.len()) }.copy_from_slice(&spare[at..at + r.len()]);
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
fn gather(recs: &[u128], layout: &Layout, c: usize, prefix: &[usize], want: std::ops::Range<usize>, out: &mut Vec<u128>) {
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

/// Largest run that insertion sort finishes.
const INSERTION: usize = 32;

/// Orders `v` by the records' high halves (the distance of the bucket's space) so that equal
/// distances are adjacent; the order within a group is left open. Returns whether the result
/// is in `buf` (as long as `v`) rather than `v`. `range` bounds the high keys when known:
/// counting passes on the bits below the bucket's digit then leave runs of a few keys.
fn group_sort(v: &mut [u128], buf: &mut [u128], range: Option<(u64, u32)>, counts: &mut Vec<u32>) -> bool {
    let m = v.len();
    let hi = |r: u128| (r >> 64) as u64;
    if m <= INSERTION {
        insertion_by_high(v);
        return false;
    }
    let Some((base, shift)) = range else {
        radix::sort(v, buf);
        return false;
    };
    // Counting passes over the top `sb` bits below the bucket's digit: one for a bucket that
    // fits a cache, else two (least significant half first), each with a cache-friendly
    // fan-out. What is left are runs of equal digits, a few keys each.
    let sb = (usize::BITS - m.leading_zeros()).min(shift).min(22);
    let sub_shift = shift - sb;
    let sub = |r: u128| ((hi(r) - base) >> sub_shift) as usize;
    let in_buf = if sb <= SINGLE_PASS_BITS {
        counts.clear();
        counts.resize(1 << sb, 0);
        for &r in v.iter() {
            counts[sub(r)] += 1;
        }
        prefix(counts);
        for &r in v.iter() {
            let d = sub(r);
            buf[counts[d] as usize] = r;
            counts[d] += 1;
        }
        true
    } else {
        let lo_bits = sb / 2;
        let lo_n = 1usize << lo_bits;
        counts.clear();
        counts.resize(lo_n + (1 << (sb - lo_bits)), 0);
        for &r in v.iter() {
            let d = sub(r);
            counts[d & (lo_n - 1)] += 1;
            counts[lo_n + (d >> lo_bits)] += 1;
        }
        let (lo_c, hi_c) = counts.split_at_mut(lo_n);
        prefix(lo_c);
        prefix(hi_c);
        for &r in v.iter() {
            let d = sub(r) & (lo_n - 1);
            buf[lo_c[d] as usize] = r;
            lo_c[d] += 1;
        }
        for &r in buf.iter() {
            let d = sub(r) >> lo_bits;
            v[hi_c[d] as usize] = r;
            hi_c[d] += 1;
        }
        false
    };
    // Runs of equal digits are adjacent and in order, a few keys each: insertion sort finishes
    // them in linear time; data dense enough to make it slow goes to a comparison sort.
    let out = if in_buf { &mut *buf } else { &mut *v };
    if !insertion_by_high_bounded(out, 8 * m) {
        out.sort_unstable_by_key(|&r| hi(r));
    }
    in_buf
}

/// Buckets up to 2^this records are distributed in one counting pass.
const SINGLE_PASS_BITS: u32 = 13;

/// Exclusive prefix sums in place.
fn prefix(counts: &mut [u32]) {
    let mut at = 0;
    for c in counts.iter_mut() {
        let t = *c;
        *c = at;
        at += t;
    }
}

/// Insertion sort by the high halves that gives up (returns false) after `budget` moves.
fn insertion_by_high_bounded(v: &mut [u128], budget: usize) -> bool {
    let mut moves = 0;
    for i in 1..v.len() {
        let x = v[i];
        let k = x >> 64;
        let mut j = i;
        while j > 0 && v[j - 1] >> 64 > k {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        moves += i - j;
        if moves > budget {
            return false;
        }
    }
    true
}

/// Insertion sort by the high halves.
fn insertion_by_high(v: &mut [u128]) {
    insertion_by_high_bounded(v, usize::MAX);
}

#[cfg(test)]
mod tests {
    use super::super::pair_order::{sort_and_scan, RankMoments};
    use super::super::pairs::{pair_pass, PairJob};
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
        let p = pairs as i128;
        let centre = p * (p + 1) * (p + 1);
        RankMoments { cxx: sums.0 as i128 - centre, cyy: sums.2 as i128 - centre, cxy: sums.1 as i128 - centre }
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
                let got = rank_sums(v, &layout, u64::MAX, &Control::default()).unwrap().unwrap_or_else(|_| panic!("no limit")).0;
                assert_eq!(moments(got, p), want, "block_rows {block_rows}");
            }
            let (v, layout) = laid_out(high, low, 32);
            let back = rank_sums(v.clone(), &layout, 10, &Control::default()).unwrap().err().expect("over the limit");
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

    #[test]
    fn digits_are_monotone() {
        let sample: Vec<u64> = (1..5000u64).map(|t| ((t as f64).sqrt() * 3.0).to_bits()).collect();
        let d = Digit::from_sample(sample, 8);
        let mut keys: Vec<u64> = (0..20000u64).map(|t| (t as f64 * 0.013).to_bits()).collect();
        keys.sort_unstable();
        let digits: Vec<usize> = keys.iter().map(|&k| d.of(k)).collect();
        assert!(digits.windows(2).all(|w| w[0] <= w[1]));
        assert!(digits.iter().all(|&x| x < d.buckets()));
        assert!(digits.iter().collect::<std::collections::BTreeSet<_>>().len() > 100, "spread over the buckets");
        for (&k, &x) in keys.iter().zip(&digits) {
            if let Some((base, shift)) = d.range(x) {
                assert!(k >= base && k - base < 1u64 << shift);
            }
        }
    }
}
