//! Reading a file of known size exactly: all of its bytes and nothing past them (a file that
//! grows or shrinks while read is an error, not a partly read input).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::FileProblem;
#[cfg(not(target_arch = "wasm32"))]
use crate::error::{Error, Result as FaithfulResult};

/// Checks that `src` has nothing left: the file did not grow past its size `len`.
pub(super) fn at_end(src: &mut impl Read, len: u64) -> Result<(), FileProblem> {
    let mut one = [0u8; 1];
    loop {
        match src.read(&mut one) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(FileProblem::Changed(len)),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FileProblem::Io(e)),
        }
    }
}

/// The whole file, exactly its `len` bytes.
pub(super) fn all_bytes(file: &mut impl Read, len: u64) -> Result<Vec<u8>, FileProblem> {
    let mut buf = Vec::new();
    let cap = usize::try_from(len).map_err(|_| FileProblem::OutOfMemory(len))?;
    buf.try_reserve_exact(cap).map_err(|_| FileProblem::OutOfMemory(len))?;
    file.by_ref().take(len).read_to_end(&mut buf)?;
    if buf.len() as u64 != len {
        return Err(FileProblem::Changed(len));
    }
    at_end(file, len)?;
    Ok(buf)
}

/// Opens a regular file (following symlinks) and returns it with its size.
pub(super) fn open(path: &Path) -> Result<(File, u64), FileProblem> {
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

/// [`open`] with the path in the error.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn open_regular(path: &Path) -> FaithfulResult<(File, u64)> {
    open(path).map_err(|problem| Error::File { path: path.into(), problem })
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
