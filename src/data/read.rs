//! Reading points and labels from files, chosen by extension. Only regular files are read
//! (a FIFO, a device or a directory is refused before reading), and never more than the size
//! the file had when opened: a file that grows or shrinks meanwhile is an error, not a
//! partly read input.

use std::fs::File;
use std::path::Path;

use super::sized::all_bytes;
use super::{Labels, Points, csv, npy};
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

/// Opens a regular file (following symlinks) and returns it with its size.
fn open(path: &Path) -> Result<(File, u64), FileProblem> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading blocks until a writer comes; non-blocking, it returns at once
    // and the type check below refuses it. Reads from regular files ignore the flag.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(FileProblem::NotRegular(type_name(&meta.file_type())));
    }
    Ok((file, meta.len()))
}

fn type_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a directory" } else { "not a file" }
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
    let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    Points::from_vec(name, n, dim, values).map_err(|e| e.in_file(path))
}

/// Reads one integer label per point from `.npy` (1-D integers) or `.csv` (one per line).
pub fn read_labels(path: impl AsRef<Path>) -> Result<Labels> {
    let path = path.as_ref();
    parse(path, |f, len| npy::labels(&mut std::io::BufReader::new(f), len), csv::labels).map(Labels::new)
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
