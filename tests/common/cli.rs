//! Running the `faithful` binary and checking the error contract.

use std::ffi::OsString;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a refusal may take: what must take milliseconds, with room for a loaded machine.
pub const PROMPT: Duration = Duration::from_secs(5);

/// A finished run of the binary and how long it took.
pub struct Run {
    pub out: Output,
    pub elapsed: Duration,
}

/// Resource limits for a run (bytes).
#[derive(Clone, Copy, Default)]
pub struct Limits {
    /// Virtual memory (RLIMIT_AS): an allocation beyond it fails inside the process.
    pub address_space: Option<u64>,
    /// Largest file the process may write (RLIMIT_FSIZE), as a full disk would stop it; the
    /// write fails with EFBIG (SIGXFSZ is ignored so that it does not kill the process).
    pub file_size: Option<u64>,
    /// Standard output closed in the child (`>&-`), not redirected.
    pub close_stdout: bool,
    /// Standard error closed in the child (`2>&-`).
    pub close_stderr: bool,
}

/// Runs the binary with `args` (stdin closed) under `limits`.
pub fn run(args: &[OsString], limits: Limits, stdout: Stdio) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faithful"));
    cmd.args(args).stdin(Stdio::null()).stdout(stdout).stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let set = |resource, bytes: u64| {
            let lim = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            // SAFETY: setrlimit is async-signal-safe.
            if unsafe { libc::setrlimit(resource, &lim) } == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
        };
        // SAFETY: only async-signal-safe calls (setrlimit, signal) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(bytes) = limits.address_space {
                    set(libc::RLIMIT_AS, bytes)?;
                }
                if let Some(bytes) = limits.file_size {
                    libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                    set(libc::RLIMIT_FSIZE, bytes)?;
                }
                if limits.close_stdout {
                    libc::close(1);
                }
                if limits.close_stderr {
                    libc::close(2);
                }
                Ok(())
            });
        }
    }
    let start = Instant::now();
    let out = cmd.output().expect("binary runs");
    Run { out, elapsed: start.elapsed() }
}

/// Checks the error contract on a finished run: exit code 2, nothing on stdout, exactly one
/// non-empty line on stderr starting with `faithful: error:`, no panic, and every `phrase`
/// present. Returns the line.
#[track_caller]
pub fn check_error(run: &Run, args: &[OsString], phrases: &[&str]) -> String {
    let out = &run.out;
    let stderr = String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stderr.contains("panicked"), "panic for {args:?}:\n{stderr}");
    assert_eq!(out.status.code(), Some(2), "exit code for {args:?}; stderr:\n{stderr}");
    assert!(stdout.is_empty(), "stdout not empty for {args:?}:\n{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "want exactly one line on stderr for {args:?}, got:\n{stderr}");
    let line = lines[0];
    assert!(!line.trim().is_empty(), "empty error line for {args:?}");
    assert!(line.starts_with("faithful: error: "), "bad prefix: {line}");
    for p in phrases {
        assert!(line.contains(p), "error for {args:?} lacks {p:?}:\n{line}");
    }
    line.to_string()
}

/// Runs the binary and checks the error contract (see [`check_error`]).
#[track_caller]
pub fn expect_error(args: &[OsString], phrases: &[&str]) -> String {
    check_error(&run(args, Limits::default(), Stdio::piped()), args, phrases)
}
