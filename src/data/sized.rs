//! Reading a file of known size exactly: all of its bytes and nothing past them (a file that
//! grows or shrinks while read is an error, not a partly read input).

use std::io::Read;

use crate::error::FileProblem;

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
