//! [`Points`]: a validated n×D point set in f64.

use ndarray::ArrayView2;

use crate::error::{Error, Result};

/// Largest coordinate magnitude accepted: squared distances of such points stay finite in f64.
pub const MAX_ABS: f64 = 1e150;

/// A validated n×D point set (n ≥ 2, D ≥ 1, finite), stored row-major and column-major in f64.
///
/// f32 input is widened exactly. The column-major copy feeds the distance-row kernel, which
/// vectorises across points while keeping each sum in coordinate order.
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
        let mut cols = vec![0.0; n * dim];
        for i in 0..n {
            for c in 0..dim {
                cols[c * n + i] = rows[i * dim + c];
            }
        }
        Ok(Points { name, n, dim, rows, cols })
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
    /// A copy with the points reordered: point `i` of the result is point `perm[i]` of `self`.
    pub fn permuted(&self, perm: &[usize]) -> Result<Self> {
        let rows = perm.iter().flat_map(|&p| self.row(p).iter().copied()).collect();
        Self::from_vec(self.name.clone(), perm.len(), self.dim, rows)
    }
}
