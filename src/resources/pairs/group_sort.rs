//! Grouping a cache-sized bucket of records by their keys: counting passes on the bits below
//! the bucket's digit, finished by insertion sort (or the radix sort when the keys' range is
//! unknown). The order within a tie group is left open.

use super::super::radix;
use super::record::key;

/// Largest run that insertion sort finishes.
const INSERTION: usize = 32;

/// Orders `v` by the records' high halves (the distance of the bucket's space) so that equal
/// distances are adjacent; the order within a group is left open. Returns whether the result
/// is in `buf` (as long as `v`) rather than `v`. `range` bounds the high keys when known:
/// counting passes on the bits below the bucket's digit then leave runs of a few keys.
pub(super) fn group_sort(v: &mut [u128], buf: &mut [u128], range: Option<(u64, u32)>, counts: &mut Vec<u32>) -> bool {
    let m = v.len();
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
    let sub = |r: u128| ((key(r) - base) >> sub_shift) as usize;
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
        out.sort_unstable_by_key(|&r| key(r));
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
        let k = key(x);
        let mut j = i;
        while j > 0 && key(v[j - 1]) > k {
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
