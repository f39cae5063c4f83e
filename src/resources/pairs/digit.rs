//! [`Digit`]: a monotone map from a distance's bits to one of `2^bits` buckets of about equal
//! depth, placed from a sample. The bucketed pair order groups records by these digits.

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
    pub fn range(&self, d: usize) -> Option<(u64, u32)> {
        let (c0, c1) = (self.first[d] as usize, self.first[d + 1] as usize);
        (c0 > 0 && c1 < CELLS && c1 > c0).then(|| {
            let width = (c1 - c0).next_power_of_two().trailing_zeros();
            (self.lo + ((c0 as u64) << self.shift), self.shift + width)
        })
    }

    /// `2^bits` buckets from `sample` (bit patterns of distances).
    pub fn from_sample(mut sample: Vec<u64>, bits: u32) -> Digit {
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

#[cfg(test)]
mod tests {
    use super::*;

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
