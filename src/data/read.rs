//! Reading points and labels from files, chosen by extension.

use std::path::Path;

use super::{csv, npy, Labels, Points};
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

fn bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::File { path: path.into(), problem: FileProblem::Io(e) })
}

fn text(path: &Path) -> Result<String> {
    String::from_utf8(bytes(path)?).map_err(|_| Error::File { path: path.into(), problem: FileProblem::NotText })
}

/// Reads an n×D point set from `.npy` (float64/float32, 2-D) or headerless `.csv`, and validates it.
pub fn read_points(path: impl AsRef<Path>) -> Result<Points> {
    let path = path.as_ref();
    let parsed = match kind(path)? {
        Kind::Npy => npy::points(&bytes(path)?),
        Kind::Csv => csv::points(&text(path)?),
    };
    let (n, dim, values) = parsed.map_err(|problem| Error::File { path: path.into(), problem })?;
    let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    Points::from_vec(name, n, dim, values).map_err(|e| e.in_file(path))
}

/// Reads one integer label per point from `.npy` (1-D integers) or `.csv` (one per line).
pub fn read_labels(path: impl AsRef<Path>) -> Result<Labels> {
    let path = path.as_ref();
    let parsed = match kind(path)? {
        Kind::Npy => npy::labels(&bytes(path)?),
        Kind::Csv => csv::labels(&text(path)?),
    };
    parsed.map(Labels::new).map_err(|problem| Error::File { path: path.into(), problem })
}
