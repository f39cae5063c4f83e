//! [`Extent`]: the smallest and largest pair distance of a space.

use multiversion::multiversion;

/// Smallest and largest distance over the pairs i < j of one space.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Extent {
    pub min: f64,
    pub max: f64,
}

impl Extent {
    pub(crate) const EMPTY: Extent = Extent { min: f64::INFINITY, max: f64::NEG_INFINITY };
    pub(crate) fn join(self, o: Extent) -> Extent {
        Extent { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
    /// Of the distances `v` (NaN ignored, as `f64::min` does). Eight lanes at a time: min and max
    /// are exact, so any order gives the same extent (distances are never −0: a root of a sum
    /// of squares is +0 at least).
    pub(crate) fn of(v: &[f64]) -> Extent {
        extent_of(v)
    }
    /// Of the distances whose sums of squares are `v` (`squared_row_from`): the roots of the
    /// sums' extent, the same bits as [`Extent::of`] of the roots (a correctly rounded root is
    /// non-decreasing).
    pub(crate) fn of_squares(v: &[f64]) -> Extent {
        if v.is_empty() {
            return Extent::EMPTY;
        }
        let e = Extent::of(v);
        Extent { min: e.min.sqrt(), max: e.max.sqrt() }
    }
    /// Of a whole distance row `d(i, ·)` without the diagonal.
    pub(crate) fn of_row(d: &[f64], i: usize) -> Extent {
        Extent::of(&d[..i]).join(Extent::of(&d[i + 1..]))
    }
}

/// Thirty-two lanes (four independent chains of eight); `if v < lo { v } else { lo }` ignores a
/// NaN `v` as `f64::min` does and is one vector min on x86, without `f64::min`'s NaN fix-up.
#[multiversion(targets("x86_64+avx512f", "x86_64+avx2"))]
fn extent_of(v: &[f64]) -> Extent {
    const L: usize = 32;
    let (mut lo, mut hi) = ([f64::INFINITY; L], [f64::NEG_INFINITY; L]);
    let chunks = v.chunks_exact(L);
    let rest = chunks.remainder();
    for ch in chunks {
        for j in 0..L {
            let d = ch[j];
            lo[j] = if d < lo[j] { d } else { lo[j] };
            hi[j] = if d > hi[j] { d } else { hi[j] };
        }
    }
    let lanes = (0..L).fold(Extent::EMPTY, |e, j| e.join(Extent { min: lo[j], max: hi[j] }));
    rest.iter().fold(lanes, |e, &d| e.join(Extent { min: d, max: d }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_give_the_sequential_extent() {
        for n in [0usize, 1, 7, 8, 9, 17, 100, 1001] {
            let mut v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 * 0.25).collect();
            if n > 3 {
                v[3] = f64::NAN;
            }
            let want = v.iter().fold(Extent::EMPTY, |e, &d| Extent { min: e.min.min(d), max: e.max.max(d) });
            assert_eq!(Extent::of(&v), want, "n = {n}");
        }
    }

    /// The extent of roots is the roots of the sums' extent, on sums that round to equal roots.
    #[test]
    fn the_roots_of_the_extent_are_the_extent_of_the_roots() {
        for n in [1usize, 2, 7, 33, 1000] {
            let v: Vec<f64> = (0..n)
                .map(|i| match i % 5 {
                    0 => 0.0,
                    1 => f64::from_bits(4.0f64.to_bits() + (i as u64 % 7)),
                    2 => 1e-300 * i as f64,
                    3 => 1e300 * i as f64,
                    _ => ((i * 7919) % 1013) as f64 * 0.37,
                })
                .collect();
            let roots: Vec<f64> = v.iter().map(|s| s.sqrt()).collect();
            assert_eq!(Extent::of_squares(&v), Extent::of(&roots), "n = {n}");
        }
        assert_eq!(Extent::of_squares(&[]), Extent::EMPTY);
    }
}
