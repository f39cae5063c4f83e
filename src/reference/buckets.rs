//! Equal-width buckets over a range of distance bit patterns (for non-negative f64 they order
//! like the values), shared by rank placement and the row order's bucket sort.

/// Buckets of `lo..=hi`: bits `b` fall in bucket `(b - lo) >> shift`, where `shift` drops the
/// range's significant bits beyond `bits`, so there are at most 2^`bits` buckets (and at least
/// 2^(`bits` - 1) when the range is that wide).
#[derive(Debug, Clone, Copy)]
pub struct BitBuckets {
    pub lo: u64,
    pub shift: u32,
}

impl BitBuckets {
    /// The buckets of `lo..=hi` (`lo ≤ hi`), at most 2^`bits`.
    pub fn new(lo: u64, hi: u64, bits: u32) -> Self {
        BitBuckets { lo, shift: (u64::BITS - (hi - lo).leading_zeros()).saturating_sub(bits) }
    }
    /// The bucket of bits `b ≥ lo`.
    #[inline(always)]
    pub fn of(&self, b: u64) -> usize {
        ((b - self.lo) >> self.shift) as usize
    }
}
