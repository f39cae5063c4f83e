//! A parallel MSD radix sort of 128-bit keys, for the pair order.
//!
//! Records are `u128`s compared as integers (the pair order packs two distances' IEEE bit
//! patterns, which for finite non-negative f64 order like the values). Each level finds the
//! highest bit in which the keys of a bucket differ and distributes on the bits below it (11
//! at most, fewer for small buckets), so equal prefixes (tie-heavy data) cost nothing and a
//! bucket of identical keys is done at once. Levels alternate between the array and the
//! scratch buffer, so no level copies back. The sorted output is the unique ascending
//! arrangement of the keys, whatever the thread count: every consumer sees the same sequence.

use rayon::prelude::*;

const MAX_BITS: u32 = 11;
/// Buckets up to this size are sorted by insertion.
const TINY: usize = 24;
/// Buckets up to this size are sorted by comparison.
const SMALL: usize = 64;
/// Buckets from this size up are distributed with several threads.
const PARALLEL: usize = 1 << 17;

/// Sorts `v` ascending; `buf` is scratch of the same length.
pub fn sort(v: &mut [u128], buf: &mut [u128]) {
    assert_eq!(v.len(), buf.len());
    sort_in_place(v, buf);
}

/// The highest bit in which the keys differ, or `None` when all are equal.
fn highest_difference(v: &[u128]) -> Option<u32> {
    let first = v[0];
    let diff = if v.len() >= PARALLEL {
        v.par_chunks(1 << 14).map(|c| c.iter().fold(0u128, |a, &x| a | (x ^ first))).reduce(|| 0, |a, b| a | b)
    } else {
        v.iter().fold(0u128, |a, &x| a | (x ^ first))
    };
    (diff != 0).then(|| 127 - diff.leading_zeros())
}

fn insertion(v: &mut [u128]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

fn small_sort(v: &mut [u128]) {
    if v.len() <= TINY {
        insertion(v);
    } else {
        v.sort_unstable();
    }
}

/// A raw pointer that may cross threads: each thread writes disjoint positions.
#[derive(Clone, Copy)]
pub(super) struct SendPtr(pub(super) *mut u128);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

/// Sorts `v` (result in `v`), `buf` scratch.
fn sort_in_place(v: &mut [u128], buf: &mut [u128]) {
    if v.len() <= SMALL {
        small_sort(v);
        return;
    }
    let Some(top) = highest_difference(v) else { return };
    let starts = scatter(v, buf, top);
    for_buckets(buf, v, &starts, sort_into);
}

/// Sorts the keys of `src` into `dst` (`src` is clobbered).
fn sort_into(src: &mut [u128], dst: &mut [u128]) {
    if src.len() <= SMALL {
        dst.copy_from_slice(src);
        small_sort(dst);
        return;
    }
    let Some(top) = highest_difference(src) else {
        dst.copy_from_slice(src);
        return;
    };
    let starts = scatter(src, dst, top);
    for_buckets(dst, src, &starts, sort_in_place);
}

/// Runs `f` on each bucket (as slices of `a` and `b`), in parallel when the range is large.
fn for_buckets(a: &mut [u128], b: &mut [u128], starts: &[usize], f: impl Fn(&mut [u128], &mut [u128]) + Sync) {
    let total = a.len();
    let mut parts: Vec<(&mut [u128], &mut [u128])> = Vec::new();
    let (mut ra, mut rb) = (a, b);
    for w in starts.windows(2) {
        let len = w[1] - w[0];
        let (ha, ta) = std::mem::take(&mut ra).split_at_mut(len);
        let (hb, tb) = std::mem::take(&mut rb).split_at_mut(len);
        if len > 0 {
            parts.push((ha, hb));
        }
        ra = ta;
        rb = tb;
    }
    if total >= PARALLEL {
        parts.into_par_iter().for_each(|(a, b)| f(a, b));
    } else {
        for (a, b) in parts {
            f(a, b);
        }
    }
}

/// Distributes `src` into `dst` by the digit below bit `top`; returns the bucket starts.
fn scatter(src: &[u128], dst: &mut [u128], top: u32) -> Vec<usize> {
    let len = src.len();
    let bits = if len >= 1 << 14 {
        MAX_BITS
    } else {
        (usize::BITS - len.leading_zeros()).saturating_sub(3).clamp(3, MAX_BITS)
    };
    let bits = bits.min(top + 1);
    let shift = top + 1 - bits;
    let buckets = 1usize << bits;
    let mask = (buckets - 1) as u128;
    let digit = move |x: u128| ((x >> shift) & mask) as usize;
    let mut starts = vec![0usize; buckets + 1];
    if len >= PARALLEL {
        let chunk = len.div_ceil(rayon::current_num_threads().max(1) * 4).max(1 << 14);
        let hists: Vec<Vec<usize>> = src
            .par_chunks(chunk)
            .map(|c| {
                let mut h = vec![0usize; buckets];
                for &x in c {
                    h[digit(x)] += 1;
                }
                h
            })
            .collect();
        let mut offsets = vec![vec![0usize; buckets]; hists.len()];
        let mut pos = 0;
        for b in 0..buckets {
            starts[b] = pos;
            for (c, h) in hists.iter().enumerate() {
                offsets[c][b] = pos;
                pos += h[b];
            }
        }
        starts[buckets] = pos;
        let out = SendPtr(dst.as_mut_ptr());
        src.par_chunks(chunk).zip(offsets.into_par_iter()).for_each(|(c, mut off)| {
            let out = out;
            for &x in c {
                let d = digit(x);
                // SAFETY: the offsets give every (chunk, bucket) a disjoint range of `dst`,
                // exactly as long as the chunk's count in that bucket.
                unsafe { *out.0.add(off[d]) = x };
                off[d] += 1;
            }
        });
    } else {
        let mut counts = vec![0usize; buckets];
        for &x in src {
            counts[digit(x)] += 1;
        }
        let mut pos = 0;
        for b in 0..buckets {
            starts[b] = pos;
            pos += counts[b];
        }
        starts[buckets] = pos;
        let mut next: Vec<usize> = starts[..buckets].to_vec();
        for &x in src {
            let d = digit(x);
            dst[next[d]] = x;
            next[d] += 1;
        }
    }
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(mut v: Vec<u128>) {
        let mut want = v.clone();
        want.sort_unstable();
        let mut buf = vec![0; v.len()];
        sort(&mut v, &mut buf);
        assert_eq!(v, want);
    }

    #[test]
    fn sorts_random_and_tied_keys() {
        let mut rng = crate::splitmix::SplitMix64(0x1234_5678_9abc_def0u64);
        let mut next = move || rng.next_u64();
        check((0..300_000).map(|_| ((next() as u128) << 64) | next() as u128).collect());
        check((0..300_000).map(|_| (((next() % 5) as u128) << 64) | (next() % 3) as u128).collect());
        check((0..1000).map(|_| 7u128 << 70).collect());
        check(
            (0..5000)
                .map(|_| (((1.0f64 + (next() % 100) as f64).sqrt().to_bits() as u128) << 64) | (next() >> 40) as u128)
                .collect(),
        );
        check((0..3000).map(|_| (next() % 7) as u128).collect());
        check((0..200).map(|_| (next() % 4) as u128 + (1u128 << 127)).collect());
        check(vec![]);
        check(vec![3]);
    }
}
