//! [`Workspace`]: a temporary directory for the external sort, removed on success, on error
//! and on interruption.
//!
//! Dropping the guard removes the directory and everything in it. Live workspaces are also
//! registered process-wide, so a signal handler can tell whether a cooperative stop is under
//! way (see [`any_active`]) or remove them itself before a hard exit ([`remove_all_active`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::control::Control;
use crate::error::{Error, Result};

static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary directory, removed when dropped.
#[derive(Debug)]
pub struct Workspace {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl Workspace {
    /// Creates `faithful-XXXXXX` inside `parent` (the system's temporary directory when `None`).
    /// Fails with `Interrupted` when a stop was already asked, so that a stop cannot race the
    /// creation: the count of live workspaces is raised before the flag is read.
    pub fn create(parent: Option<&Path>, ctl: &Control) -> Result<Workspace> {
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        let made = (|| {
            ctl.check()?;
            let parent = parent.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
            let mut builder = tempfile::Builder::new();
            builder.prefix("faithful-");
            // Private on a shared /tmp: the runs hold the data's distances.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                builder.permissions(std::fs::Permissions::from_mode(0o700));
            }
            let dir =
                builder.tempdir_in(&parent).map_err(|source| Error::Workspace { path: parent.clone(), source })?;
            Ok(dir)
        })();
        match made {
            Ok(dir) => {
                let path = dir.path().to_path_buf();
                PATHS.lock().unwrap_or_else(|e| e.into_inner()).push(path.clone());
                Ok(Workspace { dir: Some(dir), path })
            }
            Err(e) => {
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
                Err(e)
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates a new file at `path` (inside the workspace) for reading and writing, readable
    /// by its owner only (0600 on unix), failing if it exists.
    pub fn create_file(path: &Path) -> Result<std::fs::File> {
        let mut o = std::fs::File::options();
        o.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        o.open(path).map_err(|e| Self::io_error(path, e))
    }

    /// An I/O error on `path` inside the workspace, typed.
    pub fn io_error(path: &Path, source: std::io::Error) -> Error {
        Error::Workspace { path: path.to_path_buf(), source }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
        PATHS.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p != &self.path);
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether a workspace is live (being created, in use, or being removed).
pub fn any_active() -> bool {
    ACTIVE.load(Ordering::SeqCst) > 0
}

/// Removes every live workspace's directory: for a signal handler about to exit the process.
pub fn remove_all_active() {
    let paths = PATHS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for p in paths {
        let _ = std::fs::remove_dir_all(p);
    }
}
