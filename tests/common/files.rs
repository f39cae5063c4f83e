//! Input files and command lines for the CLI tests.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::WriteNpyExt;

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
