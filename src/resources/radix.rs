//! A parallel MSD radix sort of 128-bit keys, for the pair order.
//!
//! Records are `u128`s compared as integers (the pair order packs two distances' IEEE bit
//! patterns, which for finite non-negative f64 order like the values). Each level finds the
//! highest bit in which the keys of a bucket differ and distributes on the 11 bits below it,
//! so equal prefixes (tie-heavy data) cost nothing and a bucket of identical keys is done at
//! once. The sorted output is the unique ascending arrangement of the keys, whatever the
//! thread count: every consumer sees the same sequence.

use rayon::prelude::*;

const BITS: u32 = 11;
const BUCKETS: usize = 1 << BITS;
const MASK: u128 = (BUCKETS - 1) as u128;
/// Buckets up to this size are sorted by comparison.
const SMALL: usize = 192;
/// Buckets from this size up are distributed with several threads.
const PARALLEL: usize = 1 << 17;

/// Sorts `v` ascending; `buf` is scratch of the same length.
pub fn sort(v: &mut [u128], buf: &mut [u128]) {
    assert_eq!(v.len(), buf.len());
    sort_rec(v, buf);
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

#[inline(always)]
fn digit(x: u128, shift: u32) -> usize {
    ((x >> shift) & MASK) as usize
}

/// A raw pointer that may cross threads: each thread writes disjoint positions.
#[derive(Clone, Copy)]
struct SendPtr(*mut u128);
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

fn sort_rec(v: &mut [u128], buf: &mut [u128]) {
    if v.len() <= SMALL {
        v.sort_unstable();
        return;
    }
    let Some(top) = highest_difference(v) else { return };
    let shift = (top + 1).saturating_sub(BITS);
    let mut starts = vec![0usize; BUCKETS + 1];
    if v.len() >= PARALLEL {
        let chunk = v.len().div_ceil(rayon::current_num_threads().max(1) * 4).max(1 << 14);
        let hists: Vec<Vec<usize>> = v
            .par_chunks(chunk)
            .map(|c| {
                let mut h = vec![0usize; BUCKETS];
                for &x in c {
                    h[digit(x, shift)] += 1;
                }
                h
            })
            .collect();
        // Offsets per chunk and bucket: bucket-major, chunk order within a bucket.
        let mut offsets = vec![vec![0usize; BUCKETS]; hists.len()];
        let mut pos = 0;
        for b in 0..BUCKETS {
            starts[b] = pos;
            for (c, h) in hists.iter().enumerate() {
                offsets[c][b] = pos;
                pos += h[b];
            }
        }
        starts[BUCKETS] = pos;
        let out = SendPtr(buf.as_mut_ptr());
        v.par_chunks(chunk).zip(offsets.into_par_iter()).for_each(|(c, mut off)| {
            let out = out;
            for &x in c {
                let d = digit(x, shift);
                // SAFETY: the offsets give every (chunk, bucket) a disjoint range of `buf`,
                // exactly as long as the chunk's count in that bucket.
                unsafe { *out.0.add(off[d]) = x };
                off[d] += 1;
            }
        });
        v.par_chunks_mut(1 << 16).zip(buf.par_chunks(1 << 16)).for_each(|(a, b)| a.copy_from_slice(b));
    } else {
        let mut counts = [0usize; BUCKETS];
        for &x in v.iter() {
            counts[digit(x, shift)] += 1;
        }
        let mut pos = 0;
        for b in 0..BUCKETS {
            starts[b] = pos;
            pos += counts[b];
        }
        starts[BUCKETS] = pos;
        let mut next: Vec<usize> = starts[..BUCKETS].to_vec();
        for &x in v.iter() {
            let d = digit(x, shift);
            buf[next[d]] = x;
            next[d] += 1;
        }
        v.copy_from_slice(buf);
    }
    // Recurse into the buckets, in parallel when they are large.
    let mut parts: Vec<(&mut [u128], &mut [u128])> = Vec::new();
    let (mut rv, mut rb) = (v, buf);
    for b in 0..BUCKETS {
        let len = starts[b + 1] - starts[b];
        let (hv, tv) = std::mem::take(&mut rv).split_at_mut(len);
        let (hb, tb) = std::mem::take(&mut rb).split_at_mut(len);
        if len > 1 {
            parts.push((hv, hb));
        }
        rv = tv;
        rb = tb;
    }
    if starts[BUCKETS] >= PARALLEL {
        parts.into_par_iter().for_each(|(a, b)| sort_rec(a, b));
    } else {
        for (a, b) in parts {
            sort_rec(a, b);
        }
    }
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
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        check((0..300_000).map(|_| ((next() as u128) << 64) | next() as u128).collect());
        check((0..300_000).map(|_| (((next() % 5) as u128) << 64) | (next() % 3) as u128).collect());
        check((0..1000).map(|_| 7u128 << 70).collect());
        check((0..5000).map(|_| (((1.0f64 + (next() % 100) as f64).sqrt().to_bits() as u128) << 64) | (next() >> 40) as u128).collect());
        check(vec![]);
        check(vec![3]);
    }
}
