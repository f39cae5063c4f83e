//! [`Metric`]: how the original space's distances are computed — scipy's `cdist(X, X, metric)`
//! for the metrics users compare embeddings with, or distances given outright.
//!
//! Each metric is reproduced with scipy's formula and summation order (`docs/exactness.md` §1,
//! one section per metric), so the neighbours and ranks are scipy's, bit for bit. Projections
//! are always Euclidean: they are plots.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// The original space's distance: one of scipy's `cdist` metrics on coordinates, or
/// [`Metric::Precomputed`] (a distance matrix or a kNN graph given by the user).
///
/// ```
/// use faithful::Metric;
/// assert_eq!("cosine".parse::<Metric>()?, Metric::Cosine);
/// assert_eq!(Metric::minkowski(3.0)?.to_string(), "minkowski:p=3");
/// assert_eq!("manhattan".parse::<Metric>()?, Metric::Cityblock);
/// assert!(Metric::minkowski(0.5).is_err());
/// # Ok::<(), faithful::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum Metric {
    /// `sqrt(Σ (u_c − v_c)²)` (the default).
    #[default]
    Euclidean,
    /// `Σ (u_c − v_c)²` (ties differ from Euclidean's: the root can merge two sums).
    SqEuclidean,
    /// `1 − u·v / (‖u‖ ‖v‖)`, the quotient clipped to [−1, 1] (scipy's order).
    Cosine,
    /// Cosine of the rows minus their means (`u − mean(u)`, NumPy's pairwise mean).
    Correlation,
    /// `Σ |u_c − v_c|`.
    Cityblock,
    /// `max |u_c − v_c|`.
    Chebyshev,
    /// `(Σ |u_c − v_c|^p)^(1/p)`, p ≥ 1; p = 1, 2 and ∞ are served by cityblock, euclidean and
    /// chebyshev, as scipy does.
    Minkowski(f64),
    /// Distances given by the user: a distance matrix or a kNN graph, not coordinates.
    Precomputed,
}

/// The formula that computes a metric's distances (Minkowski's special p resolved).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kernel {
    Euclidean,
    SqEuclidean,
    /// Cosine on the rows (Cosine) or on the centred rows (Correlation).
    Cosine,
    Cityblock,
    Chebyshev,
    Minkowski(f64),
    Precomputed,
}

impl Metric {
    /// Minkowski's metric of order `p` (1 ≤ p ≤ ∞).
    pub fn minkowski(p: f64) -> Result<Metric> {
        if !(p >= 1.0) {
            return Err(Error::BadMetric {
                metric: format!("minkowski:p={p}"),
                reason: "p must be at least 1 (below 1 it is not a metric), or inf".into(),
            });
        }
        Ok(Metric::Minkowski(p))
    }

    /// The canonical name, scipy's (`euclidean`, `cosine`, `minkowski`, `precomputed`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Euclidean => "euclidean",
            Metric::SqEuclidean => "sqeuclidean",
            Metric::Cosine => "cosine",
            Metric::Correlation => "correlation",
            Metric::Cityblock => "cityblock",
            Metric::Chebyshev => "chebyshev",
            Metric::Minkowski(_) => "minkowski",
            Metric::Precomputed => "precomputed",
        }
    }

    /// Minkowski's p, for [`Metric::Minkowski`].
    pub fn p(&self) -> Option<f64> {
        match self {
            Metric::Minkowski(p) => Some(*p),
            _ => None,
        }
    }

    /// Whether the metric is computed from coordinates (every metric but `Precomputed`).
    pub fn on_coordinates(&self) -> bool {
        *self != Metric::Precomputed
    }

    /// The formula that serves it: scipy's `cdist_minkowski` computes p = 1, 2 and ∞ with the
    /// cityblock, euclidean and chebyshev kernels, so the bits are theirs.
    pub(crate) fn kernel(&self) -> Kernel {
        match *self {
            Metric::Euclidean => Kernel::Euclidean,
            Metric::SqEuclidean => Kernel::SqEuclidean,
            Metric::Cosine | Metric::Correlation => Kernel::Cosine,
            Metric::Cityblock => Kernel::Cityblock,
            Metric::Chebyshev => Kernel::Chebyshev,
            Metric::Minkowski(1.0) => Kernel::Cityblock,
            Metric::Minkowski(2.0) => Kernel::Euclidean,
            Metric::Minkowski(f64::INFINITY) => Kernel::Chebyshev,
            Metric::Minkowski(p) => Kernel::Minkowski(p),
            Metric::Precomputed => Kernel::Precomputed,
        }
    }

    /// Every name [`Metric::from_str`] accepts, for messages and `--help`.
    pub const NAMES: &'static str = "euclidean, sqeuclidean, cosine, correlation, cityblock, chebyshev, minkowski";
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Metric::Minkowski(p) => write!(f, "minkowski:p={p}"),
            m => f.write_str(m.name()),
        }
    }
}

impl FromStr for Metric {
    type Err = Error;
    /// scipy's names (case-insensitive) and scikit-learn's aliases (`l2`, `l1`, `manhattan`);
    /// `minkowski` alone is p = 2, `minkowski:p=3` sets p (as [`Metric`]'s `Display` writes it).
    fn from_str(s: &str) -> Result<Metric> {
        let lower = s.trim().to_ascii_lowercase();
        if let Some(p) = lower.strip_prefix("minkowski:p=") {
            let p: f64 = p.parse().map_err(|_| Error::BadMetric {
                metric: s.into(),
                reason: "p must be a number (minkowski:p=3)".into(),
            })?;
            return Metric::minkowski(p);
        }
        Ok(match lower.as_str() {
            "euclidean" | "l2" => Metric::Euclidean,
            "sqeuclidean" => Metric::SqEuclidean,
            "cosine" => Metric::Cosine,
            "correlation" => Metric::Correlation,
            "cityblock" | "manhattan" | "l1" => Metric::Cityblock,
            "chebyshev" => Metric::Chebyshev,
            "minkowski" => Metric::Minkowski(2.0),
            "precomputed" => Metric::Precomputed,
            _ => {
                return Err(Error::BadMetric {
                    metric: s.into(),
                    reason: format!("unknown metric (known: {}, precomputed)", Metric::NAMES),
                });
            }
        })
    }
}

impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_minkowski_takes_scipys_kernels() {
        for m in [
            Metric::Euclidean,
            Metric::SqEuclidean,
            Metric::Cosine,
            Metric::Correlation,
            Metric::Cityblock,
            Metric::Chebyshev,
            Metric::Minkowski(3.5),
            Metric::Minkowski(f64::INFINITY),
            Metric::Precomputed,
        ] {
            assert_eq!(m.to_string().parse::<Metric>().unwrap(), m, "{m}");
        }
        assert_eq!(Metric::Minkowski(1.0).kernel(), Kernel::Cityblock);
        assert_eq!(Metric::Minkowski(2.0).kernel(), Kernel::Euclidean);
        assert_eq!(Metric::Minkowski(f64::INFINITY).kernel(), Kernel::Chebyshev);
        assert_eq!(Metric::Minkowski(3.0).kernel(), Kernel::Minkowski(3.0));
        assert_eq!(Metric::Correlation.kernel(), Kernel::Cosine);
        for bad in ["minkowski:p=0.5", "minkowski:p=nan", "minkowski:p=x", "hamming", ""] {
            let e = bad.parse::<Metric>().unwrap_err();
            assert!(matches!(e, Error::BadMetric { .. }), "{bad}: {e}");
        }
        assert_eq!(
            "jaccard".parse::<Metric>().unwrap_err().to_string(),
            "invalid metric 'jaccard': unknown metric (known: euclidean, sqeuclidean, cosine, correlation, cityblock, chebyshev, minkowski, precomputed)"
        );
    }
}
