//! [`OrderStats`]: Spearman's ρ and non-metric stress from all pairs sorted by distance.
//!
//! Every pair i < j becomes one record `(bits(d^X) << 64) | bits(d^Y)`. Distances are finite
//! and ≥ 0, so the records sort like `(d^X, d^Y)`, and the sorted sequence is unique: the in-
//! memory radix sort and the external merge sort hand the same sequence to the same scans, so
//! both give the same bits. Ties are exact: a tie group is a run of equal f64 bit patterns.
//!
//! * Scan 1 walks the records in `(d^X, d^Y)` order. Each tie group of d^X (start s, size c)
//!   has the doubled average rank `a = 2s + c + 1`. For non-metric stress it pools the group's
//!   d^Y (count, mean, centred sum of squares, Welford) and runs PAVA on the pooled groups,
//!   accumulating the residual Σ (d^Y − d̂)² as the groups' own squared deviations plus each
//!   merge's `δ² w_a w_b / (w_a + w_b)` (compensated sums, in sequence order).
//! * For Spearman, scan 1 rewrites each record as `(bits(d^Y) << 64) | payload(a)`; these are
//!   sorted again and scan 2 walks the d^Y tie groups, with doubled ranks b. ρ is the Pearson
//!   correlation of a and b, from the exact integer sums Σa², Σb², Σab (u128), so it is the
//!   correctly rounded ratio of exact integers, up to two roundings.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;

use rayon::prelude::*;

use super::pair_buckets::{self, Layout, Writer};
use super::pairs::{pair_pass, Extent, PairJob};
use super::radix;
use super::workspace::Workspace;
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row;
use crate::sum::pairwise_sum;

/// Centred co-moments of the doubled average ranks a (d^X) and b (d^Y), exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankMoments {
    pub cxx: i128,
    pub cyy: i128,
    pub cxy: i128,
}

impl RankMoments {
    /// Spearman's ρ, clipped to [−1, 1]; `None` when either space's distances are constant.
    pub fn rho(&self) -> Option<f64> {
        (self.cxx > 0 && self.cyy > 0).then(|| ((self.cxy as f64 / (self.cxx as f64).sqrt()) / (self.cyy as f64).sqrt()).clamp(-1.0, 1.0))
    }
}

/// How the pairs were sorted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum OrderPath {
    /// All records sorted in memory.
    InMemory,
    /// Ranks only, in cache-sized buckets (`pair_buckets`): the number of X-chunks and the
    /// largest X-chunk and Y-bucket, in records.
    Bucketed { chunks: usize, largest_chunk: u64, largest_y_bucket: u64 },
    External { runs: u64, merge_levels: u32 },
}

/// The ordered-pair statistics of one projection.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderStats {
    pub pairs: u64,
    pub high: Extent,
    pub low: Extent,
    /// For Spearman's ρ.
    pub ranks: Option<RankMoments>,
    /// For non-metric stress: Σ (d^Y − d̂)² and Σ (d^Y)².
    pub isotonic: Option<(f64, f64)>,
    pub path: OrderPath,
}

/// Neumaier's compensated sum: error about one rounding of the total, in any length.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Compensated {
    sum: f64,
    c: f64,
}

impl Compensated {
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.c += (self.sum - t) + x;
        } else {
            self.c += (x - t) + self.sum;
        }
        self.sum = t;
    }
    pub fn value(&self) -> f64 {
        self.sum + self.c
    }
}

/// A PAVA block (weight, mean) packed in a u128.
#[inline]
fn pack(w: u64, mean: f64) -> u128 {
    ((w as u128) << 64) | mean.to_bits() as u128
}
#[inline]
fn unpack(b: u128) -> (u64, f64) {
    ((b >> 64) as u64, f64::from_bits(b as u64))
}

/// The PAVA stack; the external path spills its bottom to a file in the workspace.
pub(super) struct PavaStack {
    mem: Vec<u128>,
    cap: usize,
    spill: Option<(File, PathBuf, u64)>,
    dir: Option<PathBuf>,
}

impl PavaStack {
    /// In memory, in `store`'s allocation (cleared; never grows past its capacity when that
    /// is at least the number of pairs).
    pub fn in_memory(mut store: Vec<u128>) -> Self {
        store.clear();
        PavaStack { cap: usize::MAX, mem: store, spill: None, dir: None }
    }
    /// At most `cap` blocks in memory, the rest in a file in `ws`.
    pub fn spilling(ws: &Workspace, cap: usize) -> Self {
        let cap = cap.max(4);
        PavaStack { mem: Vec::with_capacity(cap), cap, spill: None, dir: Some(ws.path().to_path_buf()) }
    }
    fn into_store(mut self) -> Vec<u128> {
        std::mem::take(&mut self.mem)
    }
    fn spilled(&self) -> u64 {
        self.spill.as_ref().map_or(0, |s| s.2)
    }
    fn push(&mut self, b: u128) -> Result<()> {
        if self.mem.len() >= self.cap {
            let half = self.cap / 2;
            if self.spill.is_none() {
                let path = self.dir.as_ref().expect("a spilling stack has a directory").join("pava.bin");
                let file = Workspace::create_file(&path)?;
                self.spill = Some((file, path, 0));
            }
            let (file, path, len) = self.spill.as_mut().expect("spill file");
            let bytes: Vec<u8> = self.mem[..half].iter().flat_map(|b| b.to_le_bytes()).collect();
            file.seek(SeekFrom::Start(*len * 16)).and_then(|_| file.write_all(&bytes)).map_err(|e| Workspace::io_error(path, e))?;
            *len += half as u64;
            self.mem.drain(..half);
        }
        self.mem.push(b);
        Ok(())
    }
    /// The top block, reloading from the spill file when the memory part is empty.
    fn top(&mut self) -> Result<Option<u128>> {
        if self.mem.is_empty() && self.spilled() > 0 {
            let (file, path, len) = self.spill.as_mut().expect("spill file");
            let k = ((self.cap / 2) as u64).min(*len).max(1);
            let mut bytes = vec![0u8; (k * 16) as usize];
            file.seek(SeekFrom::Start((*len - k) * 16))
                .and_then(|_| file.read_exact(&mut bytes))
                .and_then(|_| file.set_len((*len - k) * 16))
                .map_err(|e| Workspace::io_error(path, e))?;
            *len -= k;
            self.mem.extend(bytes.chunks_exact(16).map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes"))));
        }
        Ok(self.mem.last().copied())
    }
    /// Adds a pooled group and merges while the order is violated (sklearn's PAVA).
    #[inline]
    fn add(&mut self, w: u64, mean: f64, raw: &mut Compensated) -> Result<()> {
        if let Some(&t) = self.mem.last() {
            if unpack(t).1 <= mean && self.mem.len() < self.cap {
                self.mem.push(pack(w, mean));
                return Ok(());
            }
        }
        self.add_slow(w, mean, raw)
    }

    fn add_slow(&mut self, w: u64, mean: f64, raw: &mut Compensated) -> Result<()> {
        let (mut w, mut mean) = (w, mean);
        while let Some(t) = self.top()? {
            let (tw, tmean) = unpack(t);
            if tmean <= mean {
                break;
            }
            self.mem.pop();
            let total = tw + w;
            let (wa, wb, wf) = (tw as f64, w as f64, total as f64);
            let d = mean - tmean;
            raw.add(d * d * (wa * wb / wf));
            mean = tmean + d * (wb / wf);
            w = total;
        }
        self.push(pack(w, mean))
    }
}

impl Drop for PavaStack {
    fn drop(&mut self) {
        if let Some((file, path, _)) = self.spill.take() {
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The end of a d^X tie group: its start, size and doubled average rank.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ended {
    pub start: u64,
    pub count: u64,
    pub a: u64,
}

const SQUARES_CHUNK: usize = 4096;

/// Scan 1 over the records in (d^X, d^Y) order.
pub(super) struct Scan1 {
    rank: bool,
    nm: bool,
    pos: u64,
    open: bool,
    g_key: u64,
    g_start: u64,
    g_count: u64,
    g_mean: f64,
    g_m2: f64,
    first_key: u64,
    stack: PavaStack,
    raw: Compensated,
    norm: Compensated,
    squares: Vec<f64>,
    sxx: u128,
    low: Extent,
}

impl Scan1 {
    pub fn new(rank: bool, nm: bool, stack: PavaStack) -> Self {
        Scan1 {
            rank,
            nm,
            pos: 0,
            open: false,
            g_key: 0,
            g_start: 0,
            g_count: 0,
            g_mean: 0.0,
            g_m2: 0.0,
            first_key: 0,
            stack,
            raw: Compensated::default(),
            norm: Compensated::default(),
            squares: Vec::with_capacity(SQUARES_CHUNK),
            sxx: 0,
            low: Extent { min: f64::INFINITY, max: f64::NEG_INFINITY },
        }
    }

    /// Frees the PAVA stack (and removes its spill file) once the scan is finished.
    pub fn release_stack(&mut self) {
        self.stack = PavaStack::in_memory(Vec::new());
    }

    /// Takes the stack's allocation back (the in-memory path reuses it as sort scratch).
    fn take_store(&mut self) -> Vec<u128> {
        std::mem::replace(&mut self.stack, PavaStack::in_memory(Vec::new())).into_store()
    }

    /// The start of the group the last record belongs to.
    pub fn group_start(&self) -> u64 {
        self.g_start
    }

    /// Feeds the next record; returns the group that it ended, if any.
    #[inline]
    pub fn push(&mut self, rec: u128) -> Result<Option<Ended>> {
        let kx = (rec >> 64) as u64;
        let y = f64::from_bits(rec as u64);
        let mut ended = None;
        if !self.open || kx != self.g_key {
            if self.open {
                ended = Some(self.close()?);
            } else {
                self.first_key = kx;
            }
            self.open = true;
            self.g_key = kx;
            self.g_start = self.pos;
            self.g_count = 0;
            self.g_mean = 0.0;
            self.g_m2 = 0.0;
        }
        self.g_count += 1;
        if self.nm {
            if self.g_count == 1 {
                // Welford's first step, exactly: mean = y, m2 = 0.
                self.g_mean = y;
            } else {
                let d = y - self.g_mean;
                self.g_mean += d / self.g_count as f64;
                self.g_m2 += d * (y - self.g_mean);
            }
            self.squares.push(y * y);
            if self.squares.len() == SQUARES_CHUNK {
                self.flush_squares();
            }
        }
        self.low.min = self.low.min.min(y);
        self.low.max = self.low.max.max(y);
        self.pos += 1;
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

    fn close(&mut self) -> Result<Ended> {
        let (s, c) = (self.g_start, self.g_count);
        let a = 2 * s + c + 1;
        if self.rank {
            self.sxx += c as u128 * a as u128 * a as u128;
        }
        if self.nm {
            if self.g_m2 != 0.0 {
                // (Adding 0 to a compensated sum changes nothing.)
                self.raw.add(self.g_m2);
            }
            self.stack.add(c, self.g_mean, &mut self.raw)?;
        }
        Ok(Ended { start: s, count: c, a })
    }

    /// Ends the last group.
    pub fn finish(&mut self) -> Result<Option<Ended>> {
        self.flush_squares();
        if self.open {
            self.open = false;
            return self.close().map(Some);
        }
        Ok(None)
    }

    fn high(&self) -> Extent {
        Extent { min: f64::from_bits(self.first_key), max: f64::from_bits(self.g_key) }
    }
}

/// Payload of a scan-2 record: the final doubled rank, or (flag 1) the start of a d^X group
/// that was still open when its first records were written out; [`Scan2`] looks its size up.
#[inline]
pub(super) fn final_payload(a: u64) -> u128 {
    (a as u128) << 1
}
#[inline]
pub(super) fn open_payload(start: u64) -> u128 {
    ((start as u128) << 1) | 1
}
pub(super) const LOW: u128 = u64::MAX as u128;

/// Scan 2 over the records in (d^Y, payload) order.
#[derive(Default)]
pub(super) struct Scan2 {
    pos: u64,
    open: bool,
    g_key: u64,
    g_start: u64,
    g_count: u64,
    g_sum_a: u128,
    sxy: u128,
    syy: u128,
}

impl Scan2 {
    #[inline]
    pub fn push(&mut self, rec: u128, spans: &HashMap<u64, u64>) {
        let ky = (rec >> 64) as u64;
        let payload = rec as u64;
        let a = if payload & 1 == 1 {
            let s = payload >> 1;
            2 * s + spans[&s] + 1
        } else {
            payload >> 1
        };
        if !self.open || ky != self.g_key {
            if self.open {
                self.close();
            }
            self.open = true;
            self.g_key = ky;
            self.g_start = self.pos;
            self.g_count = 0;
            self.g_sum_a = 0;
        }
        self.g_count += 1;
        self.g_sum_a += a as u128;
        self.pos += 1;
    }
    fn close(&mut self) {
        let b = (2 * self.g_start + self.g_count + 1) as u128;
        self.sxy += b * self.g_sum_a;
        self.syy += self.g_count as u128 * b * b;
    }
    pub fn finish(&mut self) {
        if self.open {
            self.open = false;
            self.close();
        }
    }
}

/// The final statistics from the scans.
pub(super) fn stats(pairs: u64, scan1: &Scan1, scan2: Option<&Scan2>, path: OrderPath) -> OrderStats {
    let p = pairs as i128;
    let centre = p * (p + 1) * (p + 1); // P · mean², the doubled ranks' mean being P + 1
    OrderStats {
        pairs,
        high: scan1.high(),
        low: scan1.low,
        ranks: scan2.map(|s2| RankMoments {
            cxx: scan1.sxx as i128 - centre,
            cyy: s2.syy as i128 - centre,
            cxy: s2.sxy as i128 - centre,
        }),
        isotonic: scan1.nm.then(|| (scan1.raw.value(), scan1.norm.value())),
        path,
    }
}

/// Pairs of rows `rows`: Σ (n − 1 − i).
pub(super) fn pairs_in(n: usize, rows: Range<usize>) -> usize {
    rows.map(|i| n - 1 - i).sum()
}

/// Writes the records of the pairs (i, j > i) for the rows `rows` into `out`, row after row.
pub(super) fn fill(high: &Points, low: &Points, rows: Range<usize>, out: &mut [u128], block_rows: usize, ctl: &Control) -> Result<()> {
    let n = high.n();
    let block_rows = block_rows.max(1);
    let mut tasks: Vec<(Range<usize>, &mut [u128])> = Vec::new();
    let mut rest = out;
    let mut i = rows.start;
    while i < rows.end {
        let e = (i + block_rows).min(rows.end);
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(pairs_in(n, i..e));
        tasks.push((i..e, head));
        rest = tail;
        i = e;
    }
    tasks.into_par_iter().try_for_each(|(rows, out)| {
        ctl.check()?;
        let mut dx = vec![0.0; n];
        let mut dy = vec![0.0; n];
        let mut o = 0;
        for i in rows {
            distance_row(high, i, &mut dx);
            distance_row(low, i, &mut dy);
            write_records(&dx[i + 1..], &dy[i + 1..], &mut out[o..o + n - 1 - i]);
            o += n - 1 - i;
        }
        Ok(())
    })
}

/// The records `(bits(d^X) << 64) | bits(d^Y)` of one row's pairs.
#[inline]
pub(super) fn write_records(dx: &[f64], dy: &[f64], out: &mut [u128]) {
    for (slot, (&x, &y)) in out.iter_mut().zip(dx.iter().zip(dy)) {
        *slot = ((x.to_bits() as u128) << 64) | y.to_bits() as u128;
    }
}

/// Bytes the in-memory path holds: the records, the sort's scratch, and the bucketed path's
/// per-thread scratch.
pub fn in_memory_bytes(pairs: u64) -> u64 {
    pairs.saturating_mul(32).saturating_add(pair_buckets::scratch_bytes(pairs))
}

/// Sorts all pairs in memory and scans them.
pub fn in_memory(high: &Points, low: &Points, rank: bool, nm: bool, block_rows: usize, ctl: &Control) -> Result<OrderStats> {
    let n = high.n();
    let writer = Writer::new(high, low);
    let mut v = vec![0u128; n * (n - 1) / 2];
    let job = PairJob { high_extent: true, sums: false, records: Some((&mut v, &writer)), densities: None };
    let pass = pair_pass(high, &[low], job, block_rows, ctl)?;
    let (hx, lx) = (pass.high.expect("measured"), pass.lows[0].0);
    order_records(v, writer.finish(pass.record_starts), hx, lx, rank, nm, ctl)
}

/// The pair order of the records that [`pair_pass`] laid out, with both spaces' extents: the
/// bucketed path for ranks alone ([`pair_buckets`]), else (or when a bucket is too large) the
/// full sort.
pub(super) fn order_records(v: Vec<u128>, layout: Layout, high: Extent, low: Extent, rank: bool, nm: bool, ctl: &Control) -> Result<OrderStats> {
    if rank && !nm && v.len() >= pair_buckets::MIN_PAIRS {
        ctl.report(PHASE, 1, 2);
        let p = v.len() as u64;
        match pair_buckets::rank_sums(v, &layout, pair_buckets::chunk_limit(p), ctl)? {
            Ok(((sxx, sxy, syy), path)) => {
                ctl.report(PHASE, 2, 2);
                let (scan1, scan2) = (Scan1 { sxx, first_key: high.min.to_bits(), g_key: high.max.to_bits(), low, ..Scan1::new(true, false, PavaStack::in_memory(Vec::new())) }, Scan2 { sxy, syy, ..Default::default() });
                return Ok(stats(p, &scan1, Some(&scan2), path));
            }
            Err(v) => return sort_and_scan(v, rank, nm, ctl),
        }
    }
    sort_and_scan(v, rank, nm, ctl)
}

const PHASE: &str = "pair order";

/// Sorts the records of all pairs (in [`fill`]'s layout, already written) and scans them.
pub fn sort_and_scan(mut v: Vec<u128>, rank: bool, nm: bool, ctl: &Control) -> Result<OrderStats> {
    let p = v.len();
    let steps = if rank { 5 } else { 3 };
    ctl.report(PHASE, 1, steps);
    let mut buf = vec![0u128; p];
    radix::sort(&mut v, &mut buf);
    ctl.check()?;
    ctl.report(PHASE, 2, steps);
    let mut scan = Scan1::new(rank, nm, PavaStack::in_memory(buf));
    if !nm {
        // Ranks only: integer work on independent tie groups, done in parallel (exact sums,
        // so the same as the sequential scan).
        rank_scan_parallel(&mut v, &mut scan);
    }
    for k in 0..if nm { p } else { 0 } {
        let rec = v[k];
        if let Some(e) = scan.push(rec)? {
            if rank {
                patch(&mut v[e.start as usize..k], e.a);
            }
        }
        if rank {
            v[k] = rec << 64;
        }
        if k & 0xF_FFFF == 0 {
            ctl.check()?;
        }
    }
    if nm {
        if let Some(e) = scan.finish()? {
            if rank {
                patch(&mut v[e.start as usize..p], e.a);
            }
        }
    }
    ctl.report(PHASE, 3, steps);
    let scan2 = if rank {
        let mut buf = scan.take_store();
        buf.resize(p, 0);
        radix::sort(&mut v, &mut buf);
        ctl.check()?;
        ctl.report(PHASE, 4, steps);
        let s2 = scan2_parallel(&v);
        ctl.report(PHASE, 5, steps);
        Some(s2)
    } else {
        None
    };
    Ok(stats(p as u64, &scan, scan2.as_ref(), OrderPath::InMemory))
}

/// Chunks of `v` (sorted) that start and end on a change of the high 64 bits.
fn group_chunks(v: &[u128]) -> Vec<std::ops::Range<usize>> {
    let p = v.len();
    let pieces = (rayon::current_num_threads() * 8).max(1);
    let mut cuts = vec![0];
    for t in 1..pieces {
        let mut b = (p * t / pieces).max(*cuts.last().expect("a cut"));
        while b > 0 && b < p && (v[b] >> 64) == (v[b - 1] >> 64) {
            b += 1;
        }
        if b < p && b > *cuts.last().expect("a cut") {
            cuts.push(b);
        }
    }
    cuts.push(p);
    cuts.windows(2).map(|w| w[0]..w[1]).filter(|r| !r.is_empty()).collect()
}

/// Scan 1 without the isotonic fit: each d^X group's doubled rank `a = 2s + c + 1` becomes the
/// payload of its records, re-keyed by d^Y; Σ c·a², the extents and the group count go into `scan`.
fn rank_scan_parallel(v: &mut [u128], scan: &mut Scan1) {
    let p = v.len();
    if p == 0 {
        return;
    }
    let (first_key, last_key) = ((v[0] >> 64) as u64, (v[p - 1] >> 64) as u64);
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
    scan.first_key = first_key;
    scan.g_key = last_key;
    scan.pos = p as u64;
}

/// Rewrites each d^X tie group of `recs` (grouped by their high halves, whole groups only,
/// `start` the global position of `recs[0]`) as `(bits(d^Y) << 64) | payload(a)` with its
/// doubled average rank `a = 2s + c + 1`; calls `each` with every record's d^Y bits and
/// returns Σ c·a².
pub(super) fn rank_x_groups(recs: &mut [u128], start: u64, mut each: impl FnMut(u64)) -> u128 {
    let mut sxx = 0u128;
    let mut g = 0;
    while g < recs.len() {
        let key = recs[g] >> 64;
        let mut e = g + 1;
        while e < recs.len() && recs[e] >> 64 == key {
            e += 1;
        }
        let (s, c) = (start + g as u64, (e - g) as u64);
        let a = 2 * s + c + 1;
        sxx += weighted_square(c, a);
        let pay = final_payload(a);
        for r in &mut recs[g..e] {
            let y = *r as u64;
            each(y);
            *r = ((y as u128) << 64) | pay;
        }
        g = e;
    }
    sxx
}

/// Scan 2 over fully resolved payloads (the in-memory path), in parallel by d^Y groups.
fn scan2_parallel(v: &[u128]) -> Scan2 {
    let chunks = group_chunks(v);
    let parts: Vec<(u128, u128)> = chunks.into_par_iter().map(|r| scan2_groups(&v[r.clone()], r.start as u64)).collect();
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
    let (mut sxy, mut syy) = (0u128, 0u128);
    let mut g = 0;
    while g < recs.len() {
        let key = recs[g] >> 64;
        let mut e = g;
        let mut sum_a = 0u128;
        while e < recs.len() && recs[e] >> 64 == key {
            sum_a += ((recs[e] as u64) >> 1) as u128;
            e += 1;
        }
        let (s, c) = (start + g as u64, (e - g) as u64);
        let b = 2 * s + c + 1;
        // A group of one (the usual case) needs only 64×64-bit products.
        sxy += if c == 1 { b as u128 * (sum_a as u64) as u128 } else { b as u128 * sum_a };
        syy += weighted_square(c, b);
        g = e;
    }
    (sxy, syy)
}

/// `c · x²` exactly; one 64×64-bit product for a group of one.
#[inline]
pub(super) fn weighted_square(c: u64, x: u64) -> u128 {
    let sq = x as u128 * x as u128;
    if c == 1 { sq } else { c as u128 * sq }
}

/// Sets the payload of records whose high half is already d^Y.
#[inline]
fn patch(recs: &mut [u128], a: u64) {
    let p = final_payload(a);
    for r in recs {
        *r = (*r & !LOW) | p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny brute force: average ranks, Pearson of ranks, PAVA on pooled ties.
    fn brute(x: &[f64], y: &[f64]) -> (f64, f64) {
        fn avg_ranks(v: &[f64]) -> Vec<f64> {
            let mut o: Vec<usize> = (0..v.len()).collect();
            o.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
            let mut r = vec![0.0; v.len()];
            let mut i = 0;
            while i < o.len() {
                let mut j = i;
                while j + 1 < o.len() && v[o[j + 1]] == v[o[i]] {
                    j += 1;
                }
                for &t in &o[i..=j] {
                    r[t] = (i + j) as f64 / 2.0 + 1.0;
                }
                i = j + 1;
            }
            r
        }
        let (rx, ry) = (avg_ranks(x), avg_ranks(y));
        let m = (x.len() as f64 + 1.0) / 2.0;
        let c = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| (p - m) * (q - m)).sum::<f64>();
        let rho = c(&rx, &ry) / (c(&rx, &rx) * c(&ry, &ry)).sqrt();
        // PAVA with pooled ties.
        let mut o: Vec<usize> = (0..x.len()).collect();
        o.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
        let mut blocks: Vec<(f64, f64, Vec<usize>)> = Vec::new(); // (sum, weight, members)
        let mut i = 0;
        while i < o.len() {
            let mut j = i;
            while j + 1 < o.len() && x[o[j + 1]] == x[o[i]] {
                j += 1;
            }
            let members: Vec<usize> = o[i..=j].to_vec();
            let mut b = (members.iter().map(|&t| y[t]).sum::<f64>(), members.len() as f64, members);
            while let Some(t) = blocks.last() {
                if t.0 / t.1 > b.0 / b.1 {
                    let t = blocks.pop().unwrap();
                    b = (t.0 + b.0, t.1 + b.1, [t.2, b.2].concat());
                } else {
                    break;
                }
            }
            blocks.push(b);
            i = j + 1;
        }
        let mut raw = 0.0;
        for (s, w, m) in &blocks {
            for &t in m {
                raw += (y[t] - s / w).powi(2);
            }
        }
        let norm: f64 = y.iter().map(|v| v * v).sum();
        (rho, (raw / norm).sqrt())
    }

    #[test]
    fn matches_brute_force_on_tied_data() {
        let n = 40;
        let hx: Vec<f64> = (0..n * 2).map(|t| ((t * 7) % 5) as f64).collect();
        let lx: Vec<f64> = (0..n).map(|t| ((t * 3) % 4) as f64).collect();
        let high = Points::from_vec("h", n, 2, hx).unwrap();
        let low = Points::from_vec("l", n, 1, lx).unwrap();
        let got = in_memory(&high, &low, true, true, 3, &Control::default()).unwrap();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let (mut dx, mut dy) = (vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            distance_row(&high, i, &mut dx);
            distance_row(&low, i, &mut dy);
            x.extend_from_slice(&dx[i + 1..]);
            y.extend_from_slice(&dy[i + 1..]);
        }
        let (rho, nm) = brute(&x, &y);
        let (raw, norm) = got.isotonic.unwrap();
        assert!((got.ranks.unwrap().rho().unwrap() - rho).abs() < 1e-12, "{:?} {rho}", got.ranks);
        assert!(((raw / norm).sqrt() - nm).abs() < 1e-12);
    }
}
