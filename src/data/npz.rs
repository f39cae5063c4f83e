//! SciPy's sparse `.npz` (`scipy.sparse.save_npz`): a zip of `.npy` arrays (`indptr`,
//! `indices`, `data`, `format`, `shape`), read for a CSR kNN graph.
//!
//! Each member is decoded as it is inflated, by the `.npy` readers, which check the member's
//! header against its size before allocating; a member's declared size is first checked
//! against what deflate can produce from its compressed bytes (at most 1032 : 1), so a small
//! file cannot claim a large allocation.

use std::io::BufReader;
use std::path::Path;

use super::KnnGraph;
use super::npy;
use super::sized::open_regular;
use crate::error::{Error, FileProblem, Result};

/// Deflate's largest expansion: 258 bytes from 2 bits, about 1032 : 1.
const MAX_RATIO: u64 = 1032;

type Archive = zip::ZipArchive<BufReader<std::fs::File>>;

/// Reads member `{m}.npy` of `zip` with `read(member, its size)`, after checking its declared
/// size against its compressed size.
fn member<T>(
    zip: &mut Archive,
    m: &str,
    read: impl FnOnce(&mut zip::read::ZipFile<'_, BufReader<std::fs::File>>, u64) -> Result<T, FileProblem>,
) -> Result<T, FileProblem> {
    let mut f = zip.by_name(&format!("{m}.npy")).map_err(|_| {
        FileProblem::Npz(format!(
            "has no {m}.npy: a SciPy CSR matrix (scipy.sparse.save_npz) holds indptr, indices, data, format and shape"
        ))
    })?;
    let (size, packed) = (f.size(), f.compressed_size());
    if size > packed.saturating_mul(MAX_RATIO).saturating_add(1024) {
        return Err(FileProblem::Npz(format!("{m}.npy claims {size} bytes from {packed} compressed bytes")));
    }
    read(&mut f, size).map_err(|problem| match problem {
        FileProblem::Npy(why) => FileProblem::Npz(format!("{m}.npy: {why}")),
        FileProblem::Element(why) => FileProblem::Element(format!("{m}.npy: {why}")),
        other => other,
    })
}

/// A 1-D array member.
fn vector<T: Copy + Default>(
    zip: &mut Archive,
    m: &str,
    ints: bool,
    conv: impl Fn(npy::Dtype, &[u8]) -> Result<T, String>,
) -> Result<Vec<T>, FileProblem> {
    let (shape, v) = member(zip, m, |f, len| npy::array(f, len, ints, conv))?;
    if shape.len() != 1 {
        return Err(FileProblem::Npz(format!("{m}.npy is {}-D, not 1-D", shape.len())));
    }
    Ok(v)
}

/// The shape of the matrix stored in the `.npz` at `path`, from its `shape` member alone.
pub(super) fn declared_shape(path: &Path) -> Option<Vec<u64>> {
    let (file, _) = open_regular(path).ok()?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file)).ok()?;
    let shape = vector(&mut zip, "shape", true, npy::int).ok()?;
    shape.into_iter().map(|d| u64::try_from(d).ok()).collect()
}

/// The CSR graph stored in the `.npz` at `path`.
pub(super) fn csr(path: &Path, name: &str) -> Result<KnnGraph> {
    let file_error = |problem| Error::File { path: path.into(), problem };
    let (file, _) = open_regular(path)?;
    let mut zip = zip::ZipArchive::new(BufReader::new(file))
        .map_err(|e| file_error(FileProblem::Npz(format!("not a .npz (zip) archive: {e}"))))?;
    let format = member(&mut zip, "format", |f, len| npy::text_scalar(f, len)).map_err(file_error)?;
    if format != "csr" {
        return Err(file_error(FileProblem::Npz(format!(
            "holds a {} matrix, not CSR (a kNN graph is read row by row: save matrix.tocsr())",
            crate::quote::quoted(&format)
        ))));
    }
    let shape = vector(&mut zip, "shape", true, npy::int).map_err(file_error)?;
    let indptr = vector(&mut zip, "indptr", true, npy::int).map_err(file_error)?;
    let indices = vector(&mut zip, "indices", true, npy::int).map_err(file_error)?;
    let data = vector(&mut zip, "data", false, npy::float_of).map_err(file_error)?;
    let [rows, cols] = shape[..] else {
        return Err(file_error(FileProblem::Npz(format!("shape.npy holds {} numbers, not 2", shape.len()))));
    };
    let dim = |v: i64| {
        usize::try_from(v)
            .map_err(|_| file_error(FileProblem::Npz(format!("shape ({rows}, {cols}) is not a matrix's"))))
    };
    KnnGraph::from_csr(name, (dim(rows)?, dim(cols)?), &indptr, &indices, &data).map_err(|e| e.in_file(path))
}
