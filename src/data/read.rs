//! Reading points and labels from files, chosen by extension. Only regular files are read
//! (a FIFO, a device or a directory is refused before reading), and never more than the size
//! the file had when opened: a file that grows or shrinks meanwhile is an error, not a
//! partly read input.

use std::fs::File;
use std::path::Path;

#[cfg(not(target_arch = "wasm32"))]
use super::DistanceMatrix;
use super::sized::{all_bytes, open};
use super::{KnnGraph, Labels, Points, csv, npy};
use crate::error::{Error, FileProblem, Result};

enum Kind {
    Npy,
    Csv,
}

fn kind(path: &Path) -> Result<Kind> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("npy") => Ok(Kind::Npy),
        Some("csv") | Some("txt") | Some("tsv") => Ok(Kind::Csv),
        _ => Err(Error::File { path: path.into(), problem: FileProblem::Extension }),
    }
}

fn text(file: &mut File, len: u64) -> Result<String, FileProblem> {
    String::from_utf8(all_bytes(file, len)?).map_err(|_| FileProblem::NotText)
}

/// Opens `path` and hands it to the reader for its kind.
fn parse<T>(
    path: &Path,
    npy: impl Fn(&mut File, u64) -> Result<T, FileProblem>,
    csv: impl Fn(&str) -> Result<T, FileProblem>,
) -> Result<T> {
    let kind = kind(path)?;
    let parsed = open(path).and_then(|(mut file, len)| match kind {
        Kind::Npy => npy(&mut file, len),
        Kind::Csv => csv(&text(&mut file, len)?),
    });
    parsed.map_err(|problem| Error::File { path: path.into(), problem })
}

/// Reads an n×D point set from `.npy` (float64/float32, 2-D) or headerless `.csv`, and validates it.
pub fn read_points(path: impl AsRef<Path>) -> Result<Points> {
    let path = path.as_ref();
    let (n, dim, values) = parse(path, |f, len| npy::points(&mut std::io::BufReader::new(f), len), csv::points)?;
    let name = file_name(path);
    Points::from_vec(name, n, dim, values).map_err(|e| e.in_file(path))
}

/// Reads one integer label per point from `.npy` (1-D integers) or `.csv` (one per line).
pub fn read_labels(path: impl AsRef<Path>) -> Result<Labels> {
    let path = path.as_ref();
    let raw = parse(path, |f, len| npy::labels(&mut std::io::BufReader::new(f), len), csv::labels)?;
    Labels::try_new(raw).map_err(|bytes| Error::File { path: path.into(), problem: FileProblem::OutOfMemory(bytes) })
}

/// Reads and validates an n×n `.npy` distance matrix (float64/float32, either byte order, C or
/// Fortran order) as the original space ([`Points::from_distances`]): the shape is checked
/// against the file's size before anything is allocated, the values in row blocks of bounded
/// memory, and runs read the rows from the file when they need them (no n×n copy is held).
#[cfg(not(target_arch = "wasm32"))]
pub fn read_distances(path: impl AsRef<Path>) -> Result<Points> {
    let path = path.as_ref();
    let m = DistanceMatrix::read(path)?;
    Ok(Points::from_distances(m.name().to_string(), m))
}

/// Reads a kNN graph as the original space ([`Points::from_knn_graph`]) from n×k `.npy` neighbour
/// indices (integers of any width) and distances (float64/float32), as UMAP's `knn_indices` and
/// `knn_dists` (without their self column) or `faithful knn --out/--distances` write them.
pub fn read_knn_arrays(indices: impl AsRef<Path>, distances: impl AsRef<Path>) -> Result<Points> {
    let (ip, dp) = (indices.as_ref(), distances.as_ref());
    // Headers first: two arrays of different shapes are refused before either is read.
    if let (Some([n, k]), Some([n2, k2])) = (npy_shape(ip).as_deref(), npy_shape(dp).as_deref())
        && (n, k) != (n2, k2)
    {
        let name = file_name(ip);
        return Err(shapes_differ(name, dp, (*n, *k), (*n2, *k2)).in_file(ip));
    }
    let (name, n, k, idx) = matrix(ip, true, npy::int)?;
    let (_, n2, k2, dist) = matrix(dp, false, npy::float_of)?;
    if (n, k) != (n2, k2) {
        return Err(shapes_differ(name, dp, (n as u64, k as u64), (n2 as u64, k2 as u64)).in_file(ip));
    }
    // A bad distance is the distances file's problem (the graph's own check names the indices),
    // by the graph's rule.
    if let Some((t, why)) = dist.iter().enumerate().find_map(|(t, &d)| Some((t, super::graph::bad_distance(d)?))) {
        let reason = format!("row {}, column {}: the distance {why}", t / k, t % k);
        return Err(Error::BadGraph { name: file_name(dp), reason }.in_file(dp));
    }
    let g = KnnGraph::from_arrays(name.clone(), n, k, &idx, &dist).map_err(|e| e.in_file(ip))?;
    Ok(Points::from_knn_graph(name, g))
}

/// The data's name: its file name, as every reader names it.
fn file_name(path: &Path) -> String {
    path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
}

fn shapes_differ(name: String, distances: &Path, (n, k): (u64, u64), (n2, k2): (u64, u64)) -> Error {
    let reason = format!("the indices are {n}×{k} but the distances ({}) are {n2}×{k2}", distances.display());
    Error::BadGraph { name, reason }
}

/// The shape a `.npy` file's header declares, its data unread; `None` when the header cannot
/// be read or the file's size is not the header's plus the data it declares (the full read
/// then names the problem).
fn npy_shape(path: &Path) -> Option<Vec<u64>> {
    let (file, len) = open(path).ok()?;
    let (header, at) = super::npy_header::read(&mut std::io::BufReader::new(file)).ok()?;
    let size = header.dtype()?.size as u64;
    let data = header.shape.iter().try_fold(size, |b, &d| b.checked_mul(d))?;
    (at.checked_add(data)? == len).then_some(header.shape)
}

/// The shape a file declares before its data: a `.npy` header's, or a SciPy `.npz` matrix's
/// `shape` member. `None` for text (its rows are counted only as it is read) and for a header
/// that cannot be read (the full read names the problem). Lets a caller compare inputs' sizes
/// before it reads gigabytes of one of them.
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("faithful-doc-shape-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("x.npy");
/// let mut file = std::fs::File::create(&path)?;
/// faithful::data::write_npy(&mut file, 3, 2, [0.0f64; 6])?;
/// assert_eq!(faithful::data::declared_shape(&path), Some(vec![3, 2]));
/// assert_eq!(faithful::data::declared_shape(dir.join("x.csv")), None);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub fn declared_shape(path: impl AsRef<Path>) -> Option<Vec<usize>> {
    let path = path.as_ref();
    let shape = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("npy") => npy_shape(path)?,
        #[cfg(feature = "npz")]
        Some("npz") => super::npz::declared_shape(path)?,
        _ => return None,
    };
    shape.into_iter().map(|d| usize::try_from(d).ok()).collect()
}

/// A 2-D `.npy` array (integers with `ints`, else floats) as (file name, rows, columns, values).
fn matrix<T: Copy + Default>(
    path: &Path,
    ints: bool,
    conv: impl Fn(npy::Dtype, &[u8]) -> Result<T, String>,
) -> Result<(String, usize, usize, Vec<T>)> {
    let name = file_name(path);
    let file_error = |problem| Error::File { path: path.into(), problem };
    let (mut file, len) = open(path).map_err(file_error)?;
    let (shape, values) = npy::array(&mut std::io::BufReader::new(&mut file), len, ints, conv).map_err(file_error)?;
    match shape[..] {
        [n, k] => Ok((name, n, k, values)),
        _ => Err(file_error(FileProblem::Ndim { expected: 2, got: shape.len() })),
    }
}

/// Reads a kNN graph as the original space ([`Points::from_knn_graph`]) from a SciPy CSR `.npz`
/// (`scipy.sparse.save_npz` of scanpy's `.obsp['distances']` or scikit-learn's
/// `kneighbors_graph(..., mode='distance')`): row i's stored entries are i's neighbours and
/// their distances.
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
pub fn read_knn_npz(path: impl AsRef<Path>) -> Result<Points> {
    let path = path.as_ref();
    let name = file_name(path);
    let g = super::npz::csr(path, &name)?;
    Ok(Points::from_knn_graph(name, g))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_changes_size_while_read_is_an_error() {
        let bytes = b"1,2\n3,4\n";
        assert_eq!(all_bytes(&mut &bytes[..], 8).unwrap(), bytes);
        // Shorter than its size when opened, or longer: never a part of the file.
        assert!(matches!(all_bytes(&mut &bytes[..6], 8), Err(FileProblem::Changed(8))));
        assert!(matches!(all_bytes(&mut &b"1,2\n3,4\n5,6\n"[..], 8), Err(FileProblem::Changed(8))));
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_refused_before_reading() {
        assert!(matches!(open(Path::new("/dev/zero")), Err(FileProblem::NotRegular("a character device"))));
        assert!(matches!(open(Path::new("/")), Err(FileProblem::NotRegular("a directory"))));
    }
}
