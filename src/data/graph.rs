//! [`KnnGraph`]: the original space given as its kNN graph — scanpy's `.obsp['distances']`,
//! scikit-learn's `kneighbors_graph(mode='distance')` (SciPy CSR), or an n×k pair of index
//! and distance arrays — validated and put in faithful's neighbour order.

use super::shown;
use crate::error::{Error, Result};

/// A validated kNN graph: every row holds k distinct neighbours (no self loop, indices in
/// range) with finite, non-negative distances, in ascending `(distance, index)` order.
///
/// The graph is the user's: faithful orders each row by `(distance, index)` and cuts rows to
/// the shortest row's length, but cannot check that the neighbours are the nearest, nor the
/// order of tied ones; [`GraphReport`] says what was done.
///
/// ```
/// use faithful::{Error, KnnGraph};
/// // Two neighbours per point, the second row out of order.
/// let g = KnnGraph::from_arrays("g", 3, 2, &[1, 2, 2, 0, 0, 1], &[1., 2., 3., 1., 2., 3.])?;
/// assert_eq!((g.n(), g.k()), (3, 2));
/// assert_eq!(g.row(1), [0, 2]);
/// assert_eq!(g.dist_row(1), [1., 3.]);
/// assert_eq!(g.report().rows_reordered, 1);
/// let self_loop = KnnGraph::from_arrays("g", 3, 1, &[1, 1, 0], &[1., 1., 1.]).unwrap_err();
/// assert_eq!(self_loop.to_string(), "g: not a kNN graph: row 1: a self loop (1 is its own neighbour)");
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct KnnGraph {
    n: usize,
    k: usize,
    idx: Vec<u32>,
    dist: Vec<f64>,
    report: GraphReport,
}

/// What was done to a kNN graph to use it, for the run report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct GraphReport {
    /// `csr` (a SciPy sparse matrix) or `arrays` (n×k indices and distances).
    pub format: &'static str,
    /// Neighbours per point used: the shortest row's count.
    pub k: usize,
    /// The longest row's count; rows longer than `k` were cut to their first `k` in
    /// `(distance, index)` order.
    pub k_max: usize,
    /// Rows cut to `k`.
    pub rows_truncated: usize,
    /// Rows that were not in `(distance, index)` order and were ordered.
    pub rows_reordered: usize,
    /// Always false: which of several tied points a graph holds at its k-th place, and
    /// whether its neighbours are the nearest at all, are the graph's own; faithful cannot
    /// verify them without the original space.
    pub ties_verified: bool,
}

impl KnnGraph {
    /// A graph from SciPy CSR arrays (`indptr`, `indices`, `data`) of an n×n matrix whose row
    /// i holds i's neighbours and their distances (explicit zeros included).
    pub fn from_csr(
        name: impl Into<String>,
        shape: (usize, usize),
        indptr: &[i64],
        indices: &[i64],
        data: &[f64],
    ) -> Result<Self> {
        let name = name.into();
        let bad = |reason: String| Error::BadGraph { name: name.clone(), reason };
        let (n, cols) = shape;
        if n != cols {
            return Err(bad(format!("its shape ({n}, {cols}) is not square (a kNN graph is n×n)")));
        }
        if n < 2 {
            return Err(if n == 0 { Error::Empty { name } } else { Error::TooFewPoints { name, n } });
        }
        if indptr.len() != n + 1 {
            return Err(bad(format!("indptr has {} entries, not n + 1 = {}", indptr.len(), n + 1)));
        }
        if indices.len() != data.len() {
            return Err(bad(format!("{} indices but {} distances", indices.len(), data.len())));
        }
        if indptr[0] != 0 || indptr[n] != indices.len() as i64 {
            return Err(bad(format!(
                "indptr runs from {} to {}, not from 0 to the {} entries",
                indptr[0],
                indptr[n],
                indices.len()
            )));
        }
        if let Some(r) = (0..n).find(|&r| indptr[r + 1] < indptr[r]) {
            return Err(bad(format!("indptr falls at row {r} ({} then {})", indptr[r], indptr[r + 1])));
        }
        // Monotone from 0 to indices.len(): every range below lies inside the arrays.
        Self::from_rows(name, n, |r| indptr[r] as usize..indptr[r + 1] as usize, indices, data, "csr")
    }

    /// The graph whose row r is `indices[range(r)]` with `data[range(r)]`; every range lies
    /// inside both arrays (the callers check it). Each buffer is reserved fallibly: a graph file
    /// that fits in memory can still outgrow it here, and that is an error, never an abort.
    fn from_rows(
        name: String,
        n: usize,
        range: impl Fn(usize) -> std::ops::Range<usize>,
        indices: &[i64],
        data: &[f64],
        format: &'static str,
    ) -> Result<Self> {
        let bad = |reason: String| Error::BadGraph { name: name.clone(), reason };
        let (mut k, mut k_max) = (usize::MAX, 0);
        for r in 0..n {
            let len = range(r).len();
            if len == 0 {
                return Err(bad(format!("row {r} has no neighbours")));
            }
            (k, k_max) = (k.min(len), k_max.max(len));
        }
        let mut report = GraphReport { format, k, k_max, rows_truncated: 0, rows_reordered: 0, ties_verified: false };
        let mut idx: Vec<u32> = reserved(&name, n * k)?;
        let mut dist: Vec<f64> = reserved(&name, n * k)?;
        let mut row: Vec<(u64, u32)> = reserved(&name, k_max)?;
        let mut seen: Vec<u32> = reserved(&name, k_max)?;
        for r in 0..n {
            row.clear();
            for t in range(r) {
                let (j, d) = (indices[t], data[t]);
                if j < 0 || j >= n as i64 {
                    return Err(bad(format!("row {r}: index {j} is out of range 0..{n}")));
                }
                if j as usize == r {
                    return Err(bad(format!("row {r}: a self loop ({r} is its own neighbour)")));
                }
                if let Some(why) = bad_distance(d) {
                    return Err(bad(format!("row {r}: the distance to {j} {why}")));
                }
                row.push(((d + 0.0).to_bits(), j as u32));
            }
            seen.clear();
            seen.extend(row.iter().map(|&(_, j)| j));
            seen.sort_unstable();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(bad(format!("row {r}: neighbour {} appears twice", w[0])));
            }
            // Non-negative f64 bit patterns order like the values: (bits, j) is (d, j).
            if row.windows(2).any(|w| w[0] > w[1]) {
                report.rows_reordered += 1;
                row.sort_unstable();
            }
            if row.len() > k {
                report.rows_truncated += 1;
            }
            for &(bits, j) in &row[..k] {
                idx.push(j);
                dist.push(f64::from_bits(bits));
            }
        }
        Ok(KnnGraph { n, k, idx, dist, report })
    }

    /// A graph from n×k row-major neighbour indices and distances (UMAP's and pynndescent's
    /// `knn_indices`/`knn_dists` without their self column, `faithful knn`'s output).
    pub fn from_arrays(
        name: impl Into<String>,
        n: usize,
        k: usize,
        indices: &[i64],
        distances: &[f64],
    ) -> Result<Self> {
        let name = name.into();
        if n.checked_mul(k) != Some(indices.len()) || indices.len() != distances.len() {
            return Err(Error::BadGraph {
                name,
                reason: format!("{} indices and {} distances for {n} rows of {k}", indices.len(), distances.len()),
            });
        }
        if n < 2 {
            return Err(if n == 0 { Error::Empty { name } } else { Error::TooFewPoints { name, n } });
        }
        Self::from_rows(name, n, |r| r * k..(r + 1) * k, indices, distances, "arrays")
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Neighbours per point.
    pub fn k(&self) -> usize {
        self.k
    }
    /// Point i's neighbours, in `(distance, index)` order.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.idx[i * self.k..(i + 1) * self.k]
    }
    /// Their distances.
    pub fn dist_row(&self, i: usize) -> &[f64] {
        &self.dist[i * self.k..(i + 1) * self.k]
    }
    /// Every row's neighbours and distances, n×k row-major.
    pub fn lists(&self) -> (&[u32], &[f64]) {
        (&self.idx, &self.dist)
    }
    /// What was done to the graph to use it.
    pub fn report(&self) -> &GraphReport {
        &self.report
    }
}

/// An empty list with room for `len` items, or [`Error::PointsMemory`] for the graph `name`.
/// Why `d` cannot be a kNN graph's distance (`None` when it can): one rule and one wording
/// for the graph's own check and for a distances file checked alone (`read_knn_arrays`).
pub(crate) fn bad_distance(d: f64) -> Option<String> {
    (!d.is_finite() || d < 0.0).then(|| format!("is {} (distances are finite and ≥ 0)", shown(d)))
}

fn reserved<T>(name: &str, len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::PointsMemory {
        name: name.into(),
        bytes: (len as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    })?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(indptr: &[i64], indices: &[i64], data: &[f64]) -> String {
        KnnGraph::from_csr("g", (3, 3), indptr, indices, data).unwrap_err().to_string()
    }

    #[test]
    fn csr_rows_are_validated_ordered_and_cut_to_the_shortest() {
        let g = KnnGraph::from_csr("g", (3, 3), &[0, 3, 5, 7], &[2, 1, 0, 0, 2, 1, 0], &[5., 1., 9., 1., 1., 2., 2.]);
        assert!(g.unwrap_err().to_string().contains("row 0: a self loop"));
        // Row 0 has three neighbours (cut to two), row 2 is out of order; a tie keeps index order.
        let g = KnnGraph::from_csr(
            "g",
            (4, 4),
            &[0, 3, 5, 7, 9],
            &[2, 1, 3, 0, 2, 1, 0, 1, 0],
            &[5., 1., 9., 1., 1., 2., 2., 3., 3.],
        )
        .unwrap();
        assert_eq!((g.k(), g.report().k_max, g.report().rows_truncated, g.report().rows_reordered), (2, 3, 1, 3));
        assert_eq!(g.row(0), [1, 2]);
        assert_eq!(g.row(2), [0, 1], "a tie keeps index order");
        assert_eq!(g.row(3), [0, 1]);
        assert_eq!(g.dist_row(2), [2., 2.]);
        assert!(!g.report().ties_verified);
    }

    proptest::proptest! {
        /// Any CSR arrays give a graph whose rows are valid, or a one-line error: never a panic.
        #[test]
        fn arbitrary_csr_arrays_are_a_graph_or_an_error(
            n in 0usize..7,
            indptr in proptest::collection::vec(-2i64..12, 0..9),
            indices in proptest::collection::vec(-2i64..9, 0..12),
            data in proptest::collection::vec(proptest::prop_oneof![-1.0f64..3.0, proptest::strategy::Just(f64::NAN)], 0..12),
        ) {
            match KnnGraph::from_csr("g", (n, n), &indptr, &indices, &data) {
                Ok(g) => {
                    for i in 0..g.n() {
                        let (row, dist) = (g.row(i), g.dist_row(i));
                        proptest::prop_assert!(row.iter().all(|&j| (j as usize) < n && j as usize != i));
                        proptest::prop_assert!(dist.windows(2).all(|w| w[0] <= w[1]));
                    }
                }
                Err(e) => proptest::prop_assert!(!e.to_string().contains('\n')),
            }
        }
    }

    #[test]
    fn each_problem_names_its_row() {
        assert_eq!(
            err(&[0, 1, 2, 3], &[1, 3, 0], &[1., 1., 1.]),
            "g: not a kNN graph: row 1: index 3 is out of range 0..3"
        );
        assert_eq!(
            err(&[0, 1, 2, 3], &[1, -1, 0], &[1., 1., 1.]),
            "g: not a kNN graph: row 1: index -1 is out of range 0..3"
        );
        assert_eq!(
            err(&[0, 2, 3, 4], &[1, 1, 0, 0], &[1., 1., 1., 1.]),
            "g: not a kNN graph: row 0: neighbour 1 appears twice"
        );
        assert_eq!(
            err(&[0, 1, 2, 3], &[1, 0, 0], &[1., f64::NAN, 1.]),
            "g: not a kNN graph: row 1: the distance to 0 is NaN (distances are finite and ≥ 0)"
        );
        assert_eq!(
            err(&[0, 1, 2, 3], &[1, 0, 0], &[1., -2., 1.]),
            "g: not a kNN graph: row 1: the distance to 0 is -2 (distances are finite and ≥ 0)"
        );
        assert_eq!(err(&[0, 1, 1, 2], &[1, 0], &[1., 1.]), "g: not a kNN graph: row 1 has no neighbours");
        assert_eq!(err(&[0, 1, 2], &[1, 0], &[1., 1.]), "g: not a kNN graph: indptr has 3 entries, not n + 1 = 4");
        assert!(err(&[0, 2, 1, 3], &[1, 2, 0], &[1., 1., 1.]).contains("indptr falls at row 1"));
        assert!(KnnGraph::from_csr("g", (3, 4), &[0, 1, 2, 3], &[1, 0, 0], &[1., 1., 1.]).is_err());
        assert!(KnnGraph::from_arrays("g", 3, 2, &[1, 2, 0], &[1., 1., 1.]).is_err());
    }
}
