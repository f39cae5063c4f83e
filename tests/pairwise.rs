//! The all-pairs measures (stress, sn_stress, pr, kl_div, dtm, srho, nm_stress): the external
//! sort equals the in-memory sort bit for bit, interruption and errors leave no temporary files,
//! budgets are checked before any work, results do not depend on threads or block size, and
//! bad input gets typed errors.

mod common;

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Rng, points};
use faithful::resources::{OrderPath, OrderPlan};
use faithful::{Cancel, Error, Evaluator, Options, Points, ProgressFn, Spec};
use ndarray::Array2;
use ndarray_npy::WriteNpyExt;
use tempfile::TempDir;

const ALL: [&str; 8] = ["stress", "sn_stress", "pr", "kl_div", "kl_div:sigma=1", "dtm", "srho", "nm_stress"];

fn specs(ids: &[&str]) -> Vec<Spec> {
    ids.iter().map(|s| s.parse().unwrap()).collect()
}

/// Generic data: 4 Gaussian-ish clusters in 5-D, projected to its first 2 coordinates.
fn generic(n: usize, seed: u64) -> (Points, Points) {
    let mut rng = Rng(seed);
    let raw: Vec<f64> = (0..n * 5).map(|t| ((t / 5) % 4) as f64 * 3.0 + rng.uniform() + rng.uniform()).collect();
    let high = Points::from_vec("high", n, 5, raw.clone()).unwrap();
    let low = points("low", n, 2, |i, c| raw[i * 5 + c] + 0.3 * raw[i * 5 + 4]);
    (high, low)
}

/// A near-isometric projection: the PAVA fit keeps many small blocks (its stack spills).
fn near_isometric(n: usize, seed: u64) -> (Points, Points) {
    let (high, _) = generic(n, seed);
    let mut rng = Rng(seed + 100);
    let low = points("low", n, 5, |i, c| high.row(i)[c] + 1e-3 * rng.uniform());
    (high, low)
}

/// Tie-heavy data: a small integer lattice with duplicates, projected by dropping coordinates.
fn tied(n: usize, seed: u64) -> (Points, Points) {
    let mut rng = Rng(seed);
    let raw: Vec<f64> = (0..n * 4).map(|_| rng.below(3) as f64).collect();
    let high = Points::from_vec("high", n, 4, raw.clone()).unwrap();
    let low = points("low", n, 2, |i, c| raw[i * 4 + c] + (rng.below(2) as f64));
    (high, low)
}

fn values(eval: &Evaluator, low: &Points, ids: &[&str]) -> Vec<(String, u64)> {
    let scores = eval.measure(low, None, &specs(ids)).unwrap();
    scores.iter().flat_map(|s| s.values.iter().map(|(k, v)| (k.clone(), v.to_bits()))).collect()
}

fn dir_is_empty(p: &Path) -> bool {
    std::fs::read_dir(p).unwrap().next().is_none()
}

#[test]
fn external_sort_is_bit_identical_to_in_memory() {
    for (name, (high, low)) in
        [("generic", generic(300, 1)), ("tied", tied(300, 2)), ("near-isometric", near_isometric(300, 13))]
    {
        let in_mem = Evaluator::new(high.clone(), Options::default());
        let want = values(&in_mem, &low, &["srho", "nm_stress"]);
        let tmp = TempDir::new().unwrap();
        let opts = {
            let mut o = Options::default();
            o.memory_budget = Some(64 << 10);
            o.temp_dir = Some(tmp.path().into());
            o
        };
        let ext = Evaluator::new(high, opts);
        let run = ext.measure_many(&[&low], None, &specs(&["srho", "nm_stress"])).unwrap();
        let got: Vec<(String, u64)> = run.projections[0]
            .scores
            .iter()
            .flat_map(|s| s.values.iter().map(|(k, v)| (k.clone(), v.to_bits())))
            .collect();
        assert_eq!(got, want, "{name}");
        // It really was external, with many runs and more than one merge level.
        match &run.run.plan.pairwise.as_ref().unwrap().order {
            Some(OrderPlan::External(p)) => {
                assert!(p.runs >= 40, "{name}: {p:?}");
                assert!(p.merge_levels >= 2, "{name}: {p:?}");
            }
            other => panic!("{name}: expected an external sort, got {other:?}"),
        }
        assert!(dir_is_empty(tmp.path()), "{name}: the workspace was not removed");
        // Each alone, too (srho only skips the isotonic scan; nm_stress only skips the second sort).
        for id in ["srho", "nm_stress"] {
            let one = values(&ext, &low, &[id]);
            assert_eq!(
                one,
                want.iter()
                    .filter(|(k, _)| k.starts_with(if id == "srho" { "spearman" } else { "non_metric" }))
                    .cloned()
                    .collect::<Vec<_>>()
            );
        }
        assert!(dir_is_empty(tmp.path()));
    }
}

/// Spearman's ρ alone, in memory, with enough pairs for the bucketed path (`pairs::bucketed`),
/// equals the full sort's (srho with nm_stress) and the external sort's, bit for bit.
#[test]
fn bucketed_spearman_equals_the_full_and_the_external_sort() {
    for (name, (high, low)) in
        [("generic", generic(430, 31)), ("tied", tied(420, 32)), ("near-isometric", near_isometric(410, 33))]
    {
        assert!(high.n() * (high.n() - 1) / 2 >= 1 << 16, "enough pairs for the bucketed path");
        let eval = Evaluator::new(high.clone(), Options::default());
        let alone = values(&eval, &low, &["srho"]);
        let run = eval.measure_many(&[&low], None, &specs(&["srho"])).unwrap();
        let paths = &run.run.plan.pairwise.as_ref().unwrap().order_paths;
        assert!(matches!(paths[..], [OrderPath::Bucketed { .. }]), "{name}: {paths:?}");
        let with_nm = values(&Evaluator::new(high.clone(), Options::default()), &low, &["srho", "nm_stress"]);
        assert_eq!(alone[..], with_nm[..1], "{name}: bucketed vs full sort");
        let tmp = TempDir::new().unwrap();
        let opts = {
            let mut o = Options::default();
            o.memory_budget = Some(256 << 10);
            o.temp_dir = Some(tmp.path().into());
            o
        };
        let ext = values(&Evaluator::new(high, opts), &low, &["srho"]);
        assert_eq!(alone, ext, "{name}: bucketed vs external sort");
    }
    // Two distinct distances in the original space, two thirds of the pairs at 0: one X-chunk
    // would hold more than the per-thread scratch takes, so the run falls back to the full
    // sort, says so, and still agrees with the external sort.
    let (_, low) = tied(1000, 34);
    let high = points("two values", 1000, 1, |i, _| if i % 5 == 0 { 1.0 } else { 0.0 });
    let eval = Evaluator::new(high.clone(), Options::default());
    let run = eval.measure_many(&[&low], None, &specs(&["srho"])).unwrap();
    assert!(matches!(run.run.plan.pairwise.as_ref().unwrap().order_paths[..], [OrderPath::InMemory]));
    let tmp = TempDir::new().unwrap();
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(1 << 20);
        o.temp_dir = Some(tmp.path().into());
        o
    };
    assert_eq!(values(&eval, &low, &["srho"]), values(&Evaluator::new(high, opts), &low, &["srho"]));
}

#[test]
fn interrupted_external_sort_removes_its_workspace() {
    let (high, low) = generic(400, 3);
    let tmp = TempDir::new().unwrap();
    let cancel = Cancel::new();
    let c = cancel.clone();
    let saw_files = Arc::new(AtomicBool::new(false));
    let (s, dir) = (saw_files.clone(), tmp.path().to_path_buf());
    // Ask for a stop (as the Ctrl-C handler does) once the merge is under way, after checking
    // that the workspace holds run files at that moment.
    let progress = ProgressFn::new(move |p| {
        if p.phase == "pair order: merge" && p.done > 0 && !c.is_requested() {
            let ws: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            if ws.len() == 1 && std::fs::read_dir(&ws[0]).unwrap().count() > 0 {
                s.store(true, Ordering::SeqCst);
            }
            c.request();
        }
    });
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(64 << 10);
        o.temp_dir = Some(tmp.path().into());
        o.progress = Some(progress);
        o.cancel = Some(cancel.clone());
        o
    };
    let err = Evaluator::new(high, opts).measure(&low, None, &specs(&["srho", "nm_stress"])).unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err:?}");
    assert!(saw_files.load(Ordering::SeqCst), "the stop came before the workspace had files");
    assert!(dir_is_empty(tmp.path()), "files left behind");
}

#[test]
fn a_stop_asked_before_the_run_starts_leaves_nothing() {
    let (high, low) = generic(100, 4);
    let tmp = TempDir::new().unwrap();
    let cancel = Cancel::new();
    cancel.request();
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(64 << 10);
        o.temp_dir = Some(tmp.path().into());
        o.cancel = Some(cancel);
        o
    };
    let err = Evaluator::new(high, opts).measure(&low, None, &specs(&["srho"])).unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err:?}");
    assert!(dir_is_empty(tmp.path()));
}

fn write_npy(dir: &Path, name: &str, p: &Points) -> std::path::PathBuf {
    let a = Array2::from_shape_fn((p.n(), p.dim()), |(i, c)| p.row(i)[c]);
    let path = dir.join(name);
    a.write_npy(File::create(&path).unwrap()).unwrap();
    path
}

#[test]
fn sigint_during_external_sort_removes_the_workspace() {
    let (high, low) = generic(3000, 5);
    let data = TempDir::new().unwrap();
    let tmp = TempDir::new().unwrap();
    let (h, l) = (write_npy(data.path(), "h.npy", &high), write_npy(data.path(), "l.npy", &low));
    let mut child = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(["measure", "--high"])
        .arg(&h)
        .arg("--low")
        .arg(&l)
        .args(["--spec", "srho", "--spec", "nm_stress", "--memory-budget", "256K", "--json", "--temp-dir"])
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the workspace holds run files, then press Ctrl-C.
    let t0 = Instant::now();
    loop {
        let ws: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
        if ws.len() == 1 && std::fs::read_dir(&ws[0]).map(|d| d.count() >= 3).unwrap_or(false) {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "finished before it could be interrupted");
        assert!(t0.elapsed() < Duration::from_secs(60), "no workspace appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(dir_is_empty(tmp.path()), "files left behind");
}

#[test]
fn budgets_too_small_fail_before_any_work() {
    let (high, low) = generic(300, 6);
    let tmp = TempDir::new().unwrap();
    let calls = Arc::new(Mutex::new(0usize));
    let c = calls.clone();
    let progress = ProgressFn::new(move |_| *c.lock().unwrap() += 1);
    // Memory below the external sort's minimum.
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(1000);
        o.temp_dir = Some(tmp.path().into());
        o.progress = Some(progress.clone());
        o
    };
    let err = Evaluator::new(high.clone(), opts).measure(&low, None, &specs(&["tnc", "srho"])).unwrap_err();
    assert!(matches!(&err, Error::PairOrderMemory { budget: 1000, pairs: 44850, external_min: 65536, .. }), "{err:?}");
    // Temporary space below what the sort needs.
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(64 << 10);
        o.temp_budget = Some(100 << 10);
        o.temp_dir = Some(tmp.path().into());
        o.progress = Some(progress);
        o
    };
    let err = Evaluator::new(high.clone(), opts).measure(&low, None, &specs(&["stress", "nm_stress"])).unwrap_err();
    assert!(
        matches!(&err, Error::PairOrderTemp { budget, pairs: 44850, memory_budget: 65536, needed }
            if *budget == 100 << 10 && *needed > *budget),
        "{err:?}"
    );
    assert_eq!(*calls.lock().unwrap(), 0, "work started before the budget check");
    assert!(dir_is_empty(tmp.path()));
    // Enough temporary space: it runs.
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(64 << 10);
        o.temp_budget = Some(64 << 20);
        o.temp_dir = Some(tmp.path().into());
        o
    };
    Evaluator::new(high, opts).measure(&low, None, &specs(&["nm_stress"])).unwrap();
    // Without srho or nm_stress the budgets do not matter.
    let (high, low) = generic(50, 6);
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(1);
        o
    };
    Evaluator::new(high, opts).measure(&low, None, &specs(&["stress", "pr", "kl_div", "dtm"])).unwrap();
}

#[test]
fn the_cli_rejects_bad_budgets_and_reports_too_small_ones() {
    let (high, low) = generic(100, 7);
    let data = TempDir::new().unwrap();
    let (h, l) = (write_npy(data.path(), "h.npy", &high), write_npy(data.path(), "l.npy", &low));
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_faithful"))
            .args(["measure", "--high"])
            .arg(&h)
            .arg("--low")
            .arg(&l)
            .args(["--spec", "srho"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--memory-budget", "12X"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a size"));
    // The messages, byte for byte as the command line printed them when the budget errors were
    // one string variant (the typed variants must not change them).
    let out = run(&["--memory-budget", "1K"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "faithful: error: memory budget of 1024 bytes is too small: the pair order of 4950 pairs needs 25324224 bytes in memory, or at least 65536 bytes for an external sort\n"
    );
    let out = run(&["--memory-budget", "64K", "--temp-budget", "2K"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "faithful: error: temporary-space budget of 2048 bytes is too small: sorting 4950 pairs externally under a memory budget of 65536 bytes needs up to 158400 bytes of temporary space\n"
    );
    let tmp = TempDir::new().unwrap();
    let out =
        run(&["--memory-budget", "64K", "--temp-budget", "1G", "--temp-dir", tmp.path().to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["run"]["plan"]["pairwise"]["order"]["path"], "external");
    assert!(dir_is_empty(tmp.path()));
}

#[test]
fn results_do_not_depend_on_threads_or_block_size() {
    for (high, low) in [generic(257, 8), tied(203, 9)] {
        let mut seen: Option<Vec<(String, u64)>> = None;
        let with_knn: Vec<&str> = ALL.iter().copied().chain(["tnc:k=4"]).collect();
        for (threads, block_rows) in [(1, 1), (2, 7), (1, 64), (2, 1000)] {
            let eval = Evaluator::new(high.clone(), {
                let mut o = Options::default();
                o.threads = Some(threads);
                o.block_rows = block_rows;
                o
            });
            let mut got = values(&eval, &low, &ALL);
            let fused = values(
                &Evaluator::new(high.clone(), {
                    let mut o = Options::default();
                    o.threads = Some(threads);
                    o.block_rows = block_rows;
                    o
                }),
                &low,
                &with_knn,
            );
            assert_eq!(fused[..got.len()], got[..], "fused densities, threads {threads}, block_rows {block_rows}");
            got = fused;
            match &seen {
                None => seen = Some(got),
                Some(w) => assert_eq!(&got, w, "threads {threads}, block_rows {block_rows}"),
            }
        }
    }
}

/// With a neighbourhood measure in the call, the row pass finds the extents and the densities
/// come from the pair pass itself; the values are the same bits as from their own pass.
#[test]
fn densities_fused_into_the_pair_pass_equal_their_own_pass() {
    let bits = |scores: &[faithful::Score], id: &str| -> Vec<u64> {
        let s = scores.iter().find(|s| s.id == id).unwrap();
        let mut v: Vec<u64> = s.values.iter().map(|(_, x)| x.to_bits()).collect();
        for (_, l) in s.local.iter().flatten() {
            v.extend(l.iter().map(|x| x.to_bits()));
        }
        v
    };
    for (high, low) in [generic(260, 21), tied(230, 22)] {
        let opts = {
            let mut o = Options::default();
            o.local = true;
            o.block_rows = 9;
            o
        };
        let own = Evaluator::new(high.clone(), opts.clone())
            .measure(&low, None, &specs(&["kl_div", "dtm:sigma=1", "stress"]))
            .unwrap();
        let eval = Evaluator::new(high.clone(), opts);
        let run =
            eval.measure_many(&[&low, &low], None, &specs(&["kl_div", "dtm:sigma=1", "stress", "tnc:k=5"])).unwrap();
        assert!(run.run.plan.pairwise.as_ref().unwrap().densities_in_pair_pass);
        for p in &run.projections {
            for id in ["kl_div", "dtm", "stress"] {
                assert_eq!(bits(&p.scores, id), bits(&own, id), "{id}");
            }
        }
    }
}

#[test]
fn shared_resources_are_reused() {
    let (high, low) = generic(120, 10);
    let eval = Evaluator::new(high, Options::default());
    let first = eval.measure_many(&[&low], None, &specs(&["kl_div", "dtm", "stress"])).unwrap();
    let p = first.run.plan.pairwise.as_ref().unwrap();
    assert!(!p.high_extent_reused && p.high_densities_reused == 0);
    assert!(!p.densities_in_pair_pass, "no row pass, no maxima known beforehand");
    let second = eval.measure_many(&[&low, &low], None, &specs(&["dtm", "kl_div:sigma=1"])).unwrap();
    let p = second.run.plan.pairwise.as_ref().unwrap();
    assert!(p.high_extent_reused);
    assert_eq!(p.high_densities_reused, 1, "sigma=0.1 came from the first call");
    let a = first.projections[0].scores[1].values[0].1;
    assert_eq!(second.projections[0].scores[0].values[0].1.to_bits(), a.to_bits());
    assert_eq!(second.projections[1].scores[0].values[0].1.to_bits(), a.to_bits());
}

#[test]
fn progress_is_reported() {
    let (high, low) = generic(150, 11);
    let phases = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let p = phases.clone();
    let progress = ProgressFn::new(move |x| {
        assert!(x.done <= x.total);
        let mut v = p.lock().unwrap();
        if !v.contains(&x.phase) {
            v.push(x.phase);
        }
    });
    let eval = Evaluator::new(high, {
        let mut o = Options::default();
        o.progress = Some(progress);
        o
    });
    eval.measure(&low, None, &specs(&["stress", "kl_div", "srho"])).unwrap();
    let v = phases.lock().unwrap();
    for want in ["pair sums", "densities (original)", "densities (projection)", "pair order"] {
        assert!(v.contains(&want), "{want} missing from {v:?}");
    }
}

fn undefined(r: Result<Vec<faithful::Score>, Error>) -> String {
    match r {
        Err(Error::Undefined { reason, .. }) => reason,
        other => panic!("expected Undefined, got {other:?}"),
    }
}

#[test]
fn bad_input_gets_typed_errors() {
    let (high, low) = generic(30, 12);
    let eval = Evaluator::new(high.clone(), Options::default());
    for bad in ["kl_div:sigma=0", "dtm:sigma=-1", "kl_div:sigma=abc", "dtm:sigma=0.0", "kl_div:k=3", "stress:k=2"] {
        let err = eval.measure(&low, None, &specs(&[bad])).unwrap_err();
        assert!(matches!(err, Error::BadParam { .. } | Error::UnknownParam { .. }), "{bad}: {err:?}");
    }
    assert!(eval.measure(&low, None, &specs(&["kl_div:sigma=2"])).is_ok(), "an integer sigma is a number");

    // Every original distance zero.
    let same = points("same", 30, 3, |_, _| 1.5);
    let eval0 = Evaluator::new(same.clone(), Options::default());
    for id in ["stress", "sn_stress", "nm_stress", "kl_div", "dtm", "pr", "srho"] {
        let why = undefined(eval0.measure(&low, None, &specs(&[id])));
        assert!(why.contains("original space"), "{id}: {why}");
    }
    // Every projected distance zero: stress is defined, the others are not.
    assert!(eval.measure(&same, None, &specs(&["stress"])).is_ok());
    for id in ["sn_stress", "nm_stress", "kl_div", "dtm", "pr", "srho"] {
        let why = undefined(eval.measure(&same, None, &specs(&[id])));
        assert!(why.contains("projection"), "{id}: {why}");
    }
    // Two points: one pair, so correlations are undefined; stresses are not.
    let two_h = points("h2", 2, 2, |i, c| (i + c) as f64);
    let two_l = points("l2", 2, 1, |i, _| i as f64 * 3.0);
    let eval2 = Evaluator::new(two_h, Options::default());
    for id in ["pr", "srho"] {
        let why = undefined(eval2.measure(&two_l, None, &specs(&[id])));
        assert!(why.contains("constant"), "{id}: {why}");
    }
    let s = eval2.measure(&two_l, None, &specs(&["stress", "sn_stress", "nm_stress", "kl_div", "dtm"])).unwrap();
    assert!(s.iter().all(|x| x.values[0].1.is_finite()));
    // Equal non-zero distances (a regular simplex) are constant, not zero: pr and srho are
    // undefined, the stresses are not.
    let simplex = points("simplex", 4, 4, |i, c| f64::from(u8::from(i == c)));
    let line = points("line", 4, 1, |i, _| i as f64);
    let es = Evaluator::new(simplex, Options::default());
    for id in ["pr", "srho"] {
        let why = undefined(es.measure(&line, None, &specs(&[id])));
        assert!(why.contains("constant in the original space"), "{id}: {why}");
    }
    assert!(es.measure(&line, None, &specs(&["stress", "sn_stress", "nm_stress"])).is_ok());
}

#[test]
fn the_fused_pass_gives_the_same_pair_order() {
    // With pair sums or densities also asked for, the sums' pass writes the pair order's
    // records; alone, the pair order fills them itself. Same bits either way.
    for (high, low) in [generic(211, 14), tied(190, 15)] {
        let eval = Evaluator::new(high, Options::default());
        let alone = values(&eval, &low, &["srho", "nm_stress"]);
        let fused = values(&eval, &low, &["stress", "srho", "kl_div", "nm_stress"]);
        let picked: Vec<_> =
            fused.into_iter().filter(|(k, _)| k == "spearman_rho" || k == "non_metric_stress").collect();
        assert_eq!(picked, alone);
    }
}

#[test]
fn spearman_alone_uses_the_parallel_scans_and_agrees() {
    // srho without nm_stress scans its tie groups in parallel chunks; with nm_stress, one
    // sequential scan; externally, the streaming scans. All give the same bits, for any threads.
    for (high, low) in [generic(230, 16), tied(260, 17)] {
        let with_nm = values(&Evaluator::new(high.clone(), Options::default()), &low, &["srho", "nm_stress"]);
        for threads in [1, 2, 3] {
            let eval = Evaluator::new(high.clone(), {
                let mut o = Options::default();
                o.threads = Some(threads);
                o
            });
            assert_eq!(values(&eval, &low, &["srho"]), with_nm[..1].to_vec(), "threads {threads}");
            assert_eq!(values(&eval, &low, &["srho", "stress"])[..1], with_nm[..1], "fused, threads {threads}");
        }
    }
}
