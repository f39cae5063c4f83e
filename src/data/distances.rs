//! [`DistanceMatrix`]: the original space given as its n×n distances (scikit-learn's
//! `metric='precomputed'`, R's coRanking and dreval), validated and read row by row.
//!
//! A file is never held whole: its header is checked against its size before anything is
//! read, its values are validated in row blocks of bounded memory, and a run reads each row
//! when it needs it (positioned reads on the open file; no second n×n copy). A read that fails
//! during a run (the file shrank or went away) poisons the matrix: the run ends with an error,
//! never with scores of a partly read file.

use std::sync::Mutex;

use super::bounds::MAX_ABS;
use super::shown;
use crate::error::{Error, Result};

/// Bytes of rows held at once while a file is validated.
#[cfg(not(target_arch = "wasm32"))]
const CHECK_BLOCK_BYTES: usize = 128 << 20;

/// A validated n×n distance matrix: finite, non-negative, zero on the diagonal and exactly
/// symmetric (each `[i, j]` equal to `[j, i]`, 0 ulp). Negative zeros read as zeros.
///
/// ```
/// use faithful::{DistanceMatrix, Error, Points};
/// let d = DistanceMatrix::from_vec("d", 3, vec![0., 1., 2., 1., 0., 3., 2., 3., 0.])?;
/// let space = Points::from_distances("d", d);
/// assert_eq!((space.n(), space.dim(), space.input()), (3, 0, "distance matrix"));
/// let bad = DistanceMatrix::from_vec("d", 2, vec![0., 1., 1.5, 0.]).unwrap_err();
/// assert_eq!(bad.to_string(), "d: not a distance matrix: entry [0, 1] = 1 differs from entry [1, 0] = 1.5 (distances are symmetric, exactly)");
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
pub struct DistanceMatrix {
    name: String,
    n: usize,
    store: Store,
    /// The first read of a run that failed; the run is refused ([`DistanceMatrix::check_reads`]).
    failed: Mutex<Option<String>>,
}

#[derive(Debug)]
enum Store {
    Memory(Vec<f64>),
    #[cfg(not(target_arch = "wasm32"))]
    File(file::NpyRows),
}

impl DistanceMatrix {
    /// Validates `n * n` row-major distances.
    pub fn from_vec(name: impl Into<String>, n: usize, mut values: Vec<f64>) -> Result<Self> {
        let name = name.into();
        if values.len() != n.saturating_mul(n) {
            return Err(Error::BadDistances {
                name,
                reason: format!("{} values are not n×n for n = {n}", values.len()),
            });
        }
        if n < 2 {
            return Err(if n == 0 { Error::Empty { name } } else { Error::TooFewPoints { name, n } });
        }
        for v in &mut values {
            *v += 0.0;
        }
        let m = DistanceMatrix { name, n, store: Store::Memory(values), failed: Mutex::new(None) };
        m.validate(n.max(1))?;
        Ok(m)
    }

    /// Reads and validates an n×n `.npy` distance matrix (float64 or float32, either byte
    /// order, C or Fortran order): the shape is checked against the file's size before
    /// anything is allocated; the values in row blocks of bounded memory; the rows are read
    /// again when a run needs them.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let rows = file::NpyRows::open(path)?;
        let n = rows.n;
        if n < 2 {
            let e = if n == 0 { Error::Empty { name } } else { Error::TooFewPoints { name, n } };
            return Err(e.in_file(path));
        }
        let m = DistanceMatrix { name, n, store: Store::File(rows), failed: Mutex::new(None) };
        let block = (CHECK_BLOCK_BYTES / (8 * n)).clamp(1, n);
        m.validate(block).map_err(|e| match e {
            Error::File { .. } => e,
            e => e.in_file(path),
        })?;
        Ok(m)
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The matrix's name (its file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `d(i, j)` for j ≥ `from` into `out` (length n − from). A failed read fills `out`
    /// with zeros and poisons the matrix ([`DistanceMatrix::check_reads`]).
    pub fn row_from(&self, i: usize, from: usize, out: &mut [f64]) {
        if let Err(e) = self.try_rows(i, from, i + 1, out) {
            out.fill(0.0);
            self.fail(e);
        }
    }

    /// `d(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        let mut v = [0.0];
        self.row_from(i, j, &mut v);
        v[0]
    }

    /// Whether every read of the runs so far succeeded; the first failure otherwise.
    pub fn check_reads(&self) -> Result<()> {
        match self.failed.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            None => Ok(()),
            Some(why) => Err(Error::BadDistances { name: self.name.clone(), reason: why.clone() }),
        }
    }

    fn fail(&self, why: String) {
        let mut f = self.failed.lock().unwrap_or_else(|e| e.into_inner());
        f.get_or_insert(why);
    }

    /// Rows `r0..r1`, columns `c0..` of each (`out` holds `(r1 − r0) × (n − c0)` values); for
    /// one row, any run of columns `c0..c0 + out.len()`.
    fn try_rows(&self, r0: usize, c0: usize, r1: usize, out: &mut [f64]) -> std::result::Result<(), String> {
        let n = self.n;
        if out.is_empty() {
            return Ok(());
        }
        match &self.store {
            Store::Memory(v) => {
                let w = if r1 == r0 + 1 { out.len() } else { n - c0 };
                for (r, o) in (r0..r1).zip(out.chunks_mut(w)) {
                    o.copy_from_slice(&v[r * n + c0..r * n + c0 + w]);
                }
                Ok(())
            }
            #[cfg(not(target_arch = "wasm32"))]
            Store::File(f) => f.read(r0, c0, r1, out),
        }
    }

    /// Every entry finite and ≥ 0, the diagonal 0, and `[i, j] == [j, i]`: rows in blocks of
    /// `block`, each block's columns against the later rows' entries of the block's columns.
    /// The first offending entry (in this order) is named.
    fn validate(&self, block: usize) -> Result<()> {
        let n = self.n;
        let bad = |reason: String| Error::BadDistances { name: self.name.clone(), reason };
        let io = |why: String| bad(why);
        #[cfg_attr(target_arch = "wasm32", allow(unused_mut, unused_variables))]
        let mut held: Vec<f64> = Vec::new();
        let mut part = vec![0.0; block];
        for r0 in (0..n).step_by(block) {
            let r1 = (r0 + block).min(n);
            // A matrix in memory is read in place; a file's block is read into `held`.
            let rows: &[f64] = match &self.store {
                Store::Memory(v) => &v[r0 * n..r1 * n],
                #[cfg(not(target_arch = "wasm32"))]
                Store::File(_) => {
                    held.resize((r1 - r0) * n, 0.0);
                    self.try_rows(r0, 0, r1, &mut held).map_err(io)?;
                    &held
                }
            };
            for (r, row) in (r0..r1).zip(rows.chunks(n)) {
                for (j, &d) in row.iter().enumerate() {
                    if !d.is_finite() {
                        return Err(bad(format!("entry [{r}, {j}] is {} (distances must be finite)", shown(d))));
                    }
                    if d < 0.0 {
                        return Err(bad(format!("entry [{r}, {j}] = {} is negative", shown(d))));
                    }
                    // The coordinates' bound: squares and sums of squares of the distances must
                    // stay finite for the all-pairs measures.
                    if d >= MAX_ABS {
                        return Err(bad(format!(
                            "entry [{r}, {j}] = {} is too large (distances must be below 1e150 so that their squares stay finite)",
                            shown(d)
                        )));
                    }
                }
                if row[r] != 0.0 {
                    return Err(bad(format!(
                        "diagonal entry [{r}, {r}] = {} is not 0 (scipy's cdist(X, X) can round a self-distance above 0: set the diagonal to 0, or use squareform(pdist(X)))",
                        shown(row[r])
                    )));
                }
            }
            // [i, j] for i in the block and j > i, against [j, i]; the first in row-major order.
            let mut first: Option<(usize, usize, f64, f64)> = None;
            for j in r0 + 1..n {
                let col: &[f64] = if j < r1 {
                    &[]
                } else {
                    self.try_rows(j, r0, j + 1, &mut part[..r1 - r0]).map_err(io)?;
                    &part[..r1 - r0]
                };
                for i in r0..r1.min(j) {
                    let (a, b) = (rows[(i - r0) * n + j], if j < r1 { rows[(j - r0) * n + i] } else { col[i - r0] });
                    if a != b && first.is_none_or(|(fi, fj, ..)| (i, j) < (fi, fj)) {
                        first = Some((i, j, a, b));
                    }
                }
            }
            if let Some((i, j, a, b)) = first {
                return Err(bad(format!(
                    "entry [{i}, {j}] = {} differs from entry [{j}, {i}] = {} (distances are symmetric, exactly)",
                    shown(a),
                    shown(b)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod file {
    //! Positioned reads of an `.npy` matrix's rows from the open file.

    use std::cell::RefCell;
    use std::fs::File;
    use std::path::{Path, PathBuf};

    use super::super::npy::{decode_floats, square};
    use super::super::npy_header::Dtype;
    use super::super::sized::open_regular;
    use crate::error::{Error, Result};

    #[derive(Debug)]
    pub(super) struct NpyRows {
        pub n: usize,
        file: File,
        path: PathBuf,
        t: Dtype,
        /// Where the data starts.
        start: u64,
    }

    thread_local! {
        static BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    impl NpyRows {
        pub fn open(path: &Path) -> Result<Self> {
            let (mut file, len) = open_regular(path)?;
            let (n, t, _fortran, start) = square(&mut std::io::BufReader::new(&mut file), len)
                .map_err(|problem| Error::File { path: path.into(), problem })?;
            // Fortran order stores columns; a symmetric matrix's columns are its rows, and
            // symmetry is checked before any run reads them.
            Ok(NpyRows { n, file, path: path.into(), t, start })
        }

        /// Rows `r0..r1` from column `c0` on, or (one row) `out.len()` columns from `c0`.
        pub fn read(&self, r0: usize, c0: usize, r1: usize, out: &mut [f64]) -> std::result::Result<(), String> {
            let (n, size) = (self.n, self.t.size);
            let one = r1 == r0 + 1;
            let w = if one { out.len() } else { n - c0 };
            BYTES.with(|b| {
                let mut bytes = b.borrow_mut();
                let mut read_run = |r: usize, o: &mut [f64]| -> std::result::Result<(), String> {
                    bytes.resize(w * size, 0);
                    let at = self.start + ((r * n + c0) * size) as u64;
                    read_exact_at(&self.file, &mut bytes, at).map_err(|e| {
                        let p = self.path.display();
                        match e.kind() {
                            std::io::ErrorKind::UnexpectedEof => format!("{p}: the file changed while being read"),
                            _ => format!("{p}: cannot read: {e}"),
                        }
                    })?;
                    decode_floats(self.t, &bytes, o);
                    for v in o.iter_mut() {
                        *v += 0.0;
                    }
                    Ok(())
                };
                if one {
                    read_run(r0, out)
                } else {
                    for (r, o) in (r0..r1).zip(out.chunks_mut(w)) {
                        read_run(r, o)?;
                    }
                    Ok(())
                }
            })
        }
    }

    #[cfg(unix)]
    fn read_exact_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
    }

    #[cfg(windows)]
    fn read_exact_at(f: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(f, buf, at) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(k) => {
                    buf = &mut buf[k..];
                    at += k as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize, f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        (0..n * n).map(|t| f(t / n, t % n)).collect()
    }

    #[test]
    fn each_violation_names_the_first_offending_entry() {
        let ok = |i: usize, j: usize| (i as f64 - j as f64).abs();
        let m = DistanceMatrix::from_vec("d", 5, matrix(5, ok)).unwrap();
        let mut row = vec![0.0; 3];
        m.row_from(1, 2, &mut row);
        assert_eq!(row, [1.0, 2.0, 3.0]);
        assert_eq!(m.get(4, 0), 4.0);
        let err = |v: Vec<f64>| DistanceMatrix::from_vec("d", 5, v).unwrap_err().to_string();
        let set = |i: usize, j: usize, x: f64| {
            let mut v = matrix(5, ok);
            v[i * 5 + j] = x;
            v
        };
        assert_eq!(
            err(set(2, 3, f64::NAN)),
            "d: not a distance matrix: entry [2, 3] is NaN (distances must be finite)"
        );
        assert_eq!(err(set(4, 1, -1.0)), "d: not a distance matrix: entry [4, 1] = -1 is negative");
        assert!(err(set(3, 3, 0.5)).starts_with("d: not a distance matrix: diagonal entry [3, 3] = 0.5 is not 0 ("));
        let mut v = set(3, 4, 7.0);
        v[5 + 4] = 9.0;
        assert_eq!(
            err(v.clone()),
            "d: not a distance matrix: entry [1, 4] = 9 differs from entry [4, 1] = 3 (distances are symmetric, exactly)"
        );
        // The same first entry for any block size.
        let m = DistanceMatrix { name: "d".into(), n: 5, store: Store::Memory(v), failed: Mutex::new(None) };
        for block in 1..=5 {
            assert!(m.validate(block).unwrap_err().to_string().contains("entry [1, 4] = 9"), "block {block}");
        }
        // -0 is 0, on the diagonal and off it.
        let mut v = matrix(5, ok);
        v[0] = -0.0;
        v[1] = -0.0;
        v[5] = 0.0;
        let m = DistanceMatrix::from_vec("d", 5, v).unwrap();
        assert_eq!(m.get(0, 1).to_bits(), 0);
        assert!(DistanceMatrix::from_vec("d", 2, vec![0.0; 3]).is_err());
        assert!(matches!(DistanceMatrix::from_vec("d", 1, vec![0.0]), Err(Error::TooFewPoints { .. })));
    }
}
