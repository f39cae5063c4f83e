//! Input files and command lines for the CLI tests.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::WriteNpyExt;

use tempfile::TempDir;

use super::Rng;

/// n rows of d values drawn uniformly from [lo, hi), seeded.
pub fn random_rows(n: usize, d: usize, seed: u64, lo: f64, hi: f64) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed);
    (0..n).map(|_| (0..d).map(|_| lo + rng.uniform() * (hi - lo)).collect()).collect()
}

/// Rows as CSV in Rust's shortest round-trip formatting, so the file holds exactly these f64s.
pub fn csv_text(rows: &[Vec<f64>]) -> String {
    rows.iter().map(|r| r.iter().map(|v| format!("{v}")).collect::<Vec<_>>().join(",") + "\n").collect()
}

/// Writes `contents` to `dir/name`.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, contents).unwrap();
    p
}

pub fn write_csv(dir: &Path, name: &str, rows: &[Vec<f64>]) -> PathBuf {
    write(dir, name, csv_text(rows))
}

/// Any array ndarray-npy can write, as `.npy`.
pub fn write_npy<A: WriteNpyExt>(dir: &Path, name: &str, a: &A) -> PathBuf {
    let p = dir.join(name);
    a.write_npy(File::create(&p).unwrap()).unwrap();
    p
}

/// Rows as an f64 `.npy`.
pub fn write_npy_rows(dir: &Path, name: &str, rows: &[Vec<f64>]) -> PathBuf {
    write_npy(dir, name, &Array2::from_shape_vec((rows.len(), rows[0].len()), rows.concat()).unwrap())
}

/// `measure --high HIGH [--low LOW]... EXTRA...`.
pub fn measure_args(high: &Path, lows: &[&Path], extra: &[&str]) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["measure".into(), "--high".into(), high.into()];
    for l in lows {
        a.push("--low".into());
        a.push((*l).into());
    }
    a.extend(extra.iter().map(OsString::from));
    a
}

/// A `.npy` file of format `version` (1, 2 or 3) with any header text, declared length
/// `header_len` (the text's own length when `None`), and data: for crafted and hostile files.
pub fn npy_bytes(version: u8, header: &str, header_len: Option<u32>, data: &[u8]) -> Vec<u8> {
    let len = header_len.unwrap_or(header.len() as u32);
    let mut out = vec![0x93, b'N', b'U', b'M', b'P', b'Y', version, 0];
    match version {
        1 => out.extend((len as u16).to_le_bytes()),
        _ => out.extend(len.to_le_bytes()),
    }
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// A hand-made `.npy` (format 1.0) with any descriptor, for element types ndarray-npy cannot write.
pub fn raw_npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    npy_bytes(1, &header, None, data)
}

/// A temp dir with a valid 10×5 `high.csv` and 10×2 `low.csv`.
pub struct Case {
    pub dir: TempDir,
    pub high: PathBuf,
    pub low: PathBuf,
}

pub fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let high = write_csv(dir.path(), "high.csv", &random_rows(10, 5, 1, 0.0, 1.0));
    let low = write_csv(dir.path(), "low.csv", &random_rows(10, 2, 2, 0.0, 1.0));
    Case { dir, high, low }
}

impl Case {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    /// `measure --high HIGH --low LOW` plus `extra`.
    pub fn args(&self, extra: &[&str]) -> Vec<OsString> {
        measure_args(&self.high, &[&self.low], extra)
    }
}
