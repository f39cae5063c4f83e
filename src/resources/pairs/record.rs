//! The pair order's records: one u128 per pair i < j, and how their halves are read and
//! rewritten between the scans.
//!
//! A record starts as `(bits(d^X) << 64) | bits(d^Y)`. Distances are finite and ≥ 0, so the
//! records sort like `(d^X, d^Y)` and equal keys are equal f64 bit patterns. Scan 1 rewrites
//! each as `(bits(d^Y) << 64) | payload`, the payload being the doubled average rank a of its
//! d^X tie group ([`final_payload`]) or, on the external path, the start of a group still open
//! when the record was written out ([`open_payload`]).

use std::ops::Range;

use rayon::prelude::*;

use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row;

/// The sort key of a record: its high half (d^X's bits, or d^Y's after the rewrite).
#[inline]
pub(super) fn key(rec: u128) -> u64 {
    (rec >> 64) as u64
}

/// The low half: d^Y's bits, or the payload after the rewrite.
#[inline]
pub(super) fn low_half(rec: u128) -> u64 {
    rec as u64
}

/// The record of one pair.
#[inline]
fn record(dx: f64, dy: f64) -> u128 {
    ((dx.to_bits() as u128) << 64) | dy.to_bits() as u128
}

/// The records `(bits(d^X) << 64) | bits(d^Y)` of one row's pairs.
#[inline]
pub(super) fn write_records(dx: &[f64], dy: &[f64], out: &mut [u128]) {
    for (slot, (&x, &y)) in out.iter_mut().zip(dx.iter().zip(dy)) {
        *slot = record(x, y);
    }
}

/// Payload of a scan-2 record: the final doubled rank, or (flag 1) the start of a d^X group
/// that was still open when its first records were written out; scan 2 looks its size up.
#[inline]
pub(crate) fn final_payload(a: u64) -> u128 {
    (a as u128) << 1
}
#[inline]
pub(crate) fn open_payload(start: u64) -> u128 {
    ((start as u128) << 1) | 1
}
/// The payload bits of a rewritten record.
pub(crate) const LOW: u128 = u64::MAX as u128;

/// The doubled rank a of a rewritten record whose payload is final.
#[inline]
pub(super) fn final_rank(rec: u128) -> u64 {
    low_half(rec) >> 1
}

/// Scan 1's rewrite: d^Y's bits become the key, `payload` the low half.
#[inline]
pub(super) fn by_y(rec: u128, payload: u128) -> u128 {
    (rec << 64) | payload
}

/// Sets the payload of records already rewritten by [`by_y`].
#[inline]
pub(super) fn set_payload(recs: &mut [u128], a: u64) {
    let p = final_payload(a);
    for r in recs {
        *r = (*r & !LOW) | p;
    }
}

/// Pairs of rows `rows`: Σ (n − 1 − i).
pub(super) fn pairs_in(n: usize, rows: Range<usize>) -> usize {
    rows.map(|i| n - 1 - i).sum()
}

/// Writes the records of the pairs (i, j > i) for the rows `rows` into `out`, row after row.
pub(crate) fn fill(
    high: &Points,
    low: &Points,
    rows: Range<usize>,
    out: &mut [u128],
    block_rows: usize,
    ctl: &Control,
) -> Result<()> {
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
