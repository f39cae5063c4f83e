//! Writing results to standard output and to files. A write that fails (a full disk, a missing
//! folder, `> /dev/full`) is `Error::Write`: one line, exit 2. A closed pipe (`| head`) still
//! ends the process quietly by SIGPIPE (see `cli::main`); a standard output that was closed
//! when faithful started (`>&-`) is an error before any work ([`check_standard_streams`]).
//!
//! Output files are written atomically: into a temporary file beside the target, synced, then
//! renamed over it, so that a failed or interrupted rewrite leaves an earlier good file whole
//! and never a truncated one.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use faithful::{Error, Result};

/// Bit 1: standard output was closed at start; bit 2: standard error was.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Records which of fds 1 and 2 are closed. It runs before `main`, from the executable's
/// initialisers: Rust's runtime reopens a closed standard stream on /dev/null before `main`
/// starts, after which a closed stdout could not be told from `> /dev/null`.
#[cfg(unix)]
extern "C" fn record_standard_streams() {
    for (fd, bit) in [(1, 1u8), (2, 2u8)] {
        // SAFETY: fcntl(F_GETFD) only reads the descriptor's flags; -1 (EBADF) means closed.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(bit, Ordering::Relaxed);
        }
    }
}

#[cfg(all(unix, not(target_vendor = "apple")))]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_STANDARD_STREAMS: extern "C" fn() = record_standard_streams;

#[cfg(target_vendor = "apple")]
#[used]
#[unsafe(link_section = "__DATA,__mod_init_func")]
static RECORD_STANDARD_STREAMS: extern "C" fn() = record_standard_streams;

/// A standard stream that was closed when the process started: an error before any work
/// (`faithful measure ... >&-` would otherwise run and lose its result). A closed standard
/// error has nowhere to say so: the exit code (2) tells.
pub fn check_standard_streams() -> std::result::Result<(), (Error, bool)> {
    let closed = CLOSED_AT_START.load(Ordering::Relaxed);
    let error =
        |target: &str| Error::Write { target: target.into(), source: std::io::Error::from_raw_os_error(libc_ebadf()) };
    match (closed & 1 != 0, closed & 2 != 0) {
        (_, true) => Err((error("standard error"), false)),
        (true, false) => Err((error("standard output"), true)),
        (false, false) => Ok(()),
    }
}

fn libc_ebadf() -> i32 {
    #[cfg(unix)]
    return libc::EBADF;
    #[cfg(not(unix))]
    return 9;
}

/// Prints `text` to standard output, flushed, so that a failure is reported here.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::Write { target: "standard output".into(), source })
}

/// Prints through `fill` to standard output, buffered and flushed (large output without
/// building it in memory first).
pub fn print_with(fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    fill(&mut out)
        .and_then(|()| out.flush())
        .map_err(|source| Error::Write { target: "standard output".into(), source })
}

/// Prints `text` to standard error (a note, not an error): a failure is a write error.
pub fn eprint(text: &str) -> Result<()> {
    let mut err = std::io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .map_err(|source| Error::Write { target: "standard error".into(), source })
}

/// Temporary files of output being written, removed by the interrupt handler.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes every temporary output file still being written (the interrupt handler calls it
/// before exiting).
pub fn remove_pending() {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner()));
    for p in pending {
        let _ = std::fs::remove_file(p);
    }
}

fn pending(path: &Path, add: bool) {
    let mut list = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    if add {
        list.push(path.to_path_buf());
    } else {
        list.retain(|p| p != path);
    }
}

/// Where `path` is written: its target when it is a symbolic link (the link stays), and
/// whether that is an existing file that is not a regular one (a device such as /dev/null or
/// /dev/stdout, a FIFO), which is written in place.
fn resolve(path: &Path) -> (PathBuf, bool) {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => (path.to_path_buf(), true),
        Ok(_) => (std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()), false),
        Err(_) => (path.to_path_buf(), false),
    }
}

/// A fresh temporary path beside `target`: `.NAME.faithful-PID-N.tmp`.
fn temp_beside(target: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.faithful-{}-{n}.tmp", std::process::id()))
}

/// Creates the temporary file for `target` (registered for removal on interrupt), with the
/// permissions of an existing target.
fn create_temp(target: &Path) -> std::io::Result<(PathBuf, File)> {
    let tmp = temp_beside(target);
    pending(&tmp, true);
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp).inspect_err(|_| pending(&tmp, false))?;
    if let Ok(m) = std::fs::metadata(target) {
        let _ = file.set_permissions(m.permissions());
    }
    Ok((tmp, file))
}

/// Checks, before any work, that `path` can be written: a directory is refused, and a
/// temporary file can be created beside it (then removed).
pub fn check_writable(path: &Path) -> Result<()> {
    let fail = |source| Error::Write { target: path.display().to_string(), source };
    let (target, in_place) = resolve(path);
    if std::fs::metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(fail(std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory")));
    }
    if in_place {
        return OpenOptions::new().write(true).open(&target).map(drop).map_err(fail);
    }
    let (tmp, file) = create_temp(&target).map_err(fail)?;
    drop(file);
    let _ = std::fs::remove_file(&tmp);
    pending(&tmp, false);
    Ok(())
}

/// Whether two paths name the same existing file (by device and inode on Unix, so a hard link
/// or another spelling of the path counts; elsewhere by canonical path).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        matches!((std::fs::metadata(a), std::fs::metadata(b)), (Ok(x), Ok(y)) if x.dev() == y.dev() && x.ino() == y.ino())
    }
    #[cfg(not(unix))]
    {
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    }
}

/// Whether two output paths would write the same file: the same existing file (see
/// [`same_file`]), or, for files not yet there, the same name in the same directory however
/// either is spelled (`x.npy`, `./x.npy`, `dir/../x.npy`).
pub fn same_target(a: &Path, b: &Path) -> bool {
    let place = |p: &Path| {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Some((std::fs::canonicalize(dir).ok()?, p.file_name()?.to_owned()))
    };
    a == b || same_file(a, b) || matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// Refuses, before any work, an output `out` (given as `--{flag}` of `command`) that is one of
/// the command's input files `inputs` (`(flag, path)`): the write would replace the data it
/// is computed from. A device (/dev/null, /dev/stdout) is not an input's copy and passes.
pub fn check_not_an_input(command: &str, flag: &str, out: &Path, inputs: &[(&str, &Path)]) -> Result<()> {
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
        return Ok(());
    }
    match inputs.iter().find(|(_, input)| same_file(out, input)) {
        Some((input_flag, _)) => Err(Error::BadParam {
            id: command.into(),
            param: format!("--{flag}"),
            value: out.display().to_string(),
            reason: format!("is the --{input_flag} file (writing it would replace that input); give another path"),
        }),
        None => Ok(()),
    }
}

/// Writes `path` through `fill`, atomically: into a temporary file in the same directory,
/// flushed and synced, then renamed over `path`. On failure the temporary file is removed and
/// an earlier file at `path` is left as it was. A path that is not a regular file (a device, a
/// FIFO) is written in place.
pub fn write_file(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let fail = |source| Error::Write { target: path.display().to_string(), source };
    let (target, in_place) = resolve(path);
    if in_place {
        let mut w = BufWriter::new(OpenOptions::new().write(true).open(&target).map_err(fail)?);
        return fill(&mut w).and_then(|()| w.flush()).map_err(fail);
    }
    let (tmp, file) = create_temp(&target).map_err(fail)?;
    let mut w = BufWriter::new(file);
    let written = fill(&mut w)
        .and_then(|()| w.flush())
        .and_then(|()| w.get_ref().sync_all())
        .and_then(|()| std::fs::rename(&tmp, &target));
    drop(w);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        pending(&tmp, false);
        return Err(fail(e));
    }
    pending(&tmp, false);
    // The rename is durable once the directory is synced (best effort: not every file system
    // can open a directory).
    if let Some(Ok(d)) = target.parent().filter(|d| !d.as_os_str().is_empty()).map(File::open) {
        let _ = d.sync_all();
    }
    Ok(())
}
