//! Writing results to standard output and to files. A write that fails (a full disk, a missing
//! folder, `> /dev/full`) is `Error::Write`: one line, exit 2. A closed pipe (`| head`) still
//! ends the process quietly by SIGPIPE (see `cli::main`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use faithful::{Error, Result};

/// Prints `text` to standard output, flushed, so that a failure is reported here.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::Write { target: "standard output".into(), source })
}

/// Creates `path` and fills it through `fill`; on failure a partly written regular file is
/// removed, so that no truncated result is left behind.
pub fn write_file(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let fail = |source| Error::Write { target: path.display().to_string(), source };
    let file = File::create(path).map_err(fail)?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    let mut w = BufWriter::new(file);
    let written = fill(&mut w).and_then(|()| w.flush());
    written.map_err(|e| {
        drop(w);
        if regular {
            let _ = std::fs::remove_file(path);
        }
        fail(e)
    })
}
