//! [`Extent`]: the smallest and largest pair distance of a space.

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
    pub(crate) fn of(v: &[f64]) -> Extent {
        v.iter().fold(Extent::EMPTY, |e, &d| Extent { min: e.min.min(d), max: e.max.max(d) })
    }
    /// Of a whole distance row `d(i, ·)` without the diagonal.
    pub(crate) fn of_row(d: &[f64], i: usize) -> Extent {
        Extent::of(&d[..i]).join(Extent::of(&d[i + 1..]))
    }
}
