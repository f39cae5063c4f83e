//! SIGTERM and SIGHUP (`timeout`, systemd, a closed terminal) clean up like Ctrl-C: a running
//! external sort removes its workspace, the command exits with 130 and one stderr line; while
//! it runs, the workspace is private (0700, its files 0600) on a shared temporary directory.
#![cfg(unix)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::files::{random_rows, write_npy_rows};
use tempfile::TempDir;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Starts `measure` with srho and nm_stress forced onto the external sort in `tmp`.
fn start(data: &Path, tmp: &Path) -> Child {
    let h = write_npy_rows(data, "h.npy", &random_rows(3000, 5, 1, 0.0, 1.0));
    let l = write_npy_rows(data, "l.npy", &random_rows(3000, 2, 2, 0.0, 1.0));
    Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(["measure", "--backend", "cpu", "--high"])
        .arg(&h)
        .arg("--low")
        .arg(&l)
        .args(["--spec", "srho", "--spec", "nm_stress", "--memory-budget", "256K", "--json", "--temp-dir"])
        .arg(tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the workspace in `tmp` holds at least 3 run files; returns it and its files.
fn wait_for_runs(child: &mut Child, tmp: &Path) -> (PathBuf, Vec<PathBuf>) {
    let t0 = Instant::now();
    loop {
        let ws: Vec<PathBuf> = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().path()).collect();
        if ws.len() == 1 {
            let files: Vec<PathBuf> = std::fs::read_dir(&ws[0])
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            if files.len() >= 3 {
                return (ws[0].clone(), files);
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "finished before it could be signalled");
        assert!(t0.elapsed() < Duration::from_secs(60), "no workspace appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal_cleans_up(sig: &str) {
    let data = TempDir::new().unwrap();
    let tmp = TempDir::new().unwrap();
    let mut child = start(data.path(), tmp.path());
    let (ws, files) = wait_for_runs(&mut child, tmp.path());
    assert_eq!(mode(&ws), 0o700, "workspace {} is not private", ws.display());
    let mut checked = 0;
    for f in &files {
        // A file may be merged away and removed between the listing and here.
        if let Ok(m) = std::fs::metadata(f) {
            assert_eq!(m.permissions().mode() & 0o777, 0o600, "{} is not private", f.display());
            checked += 1;
        }
    }
    assert!(checked > 0, "no run file was left to check");
    let st = Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "SIG{sig}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "SIG{sig}: one line expected: {stderr}");
    assert!(stderr.contains("interrupted"), "SIG{sig}: {stderr}");
    assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none(), "SIG{sig}: files left behind in --temp-dir");
}

#[test]
fn sigterm_during_external_sort_removes_the_private_workspace() {
    signal_cleans_up("TERM");
}

#[test]
fn sighup_during_external_sort_removes_the_private_workspace() {
    signal_cleans_up("HUP");
}
