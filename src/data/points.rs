//! [`Points`]: a validated n×D point set in f64, with the metric of its distances; or the
//! original space given as a distance matrix or a kNN graph.

use std::sync::Arc;

use ndarray::ArrayView2;

use super::distances::DistanceMatrix;
use super::graph::KnnGraph;
use super::metric::{Kernel, Metric};
use crate::error::{Error, Result};
use crate::sum::pairwise_sum;

use super::bounds::MAX_ABS;

/// A validated n×D point set (n ≥ 2, D ≥ 1, finite), stored row-major and column-major in f64,
/// with the [`Metric`] of its distances (Euclidean unless [`Points::with_metric`] sets another).
///
/// f32 input is widened exactly. The column-major copy feeds the distance-row kernel, which
/// vectorises across points while keeping each sum in coordinate order.
///
/// The original space may also be given without coordinates: as its distance matrix
/// ([`Points::from_distances`]) or as its kNN graph ([`Points::from_knn_graph`]); then
/// [`Points::dim`] is 0 and the measures that need what is missing are refused by name.
///
/// ```
/// use faithful::{Error, Points};
/// let p = Points::from_vec("xy", 3, 2, vec![0., 0., 1., 0., 0., 2.])?;
/// assert_eq!((p.n(), p.dim(), p.name()), (3, 2, "xy"));
/// assert_eq!(p.row(2), [0., 2.]);
/// assert_eq!(p.col(1), [0., 0., 2.]);
/// let err = Points::from_vec("xy", 2, 1, vec![0., f64::NAN]).unwrap_err();
/// assert!(matches!(err, Error::NonFinite { row: 1, col: 0, .. }), "{err}");
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Points {
    name: String,
    n: usize,
    dim: usize,
    rows: Vec<f64>,
    cols: Vec<f64>,
    metric: Metric,
    /// What the metric's kernel needs besides the coordinates (norms, centred rows).
    prep: Option<Arc<Prepared>>,
    source: Source,
}

/// Where the original space's distances come from.
#[derive(Debug, Clone)]
enum Source {
    /// The coordinates, under the metric.
    Coordinates,
    /// A distance matrix given by the user.
    Distances(Arc<DistanceMatrix>),
    /// A kNN graph given by the user (no other distances).
    Graph(Arc<KnnGraph>),
}

/// Per-point data a metric's kernel reads besides the coordinates, computed once.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// Cosine and correlation: `sqrt(Σ_c x_c²)` of each (centred) row, in coordinate order.
    pub norms: Vec<f64>,
    /// Correlation: the centred rows `x − mean(x)`, row-major and column-major.
    pub centred: Option<(Vec<f64>, Vec<f64>)>,
}

impl Points {
    /// Validates `n * dim` row-major values.
    pub fn from_vec(name: impl Into<String>, n: usize, dim: usize, rows: Vec<f64>) -> Result<Self> {
        let name = name.into();
        if n == 0 {
            return Err(Error::Empty { name });
        }
        if n < 2 {
            return Err(Error::TooFewPoints { name, n });
        }
        if dim == 0 {
            return Err(Error::NoFeatures { name });
        }
        assert_eq!(rows.len(), n * dim, "from_vec: buffer length must be n*dim");
        for (idx, &value) in rows.iter().enumerate() {
            let (row, col) = (idx / dim, idx % dim);
            if !value.is_finite() {
                return Err(Error::NonFinite { name, row, col, value });
            }
            if value.abs() >= MAX_ABS {
                return Err(Error::TooLarge { name, row, col, value });
            }
        }
        let mut cols = Vec::new();
        let bytes = (n * dim * 8) as u64;
        cols.try_reserve_exact(n * dim).map_err(|_| Error::PointsMemory { name: name.clone(), bytes })?;
        cols.resize(n * dim, 0.0);
        for i in 0..n {
            for c in 0..dim {
                cols[c * n + i] = rows[i * dim + c];
            }
        }
        Ok(Points { name, n, dim, rows, cols, metric: Metric::Euclidean, prep: None, source: Source::Coordinates })
    }

    /// The same points under `metric` (scipy's `cdist` metrics; `docs/exactness.md` §1).
    ///
    /// Under cosine a zero vector, and under correlation a constant row, has no distance
    /// (scipy gives NaN): it is an [`Error::MetricUndefined`] naming the row, as is a norm
    /// whose products would underflow to 0 or overflow, or a Minkowski p whose powers of the
    /// coordinates' differences would overflow.
    ///
    /// ```
    /// use faithful::{Error, Metric, Points};
    /// let p = Points::from_vec("x", 3, 2, vec![1., 0., 0., 2., 3., 3.])?.with_metric(Metric::Cosine)?;
    /// assert_eq!(p.metric(), Metric::Cosine);
    /// let zero = Points::from_vec("x", 2, 2, vec![1., 0., 0., 0.])?.with_metric(Metric::Cosine);
    /// assert!(matches!(zero, Err(Error::MetricUndefined { row: 1, .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn with_metric(self, metric: Metric) -> Result<Self> {
        self.metric_allowed(metric)?;
        if metric == Metric::Correlation {
            // The centred rows, by row and by column: refused, not aborted, when memory cannot
            // hold them beside the coordinates.
            let (len, bytes) = (self.n * self.dim, (2 * self.n * self.dim * 8) as u64);
            let mut probe: Vec<f64> = Vec::new();
            probe.try_reserve_exact(2 * len).map_err(|_| Error::PointsMemory { name: self.name.clone(), bytes })?;
        }
        let p = self.apply_metric(metric);
        p.check_metric()?;
        Ok(p)
    }

    /// Whether `metric` can be set on these points: they hold coordinates, the metric is
    /// computed from them, and Minkowski's p is at least 1.
    pub(crate) fn metric_allowed(&self, metric: Metric) -> Result<()> {
        if !matches!(self.source, Source::Coordinates) {
            return Err(Error::BadMetric {
                metric: metric.to_string(),
                reason: format!("{} was given as a {}, not coordinates", self.name, self.input()),
            });
        }
        if metric == Metric::Precomputed {
            return Err(Error::BadMetric {
                metric: metric.to_string(),
                reason: "give the distances themselves (Points::from_distances, --high-distances) or a kNN graph"
                    .into(),
            });
        }
        if let Metric::Minkowski(p) = metric {
            Metric::minkowski(p)?;
        }
        Ok(())
    }

    /// The same points under `metric` (allowed by [`Points::metric_allowed`]), with the data its
    /// kernel reads prepared; [`Points::check_metric`] says whether every distance is defined.
    pub(crate) fn apply_metric(mut self, metric: Metric) -> Self {
        self.prep = match metric {
            Metric::Cosine => Some(Arc::new(Prepared { norms: self.norms(&self.rows), centred: None })),
            Metric::Correlation => {
                let centred = centre(&self.rows, self.n, self.dim);
                let cols = column_major(&centred, self.n, self.dim);
                Some(Arc::new(Prepared { norms: self.norms(&centred), centred: Some((centred, cols)) }))
            }
            _ => None,
        };
        self.metric = metric;
        self
    }

    /// Whether the metric is defined on every pair: no zero vector under cosine, no constant
    /// row under correlation, norms whose products neither underflow to 0 nor overflow, and
    /// Minkowski powers that stay finite. The first offending row is named.
    pub fn check_metric(&self) -> Result<()> {
        let metric = self.metric;
        let undefined = |row: usize, reason: String| Error::MetricUndefined {
            name: self.name.clone(),
            metric: metric.to_string(),
            row,
            reason,
        };
        if let Some(prep) = &self.prep {
            check_norms(&prep.norms, metric).map_err(|(row, why)| undefined(row, why))?;
        }
        if let Kernel::Minkowski(p) = metric.kernel() {
            // The largest term |u_c − v_c|^p and the sum of D of them must stay finite.
            let (row, spread) = (0..self.dim)
                .map(|c| {
                    let col = self.col(c);
                    let (lo, hi) =
                        col.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
                    let at = col.iter().position(|&x| x == hi).unwrap_or(0);
                    (at, hi - lo)
                })
                .fold((0, 0.0f64), |(r, m), (at, s)| if s > m { (at, s) } else { (r, m) });
            if !(spread.powf(p) * self.dim as f64).is_finite() {
                return Err(undefined(
                    row,
                    format!(
                        "minkowski p={p}: differences up to {spread:e} raised to p overflow f64 (scale the data down)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The original space given as its n×n distance matrix (validated by its reader or
    /// [`DistanceMatrix::from_vec`]): the metric is [`Metric::Precomputed`], there are no
    /// coordinates ([`Points::dim`] is 0).
    pub fn from_distances(name: impl Into<String>, matrix: DistanceMatrix) -> Self {
        let n = matrix.n();
        Points {
            name: name.into(),
            n,
            dim: 0,
            rows: Vec::new(),
            cols: Vec::new(),
            metric: Metric::Precomputed,
            prep: None,
            source: Source::Distances(Arc::new(matrix)),
        }
    }

    /// The original space given as its kNN graph only (validated by [`KnnGraph::from_csr`] or [`KnnGraph::from_arrays`]): the
    /// measures that need nothing but each point's first k original neighbours run from it,
    /// the others are refused by name ([`Error::NeedsInput`]).
    pub fn from_knn_graph(name: impl Into<String>, graph: KnnGraph) -> Self {
        Points {
            name: name.into(),
            n: graph.n(),
            dim: 0,
            rows: Vec::new(),
            cols: Vec::new(),
            metric: Metric::Precomputed,
            prep: None,
            source: Source::Graph(Arc::new(graph)),
        }
    }

    /// The metric of the distances between these points.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Whether coordinates are held (not only given distances or a graph).
    pub fn has_coordinates(&self) -> bool {
        matches!(self.source, Source::Coordinates)
    }

    /// The given distance matrix, when the space was given as one.
    pub fn distances(&self) -> Option<&DistanceMatrix> {
        match &self.source {
            Source::Distances(d) => Some(d),
            _ => None,
        }
    }

    /// The given kNN graph, when the space was given as one.
    pub fn knn_graph(&self) -> Option<&KnnGraph> {
        match &self.source {
            Source::Graph(g) => Some(g),
            _ => None,
        }
    }

    /// How the space was given: `coordinates`, `distance matrix` or `kNN graph`.
    pub fn input(&self) -> &'static str {
        match self.source {
            Source::Coordinates => "coordinates",
            Source::Distances(_) => "distance matrix",
            Source::Graph(_) => "kNN graph",
        }
    }

    /// The prepared per-point data of the metric's kernel.
    pub(crate) fn prepared(&self) -> Option<&Prepared> {
        self.prep.as_deref()
    }

    /// `sqrt(Σ_c x_c²)` of each row of the row-major `rows`, summed as scipy's compiled
    /// `_row_norms` sums (two lanes, [`crate::sum::two_lane_sum`]).
    fn norms(&self, rows: &[f64]) -> Vec<f64> {
        rows.chunks_exact(self.dim).map(|r| crate::sum::two_lane_sum(r.len(), |c| r[c] * r[c]).sqrt()).collect()
    }

    /// Validates an f64 array view (any memory layout).
    pub fn from_f64(name: impl Into<String>, view: ArrayView2<f64>) -> Result<Self> {
        let (n, dim) = view.dim();
        Self::from_vec(name, n, dim, view.iter().copied().collect())
    }

    /// Validates an f32 array view, widening every value exactly to f64.
    pub fn from_f32(name: impl Into<String>, view: ArrayView2<f32>) -> Result<Self> {
        let (n, dim) = view.dim();
        Self::from_vec(name, n, dim, view.iter().map(|&v| f64::from(v)).collect())
    }

    /// The name used in error messages and reports.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Renames the set (for reports).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of coordinates per point.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Coordinates of point `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.dim..(i + 1) * self.dim]
    }
    /// Coordinate `c` of every point.
    pub fn col(&self, c: usize) -> &[f64] {
        &self.cols[c * self.n..(c + 1) * self.n]
    }
    /// All coordinates, row-major.
    pub fn as_slice(&self) -> &[f64] {
        &self.rows
    }
    /// A copy with the points reordered: point `i` of the result is point `perm[i]` of `self`
    /// (coordinates only; the metric is kept).
    pub fn permuted(&self, perm: &[usize]) -> Result<Self> {
        let rows = perm.iter().flat_map(|&p| self.row(p).iter().copied()).collect();
        let p = Self::from_vec(self.name.clone(), perm.len(), self.dim, rows)?;
        Ok(if self.metric == Metric::Euclidean { p } else { p.apply_metric(self.metric) })
    }
}

/// `x − mean(x)` of each row, the mean as NumPy's `X.mean(axis=1)` (a pairwise sum of the
/// contiguous row, divided by D), as scipy's correlation centres its input.
fn centre(rows: &[f64], n: usize, dim: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n * dim);
    for r in rows.chunks_exact(dim) {
        let mean = pairwise_sum(r) / dim as f64;
        out.extend(r.iter().map(|&x| x - mean));
    }
    out
}

fn column_major(rows: &[f64], n: usize, dim: usize) -> Vec<f64> {
    let mut cols = vec![0.0; n * dim];
    for i in 0..n {
        for c in 0..dim {
            cols[c * n + i] = rows[i * dim + c];
        }
    }
    cols
}

/// The domain of the cosine kernel `u·v / (‖u‖ ‖v‖)`: every norm finite and nonzero, and the
/// product of any two norms a finite nonzero number (the two smallest do not underflow to 0,
/// the two largest do not overflow), so that no quotient is 0/0 or ∞/∞ (NaN). The first
/// offending row and why.
fn check_norms(norms: &[f64], metric: Metric) -> std::result::Result<(), (usize, String)> {
    let what = if metric == Metric::Correlation {
        "is constant (its centred vector is zero), so its correlation distance is undefined (scipy gives NaN)"
    } else {
        "is a zero vector, so its cosine distance is undefined (scipy gives NaN)"
    };
    if let Some(i) = norms.iter().position(|&x| x == 0.0) {
        return Err((i, what.into()));
    }
    if let Some(i) = norms.iter().position(|x| !x.is_finite()) {
        return Err((i, format!("its norm overflows f64 under {metric} (scale the data down)")));
    }
    let (lo, hi) = norms
        .iter()
        .enumerate()
        .fold((0, 0), |(lo, hi), (i, &x)| (if x < norms[lo] { i } else { lo }, if x > norms[hi] { i } else { hi }));
    if norms[lo] * norms[lo] == 0.0 {
        let norm = norms[lo];
        return Err((
            lo,
            format!("its norm {norm:e} is so small that products of norms underflow to 0 under {metric}"),
        ));
    }
    if !(norms[hi] * norms[hi]).is_finite() {
        let norm = norms[hi];
        return Err((hi, format!("its norm {norm:e} is so large that products of norms overflow under {metric}")));
    }
    Ok(())
}
