//! stderr carries faithful's own lines only: probing the GPU stack under `--backend auto`
//! (n² ≥ `backend::AUTO_MIN_PAIRS`) or `faithful backends` prints nothing there, even where a driver would (Mesa's
//! Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
//! when that variable is missing), and `auto` probes only when a GPU has work to serve.

mod common;

use std::process::Command;

use common::files::{random_rows, write_npy_rows};

fn faithful() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faithful"));
    c.env_remove("XDG_RUNTIME_DIR");
    c
}

#[test]
fn backends_prints_nothing_on_stderr() {
    let out = faithful().arg("backends").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "stderr must be empty");
}

#[test]
fn auto_at_the_gpu_threshold_keeps_stderr_clean() {
    // The smallest n at the threshold: auto considers the GPU.
    let n = faithful::backend::AUTO_MIN_PAIRS.sqrt().ceil() as usize;
    let dir = tempfile::tempdir().unwrap();
    let h = write_npy_rows(dir.path(), "h.npy", &random_rows(n, 2, 1, 0.0, 1.0));
    let l = write_npy_rows(dir.path(), "l.npy", &random_rows(n, 1, 2, 0.0, 1.0));
    let run = |spec: &str| {
        let out = faithful()
            .args(["measure", "--json", "--backend", "auto", "--spec", spec, "--high"])
            .arg(&h)
            .arg("--low")
            .arg(&l)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{spec}: {stderr}");
        assert_eq!(stderr, "", "{spec}: stderr must be empty");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["run"].clone()
    };
    // Neighbour work: the adapters are probed (quietly); a software adapter or none leaves it
    // to the CPU, with the reason.
    let knn = run("lcmc:k=1");
    if knn["backend"] == "cpu" {
        assert!(knn["fallback_reason"].as_str().unwrap().starts_with("auto: "), "{knn}");
    }
    // All-pairs sums only: nothing for a GPU, so nothing is probed.
    let sums = run("stress");
    assert_eq!(sums["backend"], "cpu");
    assert_eq!(sums["fallback_reason"], "auto: the measures asked for have no work a GPU serves");
}
