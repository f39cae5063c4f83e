//! The tie-group walk: runs of equal keys in records sorted (or grouped) by their keys.
//!
//! Ties are exact: a tie group is a run of equal f64 bit patterns. A group that starts at
//! position s (0-based, over all pairs) and holds c records has the doubled average rank
//! `2s + c + 1` (ranks s + 1 … s + c, doubled to stay integral). Every scan, streamed or over a
//! slice, finds its groups with [`TieWalk`].

use std::ops::Range;

use super::record::key;

/// A tie group: its global start and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TieGroup {
    pub start: u64,
    pub count: u64,
}

impl TieGroup {
    /// The doubled average rank `2s + c + 1`.
    #[inline]
    pub fn rank(&self) -> u64 {
        2 * self.start + self.count + 1
    }

    /// The group's place in a slice that starts at global position `base`.
    #[inline]
    pub fn within(&self, base: u64) -> Range<usize> {
        let s = (self.start - base) as usize;
        s..s + self.count as usize
    }
}

/// Follows the tie groups of a stream of keys, one key at a time.
#[derive(Debug, Default, Clone)]
pub(super) struct TieWalk {
    /// Global position of the next key.
    pos: u64,
    open: bool,
    key: u64,
    start: u64,
}

impl TieWalk {
    /// A walk whose first key has global position `pos`.
    pub fn at(pos: u64) -> Self {
        TieWalk { pos, ..Default::default() }
    }

    /// Takes the next key; returns the group that it ended (when it starts a new one).
    #[inline]
    pub fn push(&mut self, key: u64) -> Option<TieGroup> {
        let mut ended = None;
        if !self.open || key != self.key {
            if self.open {
                ended = Some(self.current());
            }
            self.open = true;
            self.key = key;
            self.start = self.pos;
        }
        self.pos += 1;
        ended
    }

    /// Ends the last group.
    pub fn finish(&mut self) -> Option<TieGroup> {
        let open = std::mem::replace(&mut self.open, false);
        open.then(|| self.current())
    }

    /// The group of the last key, so far.
    #[inline]
    fn current(&self) -> TieGroup {
        TieGroup { start: self.start, count: self.pos - self.start }
    }

    /// The start of the group of the last key.
    #[inline]
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Records in the group of the last key so far (1 right after a new group starts).
    #[inline]
    pub fn count(&self) -> u64 {
        self.pos - self.start
    }
}

/// Calls `f` with each tie group of `recs` (grouped by their keys, whole groups only) and its
/// records, in order; `base` is the global position of `recs[0]`.
#[inline]
pub(super) fn each_group(recs: &mut [u128], base: u64, mut f: impl FnMut(TieGroup, &mut [u128])) {
    let mut walk = TieWalk::at(base);
    for k in 0..recs.len() {
        if let Some(g) = walk.push(key(recs[k])) {
            f(g, &mut recs[g.within(base)]);
        }
    }
    if let Some(g) = walk.finish() {
        f(g, &mut recs[g.within(base)]);
    }
}

/// Chunks of `v` (sorted) that start and end on a change of key, for parallel scans.
pub(super) fn group_chunks(v: &[u128]) -> Vec<Range<usize>> {
    let p = v.len();
    let pieces = (rayon::current_num_threads() * 8).max(1);
    let mut cuts = vec![0];
    for t in 1..pieces {
        let mut b = (p * t / pieces).max(*cuts.last().expect("a cut"));
        while b > 0 && b < p && key(v[b]) == key(v[b - 1]) {
            b += 1;
        }
        if b < p && b > *cuts.last().expect("a cut") {
            cuts.push(b);
        }
    }
    cuts.push(p);
    cuts.windows(2).map(|w| w[0]..w[1]).filter(|r| !r.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk's groups are the runs of equal keys, with their doubled average ranks.
    #[test]
    fn groups_are_the_runs_of_equal_keys() {
        let keys = [3u64, 3, 5, 7, 7, 7, 9];
        let mut recs: Vec<u128> = keys.iter().map(|&k| (k as u128) << 64).collect();
        let mut seen = Vec::new();
        each_group(&mut recs, 10, |g, members| seen.push((g, members.len(), g.rank())));
        let want = [(10, 2), (12, 1), (13, 3), (16, 1)];
        assert_eq!(seen.len(), want.len());
        for ((g, len, rank), (start, count)) in seen.into_iter().zip(want) {
            assert_eq!(g, TieGroup { start, count });
            assert_eq!(len as u64, count);
            assert_eq!(rank, 2 * start + count + 1);
        }
        let mut walk = TieWalk::default();
        assert_eq!(walk.finish(), None, "no keys, no group");
    }
}
