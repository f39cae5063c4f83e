//! The commands added after `measure` (plan, shard, fold, bench, knn's outputs) held to the same
//! contract as hostile files (issue 24): every refusal, argument parsing included, is exit 2 and
//! exactly one stderr line `faithful: error: <what>: <problem>`, in bounded time ([`PROMPT`])
//! and memory (a 1 GiB address-space limit); a standard output closed at start is an error
//! before any work; output files are replaced atomically, so a failed rewrite leaves the earlier
//! good file whole and nothing else behind; SIGTERM ends every long command with one line and
//! exit 130.
#![cfg(unix)]

mod common;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::cli::{Limits, PROMPT, check_error, run};
use common::files::{random_rows, write_csv, write_npy_rows};
use faithful::shard::plan;
use faithful::{Evaluator, Options, Points, Spec};
use serde_json::Value;

/// Address space for the CLI on hostile input, as in hostile_files.rs.
const ONE_GIB: u64 = 1 << 30;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn with(mut a: Vec<OsString>, more: &[&Path]) -> Vec<OsString> {
    a.extend(more.iter().map(OsString::from));
    a
}

fn limited() -> Limits {
    Limits { address_space: Some(ONE_GIB), ..Limits::default() }
}

/// Refused under the 1 GiB limit, within [`PROMPT`], with one line holding every phrase.
#[track_caller]
fn refused(args: &[OsString], phrases: &[&str]) -> String {
    let r = run(args, limited(), Stdio::piped());
    let line = check_error(&r, args, phrases);
    assert!(r.elapsed < PROMPT, "{args:?} took {:?}", r.elapsed);
    line
}

/// Runs and expects success; returns stdout.
#[track_caller]
fn ok(args: &[OsString]) -> String {
    let r = run(args, Limits::default(), Stdio::piped());
    assert_eq!(r.out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&r.out.stderr));
    String::from_utf8(r.out.stdout).unwrap()
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------------------------
// Argument parsing: one line, exit 2, the value echoed as typed
// ---------------------------------------------------------------------------------------------

#[test]
fn values_refused_while_parsing_arguments_are_one_line() {
    let c = common::files::case();
    let (h, l) = (c.high.to_str().unwrap(), c.low.to_str().unwrap());
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["measure", "--high", h, "--low", l, "--threads", "-1"], vec!["--threads '-1': expected a whole number"]),
        (vec!["measure", "--high", h, "--low", l, "--block-rows", "0"], vec!["--block-rows '0': out of range"]),
        (
            vec!["measure", "--high", h, "--low", l, "--memory-budget", "1e30"],
            vec!["--memory-budget '1e30': not a size"],
        ),
        (vec!["measure", "--high", h, "--low", l, "--memory-budget", "-1M"], vec!["--memory-budget '-1M': not a size"]),
        (vec!["knn", "--data", h, "--k", "abc"], vec!["--k 'abc': expected a whole number"]),
        (vec!["knn", "--data", h, "--k", "-1"], vec!["--k '-1'"]),
        (vec!["knn", "--data", h, "--k", "18446744073709551616"], vec!["--k '18446744073709551616': out of range"]),
        (vec!["knn", "--data", h], vec!["faithful knn: --k: required"]),
        (
            vec!["shard", "--high", h, "--low", l, "--rows", "72", "--spec", "tnc", "--out", "x"],
            vec!["--rows '72': expected A:B"],
        ),
        (
            vec!["shard", "--high", h, "--low", l, "--rows", "0:-5", "--spec", "tnc", "--out", "x"],
            vec!["--rows '0:-5'"],
        ),
        (vec!["bench", "--repeat", "0"], vec!["--repeat '0': out of range: expected a whole number from 1 to 10000"]),
        (vec!["bench", "--repeat", "18446744073709551615"], vec!["--repeat '18446744073709551615': out of range"]),
        (vec!["bench", "--sizes", "18446744073709551615"], vec!["--sizes '18446744073709551615': out of range"]),
        (vec!["bench", "--sizes", "1e12"], vec!["--sizes '1e12': expected a whole number"]),
        (
            vec!["bench", "--sizes", "100", "--k", "60"],
            vec!["--k=60", "1 <= k < n/2 (n=100) for the evaluation kernel"],
        ),
        (vec!["bench", "--dims", "100000000"], vec!["--dims '100000000': out of range"]),
        (vec!["bench", "--kernels", "nope"], vec!["--kernels 'nope': not an accepted value", "knn"]),
        (vec!["bench", "--gpu-point-tile", "0"], vec!["--gpu-point-tile '0': out of range"]),
        (vec!["bench", "--gpu-point-tile", "-5"], vec!["--gpu-point-tile '-5'"]),
        (vec!["bench", "--gpu-point-tile", "4294967296"], vec!["--gpu-point-tile '4294967296': out of range"]),
        (vec!["bench", "--gpu-point-tile", "abc"], vec!["--gpu-point-tile 'abc': expected a whole number"]),
        (vec!["bench", "--gpu-refine", "gpu"], vec!["--gpu-refine", "gpu"]),
        (vec!["bench", "--gpu-resident", "abc"], vec!["--gpu-resident 'abc'"]),
        // Tiles and blocks a pass would raise quietly: refused, so a receipt times what was asked.
        (
            vec!["bench", "--sizes", "100", "--k", "2", "--gpu-point-tile", "5"],
            vec!["--gpu-point-tile=5", "at least 2k + 2 = 6 (k=2)"],
        ),
        (vec!["bench", "--gpu-resident", "0"], vec!["--gpu-resident=0", "more than 0 bytes"]),
        (vec!["plan", "--n", "1e12", "--max-rows", "1"], vec!["--n '1e12': expected a whole number"]),
        (vec!["plan", "--n", "10", "--max-rows", "0"], vec!["--max-rows '0': out of range"]),
        (vec!["plan", "--n", "-5", "--max-rows", "1"], vec!["--n '-5': expected a whole number ≥ 2"]),
        (
            vec!["plan", "--n", "10", "--max-rows", "18446744073709551616"],
            vec![
                "--max-rows '18446744073709551616': out of range: expected a whole number from 1 to 18446744073709551615",
            ],
        ),
        (vec!["measure", "--bogus"], vec!["'--bogus': unknown option for faithful measure"]),
        (vec!["measure", "--jsn"], vec!["did you mean '--json'?"]),
        (vec!["mesure"], vec!["'mesure': unknown command", "did you mean", "'measure'"]),
        (vec![], vec!["a command is required"]),
        (vec!["measure", "--backend", "tpu"], vec!["--backend 'tpu': not an accepted value", "cpu"]),
        (vec!["measure", "--spec"], vec!["--spec: a value is required"]),
        (vec!["fold"], vec!["faithful fold", "required"]),
        (
            vec!["measure", "--low", l],
            vec!["faithful measure: one of --high, --high-distances, --high-knn, --high-knn-indices: required"],
        ),
    ];
    for (args, phrases) in cases {
        let line = refused(&os(&args), &phrases);
        assert!(!line.contains("Usage") && !line.contains("For more information"), "{line}");
    }
}

#[test]
fn knn_refuses_one_file_for_indices_and_distances() {
    let c = common::files::case();
    let same = c.path().join("same.npy");
    let flag = |f: &'static str| std::path::Path::new(f);
    let args =
        with(os(&["knn", "--k", "3"]), &[flag("--data"), &c.high, flag("--out"), &same, flag("--distances"), &same]);
    let line = refused(&args, &["--distances", "same.npy", "is the --out file too"]);
    assert!(!same.exists(), "{line}: nothing is written");
    // The same new file spelled two ways (neither exists yet) is refused too.
    let other = c.path().join("sub").join("..").join("same.npy");
    std::fs::create_dir(c.path().join("sub")).unwrap();
    let args =
        with(os(&["knn", "--k", "3"]), &[flag("--data"), &c.high, flag("--out"), &same, flag("--distances"), &other]);
    let line = refused(&args, &["--distances", "same.npy", "is the --out file too"]);
    assert!(!same.exists(), "{line}: nothing is written");
}

#[test]
fn help_and_version_print_to_stdout_and_succeed() {
    let help = ok(&os(&["measure", "--help"]));
    assert!(help.contains("Usage: faithful measure"), "{help}");
    assert!(ok(&os(&["--version"])).starts_with("faithful "));
}

#[test]
fn huge_values_are_echoed_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_csv(dir.path(), "d.csv", &random_rows(20, 3, 1, 0.0, 1.0));
    // A k past i64: shown as typed, never wrapped to -1.
    let line = refused(&with(os(&["knn", "--k", "18446744073709551615", "--data"]), &[&data]), &["knn"]);
    assert!(line.contains("18446744073709551615") && !line.contains("k=-1"), "{line}");
    // A k within i64 but past n.
    let line = refused(&with(os(&["knn", "--k", "9223372036854775807", "--data"]), &[&data]), &["n=20"]);
    assert!(line.contains("9223372036854775807"), "{line}");
    // A spec's k past i64 is not rounded to a float.
    let line = refused(
        &with(os(&["measure", "--spec", "tnc:k=18446744073709551615", "--low"]), &[&data])
            .into_iter()
            .chain(with(os(&["--high"]), &[&data]))
            .collect::<Vec<_>>(),
        &["tnc"],
    );
    assert!(!line.contains("18446744073709552000") && !line.contains("k=-1"), "{line}");
    // And the reason is its range, not that it is no integer.
    assert!(line.contains("k=18446744073709551615") && line.contains("past the 64-bit range"), "{line}");
}

// ---------------------------------------------------------------------------------------------
// plan: streamed, bounded
// ---------------------------------------------------------------------------------------------

#[test]
fn plan_refuses_counts_a_run_cannot_hold() {
    refused(&os(&["plan", "--n", "1000000000000", "--max-rows", "1"]), &["plan: parameter --n=1000000000000", "2^32"]);
    refused(&os(&["plan", "--n", "1", "--max-rows", "1"]), &["--n '1': out of range: expected a whole number ≥ 2"]);
}

#[test]
fn plan_streams_its_blocks_in_bounded_memory() {
    // 2^32 points in blocks of one leaf: 33 million lines. Held in memory they took gigabytes;
    // streamed, the first lines come at once under the 1 GiB limit, and a closed pipe ends it.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faithful"));
    cmd.args(["plan", "--n", "4294967296", "--max-rows", "1"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit { rlim_cur: ONE_GIB as libc::rlim_t, rlim_max: ONE_GIB as libc::rlim_t };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Vec<String> = (0..3).map(|_| lines.next().unwrap().unwrap()).collect();
    assert!(t0.elapsed() < PROMPT, "first lines took {:?}", t0.elapsed());
    let blocks = plan(1 << 32, 1);
    assert_eq!(first, blocks[..3].iter().map(|b| format!("{}:{}", b.start, b.end)).collect::<Vec<_>>());
    drop(blocks);
    drop(lines);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn plan_lines_tile_the_rows_for_any_parameters() {
    let mut rng = common::Rng(24);
    for _ in 0..12 {
        let n = 2 + rng.below(200_000) as usize;
        let max = 1 + rng.below(n as u64 * 2) as usize;
        let text = ok(&os(&["plan", "--n", &n.to_string(), "--max-rows", &max.to_string()]));
        let want: String = plan(n, max).iter().map(|b| format!("{}:{}\n", b.start, b.end)).collect();
        assert_eq!(text, want, "n={n} max={max}");
    }
}

// ---------------------------------------------------------------------------------------------
// bench: bounded before anything is allocated
// ---------------------------------------------------------------------------------------------

#[test]
fn bench_parameters_are_bounded_before_any_work() {
    let b = |extra: &[&str]| {
        let mut a = os(&["bench", "--backend", "cpu", "--k", "2"]);
        a.extend(os(extra));
        a
    };
    // Sizes and dimensions whose data cannot fit: refused at once, not aborted.
    refused(
        &b(&["--sizes", "4294967295", "--dims", "4194303"]),
        &["bench: parameter --sizes=4294967295", "memory budget"],
    );
    refused(&b(&["--sizes", "1000000000", "--dims", "100"]), &["--sizes=1000000000", "memory budget"]);
    refused(&b(&["--sizes", "100000", "--memory-budget", "1M"]), &["--sizes=100000", "1048576"]);
    // A run count past the ceiling (no wrap of repeat + 1).
    refused(
        &b(&["--sizes", "5,6,7,8,9,10,11,12,13,14", "--dims", "2,3,4,5,6,7,8,9,10,11", "--repeat", "10000"]),
        &["above the limit of 1000000 runs"],
    );
    // k against every size.
    refused(&os(&["bench", "--sizes", "100,5", "--k", "5"]), &["bench: parameter --k=5", "n=5"]);
}

#[test]
fn bench_json_path_is_checked_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/r.json");
    // A size whose work takes seconds: the refusal comes first.
    let args = with(os(&["bench", "--backend", "cpu", "--sizes", "20000", "--kernels", "knn", "--json"]), &[&missing]);
    refused(&args, &["cannot write", "r.json"]);
    let args =
        with(os(&["bench", "--backend", "cpu", "--sizes", "20000", "--kernels", "knn", "--json"]), &[dir.path()]);
    refused(&args, &["cannot write", "is a directory"]);
    assert_eq!(listing(dir.path()), ["no"].iter().take(0).map(|s| s.to_string()).collect::<Vec<_>>());
}

#[test]
fn bench_parameters_property() {
    // Random sizes, dims, k and repeat from small valid values and hostile ones: a table and
    // exit 0, or exit 2 and one line, promptly; never a panic or an abort.
    let mut rng = common::Rng(7);
    let pick = |rng: &mut common::Rng, pool: &[&'static str]| pool[rng.below(pool.len() as u64) as usize];
    for _ in 0..16 {
        let sizes = pick(&mut rng, &["3", "17", "40", "0", "2", "4294967295", "18446744073709551615", "3,1e9", "-3"]);
        let dims = pick(&mut rng, &["2", "5", "1", "4194303", "4194304", "18446744073709551616"]);
        let k = pick(&mut rng, &["1", "2", "0", "3", "4294967295", "99"]);
        let repeat = pick(&mut rng, &["1", "2", "0", "10000", "10001", "18446744073709551615"]);
        let args = os(&[
            "bench",
            "--backend",
            "cpu",
            "--sizes",
            sizes,
            "--dims",
            dims,
            "--k",
            k,
            "--repeat",
            repeat,
            "--kernels",
            "knn,pairs",
        ]);
        let r = run(&args, limited(), Stdio::piped());
        let stderr = String::from_utf8_lossy(&r.out.stderr);
        match r.out.status.code() {
            Some(0) => assert!(String::from_utf8_lossy(&r.out.stdout).contains("| cpu"), "{args:?}"),
            _ => {
                check_error(&r, &args, &[]);
            }
        }
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(r.elapsed < Duration::from_secs(30), "{args:?} took {:?}", r.elapsed);
    }
}

// ---------------------------------------------------------------------------------------------
// fold: bounded, validated like measure
// ---------------------------------------------------------------------------------------------

/// Valid partials of a small run (n = 300, three blocks) as JSON values.
fn partials(specs: &[&str]) -> Vec<Value> {
    let n = 300;
    let v = |s: u64, d: usize| (0..n * d).map(|i| ((i as u64 * s) % 11) as f64 * 0.5).collect::<Vec<_>>();
    let high = Points::from_vec("high", n, 3, v(5, 3)).unwrap();
    let low = Points::from_vec("low", n, 2, v(3, 2)).unwrap();
    let ev = Evaluator::new(high, Options::default());
    let specs: Vec<Spec> = specs.iter().map(|s| s.parse().unwrap()).collect();
    plan(n, 100)
        .into_iter()
        .map(|r| serde_json::from_str(&ev.map_rows(&low, None, r, &specs).unwrap().to_json()).unwrap())
        .collect()
}

/// Writes `parts` (partials changed by meaning) as part-I.fpart, each sealed again
/// ([`common::resealed`]).
fn write_parts(dir: &Path, parts: &[Value]) -> Vec<PathBuf> {
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = dir.join(format!("part-{i}.fpart"));
            std::fs::write(&path, common::resealed(p)).unwrap();
            path
        })
        .collect()
}

fn fold_args(parts: &[PathBuf], extra: &[&str]) -> Vec<OsString> {
    let mut a = os(&["fold"]);
    a.extend(os(extra));
    a.extend(parts.iter().map(OsString::from));
    a
}

/// Sets every local value of `part` to `value` and the stored sums to their pairwise sums.
fn set_values(part: &mut Value, value: f64) {
    for score in part["scores"].as_array_mut().unwrap() {
        for local in score["locals"].as_array_mut().unwrap() {
            let len = local["bits"].as_array().unwrap().len();
            let values = vec![value; len];
            local["bits"] = values.iter().map(|v| v.to_bits()).collect::<Vec<_>>().into();
            local["sum_bits"] = faithful::sum::pairwise_sum(&values).to_bits().into();
        }
    }
}

#[test]
fn fold_refuses_sums_that_are_not_finite() {
    let dir = tempfile::tempdir().unwrap();
    // Finite values whose block sums overflow: refused, naming the partial.
    let mut parts = partials(&["tnc:k=4"]);
    set_values(&mut parts[0], 1e307);
    let files = write_parts(dir.path(), &parts);
    refused(&fold_args(&files, &[]), &["part-0.fpart", "the sum of its values is not finite"]);
    // Finite block sums whose fold overflows: a typed error naming the key, never a null or NaN.
    let mut parts = partials(&["tnc:k=4"]);
    for p in &mut parts {
        let rows = p["rows"][1].as_u64().unwrap() - p["rows"][0].as_u64().unwrap();
        set_values(p, 1.7e308 / rows as f64);
    }
    let files = write_parts(dir.path(), &parts);
    for extra in [&["--json"][..], &[]] {
        refused(&fold_args(&files, extra), &["tnc on low: trustworthiness is not a finite number"]);
    }
}

#[test]
fn fold_reads_partials_in_any_field_order_and_refuses_huge_strings() {
    let dir = tempfile::tempdir().unwrap();
    let parts = partials(&["tnc:k=4"]);
    let files = write_parts(dir.path(), &parts);
    // The fold's JSON without its timings.
    let folded = |files: &[PathBuf]| {
        let mut v: Value = serde_json::from_str(&ok(&fold_args(files, &["--json"]))).unwrap();
        v["run"].as_object_mut().unwrap().remove("timings");
        v
    };
    let want = folded(&files);
    // The first field any of the partial's (input_high and metric_high were missing from the
    // first-bytes check), and whitespace before it: the same fold.
    for (i, field) in ["input_high", "metric_high"].into_iter().enumerate() {
        let mut p = parts[i].clone();
        let value = p.as_object_mut().unwrap().remove(field).unwrap();
        let text = p.to_string();
        std::fs::write(&files[i], format!("{}{{\"{field}\":{value},{}", " \n".repeat(300), &text[1..])).unwrap();
    }
    assert_eq!(folded(&files), want);
    // A string of 64 MiB in a partial: refused in one line, under the 1 GiB limit and any
    // budget, without the parser holding it (it aborted on a string of 2 GB).
    let mut p = parts[0].clone();
    p["projection"] = "x".repeat(64 << 20).into();
    std::fs::write(&files[0], p.to_string()).unwrap();
    refused(&fold_args(&files, &[]), &["part-0.fpart", "a string longer than 65536 bytes"]);
}

#[test]
fn fold_names_the_partial_that_differs() {
    let dir = tempfile::tempdir().unwrap();
    let parts = partials(&["tnc:k=4", "coranking:k_max=6"]);
    // A field the report takes from the first partial, changed in another: named.
    for (field, value, shown) in [
        ("n", Value::from(299), "n 299 is not the first partial's 300"),
        ("specs", serde_json::json!(["tnc:k=4"]), "specs [\"tnc:k=4\"] is not the first partial's"),
        ("dim_low", Value::from(3), "dim_low 3 is not the first partial's 2"),
        ("projection", Value::from("other"), "projection \"other\" is not the first partial's"),
        ("metric_high", Value::from("cosine"), "metric_high \"cosine\" is not the first partial's"),
        ("input_high", Value::from("distance matrix"), "input_high \"distance matrix\" is not the first partial's"),
    ] {
        let mut changed = parts.clone();
        changed[2][field] = value;
        let files = write_parts(dir.path(), &changed);
        refused(&fold_args(&files, &[]), &["part-2.fpart", shown]);
    }
    // A co-ranking tally past what its rows can hold, in the first block of the plan: that
    // block is named (the overflow was blamed on the next block it was added to).
    for (key, at) in [("joint", 0), ("err_low", 3), ("err_high", 5), ("trust", 1), ("cont", 0)] {
        let mut changed = parts.clone();
        let wide = Value::from(u64::MAX);
        changed[0]["scores"][1]["counts"][key][at] = wide;
        let files = write_parts(dir.path(), &changed);
        refused(&fold_args(&files, &[]), &["part-0.fpart", &format!("{key}[{at}] = "), "can hold ("]);
    }
}

#[test]
fn fold_validates_specs_as_measure_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut part = partials(&["tnc:k=4", "coranking:k_max=6"]).remove(0);
    // n = 2 with k_max = 0 (n − 2): measure refuses it; fold panicked (exit 101).
    part["n"] = 2.into();
    part["rows"] = serde_json::json!([0, 2]);
    part["specs"] = serde_json::json!(["coranking:k_max=0"]);
    part["scores"] = serde_json::json!([part["scores"][1].clone()]);
    set_values(&mut part, 1.0);
    for local in part["scores"][0]["locals"].as_array_mut().unwrap() {
        local["bits"] = serde_json::json!([1f64.to_bits(), 1f64.to_bits()]);
        local["sum_bits"] = 2f64.to_bits().into();
    }
    part["scores"][0]["counts"]["n"] = 2.into();
    let files = write_parts(dir.path(), &[part]);
    refused(&fold_args(&files, &[]), &["part-0.fpart", "coranking", "k_max"]);
    // A k that measure refuses for n (tnc needs k < n/2).
    let mut parts = partials(&["tnc:k=4"]);
    for p in &mut parts {
        p["specs"] = serde_json::json!(["tnc:k=200"]);
    }
    refused(&fold_args(&write_parts(dir.path(), &parts), &[]), &["tnc", "k=200", "out of range"]);
    // A backend that is neither cpu nor gpu (it would be printed).
    let mut parts = partials(&["tnc:k=4"]);
    parts[1]["backend"] = "\u{1b}[2Jgpu".into();
    refused(&fold_args(&write_parts(dir.path(), &parts), &[]), &["neither cpu nor gpu", "\\u{1b}"]);
}

#[test]
fn fold_checks_the_first_bytes_before_reading_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    // 2 GiB (sparse: no disk) with a bad first byte: refused at once, not read whole.
    let big = dir.path().join("big.fpart");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(2 << 30).unwrap();
    (&f).write_all(b"X").unwrap();
    refused(&fold_args(&[big], &[]), &["big.fpart", "not a faithful partial", "does not begin as one"]);
    // Also when the bad byte comes after a plausible first one.
    let f = std::fs::OpenOptions::new().write(true).open(dir.path().join("big.fpart")).unwrap();
    (&f).write_all(b"{\"nonsense\"").unwrap();
    refused(&fold_args(&[dir.path().join("big.fpart")], &[]), &["not a faithful partial", "does not begin as one"]);
    // Any field order reads (a partial rewritten by another JSON tool): refused here only for
    // what it lacks.
    let junk = common::files::write(dir.path(), "junk.fpart", "{\"version\":1,\"format\":\"faithful-partial\"}");
    refused(&fold_args(&[junk], &[]), &["junk.fpart", "not a faithful partial", "missing field"]);
}

#[test]
fn fold_refuses_a_partial_that_would_hold_more_than_the_budget() {
    // 150 MB of `0,`: 75 million numbers, 8 bytes each (4× the file) once parsed: counted in
    // a streaming pass and refused before any is held, under the 1 GiB limit.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zeros.fpart");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    w.write_all(br#"{"format":"faithful-partial","version":1,"fingerprint":"x","n":10,"dim_high":1,"dim_low":1,"projection":"p","specs":["tnc"],"rows":[0,10],"scores":[{"id":"tnc","locals":[{"key":"local_trustworthiness","bits":["#).unwrap();
    let chunk = "0,".repeat(1 << 20);
    for _ in 0..75 {
        w.write_all(chunk.as_bytes()).unwrap();
    }
    w.write_all(br#"0],"sum_bits":0}],"counts":null}],"work":{"distance_rows":0,"ranks_from_knn":0,"ranks_counted":0,"rank_scans":0}}"#).unwrap();
    w.flush().unwrap();
    drop(w);
    let args = fold_args(std::slice::from_ref(&path), &[]);
    let r = run(&args, limited(), Stdio::piped());
    check_error(&r, &args, &["zeros.fpart", "numbers", "memory budget"]);
    // Counting 150 MB is a streaming read: allow a loaded machine its seconds.
    assert!(r.elapsed < Duration::from_secs(30), "took {:?}", r.elapsed);
    // And under an explicit budget, at once for a smaller one.
    refused(&fold_args(&[path], &["--memory-budget", "1M"]), &["zeros.fpart", "more numbers than the 26214"]);
}

#[test]
fn a_large_partial_folds_within_the_address_space_limit() {
    // One block of 3 million rows (tnc's two local keys: 6 million values, a 120 MB file):
    // read in two streaming passes and folded in a few times its values' 48 MB, under 1 GiB.
    let n = 3_000_000usize;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.fpart");
    let values: Vec<f64> = (0..n).map(|i| 0.5 + (i % 1000) as f64 / 4096.0).collect();
    let sum = faithful::sum::pairwise_sum(&values);
    // Built as a partial (sealed: its checksum) and written as its JSON.
    let head = format!(
        r#"{{"format":"faithful-partial","version":2,"fingerprint":"x","n":{n},"dim_high":3,"dim_low":2,"projection":"big","specs":["tnc:k=5"],"rows":[0,{n}],"scores":[{{"id":"tnc","locals":[{{"key":"local_trustworthiness","bits":[],"sum_bits":0}},{{"key":"local_continuity","bits":[],"sum_bits":0}}],"counts":null}}],"work":{{"distance_rows":0,"ranks_from_knn":0,"ranks_counted":0,"rank_scans":0}},"checksum":""}}"#
    );
    let mut part: faithful::Partial = serde_json::from_str(&head).unwrap();
    for l in &mut part.scores[0].locals {
        l.bits = values.iter().map(|v| v.to_bits()).collect();
        l.sum_bits = sum.to_bits();
    }
    part.seal();
    std::fs::write(&path, part.to_json()).unwrap();
    drop(part);
    let args = fold_args(&[path], &[]);
    let r = run(&args, limited(), Stdio::piped());
    let stderr = String::from_utf8_lossy(&r.out.stderr);
    assert_eq!(r.out.status.code(), Some(0), "{stderr}");
    let table = String::from_utf8_lossy(&r.out.stdout);
    let want = format!("{:.12}", sum / n as f64);
    assert!(table.contains(&want), "{want} not in {table}");
    // A fold this long ends on SIGTERM like every other command: one line, exit 130.
    let json = fold_args(&[dir.path().join("big.fpart")], &["--json"]);
    sigterm_ends_with_one_line(dir.path(), &json, Duration::from_millis(300));
}

#[test]
fn projection_names_are_escaped_in_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut parts = partials(&["tnc:k=4"]);
    // One run's partials share the name (it is in the fingerprint; one partial run alone).
    let mut p = parts.remove(0);
    p["projection"] = "evil\n\u{1b}]0;owned\u{7}name".into();
    p["n"] = 100.into();
    p["rows"] = serde_json::json!([0, 100]);
    for local in p["scores"][0]["locals"].as_array_mut().unwrap() {
        local["bits"] = vec![0.5f64.to_bits(); 100].into();
        local["sum_bits"] = 50f64.to_bits().into();
    }
    let files = write_parts(dir.path(), &[p]);
    let table = ok(&fold_args(&files, &[]));
    assert!(!table.contains('\u{1b}') && !table.contains('\u{7}'), "{table:?}");
    assert!(table.contains("projection: evil\\n\\u{1b}]0;owned\\u{7}name\n"), "{table}");
}

// ---------------------------------------------------------------------------------------------
// Output: closed stdout, atomic files, signals, the default budget
// ---------------------------------------------------------------------------------------------

fn commands(dir: &Path) -> Vec<Vec<OsString>> {
    let data = write_csv(dir, "d.csv", &random_rows(30, 3, 1, 0.0, 1.0));
    let low = write_csv(dir, "l.csv", &random_rows(30, 2, 2, 0.0, 1.0));
    let out = dir.join("out.npy");
    vec![
        os(&["measures"]),
        os(&["measure", "--backend", "cpu"]),
        with(os(&["knn", "--backend", "cpu", "--k", "3", "--out"]), &[&out])
            .into_iter()
            .chain(with(os(&["--data"]), &[&data]))
            .collect(),
        os(&["plan", "--n", "1000", "--max-rows", "100"]),
        os(&["backends"]),
        os(&["bench", "--backend", "cpu", "--sizes", "10", "--k", "3", "--kernels", "knn"]),
        with(os(&["shard", "--rows", "0:30", "--spec", "tnc:k=3", "--out"]), &[&dir.join("p.fpart")])
            .into_iter()
            .chain(with(os(&["--high"]), &[&data]))
            .chain(with(os(&["--low"]), &[&low]))
            .collect(),
    ]
}

#[test]
fn a_closed_stdout_is_an_error_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    for args in commands(dir.path()) {
        let before = listing(dir.path());
        let r = run(&args, Limits { close_stdout: true, ..Limits::default() }, Stdio::piped());
        let line = check_error(&r, &args, &["cannot write standard output", "Bad file descriptor"]);
        assert!(r.elapsed < PROMPT, "{line}");
        assert_eq!(listing(dir.path()), before, "{args:?} did work (wrote a file) with stdout closed");
    }
    // A closed stderr: nothing can say why, the exit code does, and nothing is done.
    let args = commands(dir.path()).remove(2);
    let r = run(&args, Limits { close_stderr: true, ..Limits::default() }, Stdio::piped());
    assert_eq!(r.out.status.code(), Some(2));
    assert!(r.out.stdout.is_empty());
    assert!(!dir.path().join("out.npy").exists());
}

/// Runs `args` once (good), then again under a 64-byte file-size limit (failed rewrite): the
/// first output files are still whole and nothing else was left in the folder.
#[track_caller]
fn failed_rewrite_keeps_the_good_file(dir: &Path, args: &[OsString], outputs: &[&Path]) {
    ok(args);
    let good: Vec<Vec<u8>> = outputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(good.iter().all(|g| g.len() > 64), "outputs too small for the test");
    let before = listing(dir);
    let r = run(args, Limits { file_size: Some(64), ..Limits::default() }, Stdio::piped());
    check_error(&r, args, &["cannot write"]);
    for (p, g) in outputs.iter().zip(&good) {
        assert_eq!(&std::fs::read(p).unwrap(), g, "{} was damaged by a failed rewrite", p.display());
    }
    assert_eq!(listing(dir), before, "a failed rewrite left files behind");
}

#[test]
fn output_files_survive_a_failed_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = write_npy_rows(d, "d.npy", &random_rows(50, 3, 1, 0.0, 1.0));
    let low = write_npy_rows(d, "l.npy", &random_rows(50, 2, 2, 0.0, 1.0));
    let (idx, dist) = (d.join("idx.npy"), d.join("dist.npy"));
    let knn: Vec<OsString> = with(os(&["knn", "--backend", "cpu", "--k", "4", "--data"]), &[&data])
        .into_iter()
        .chain(with(os(&["--out"]), &[&idx]))
        .chain(with(os(&["--distances"]), &[&dist]))
        .collect();
    failed_rewrite_keeps_the_good_file(d, &knn, &[&idx, &dist]);
    let part = d.join("part.fpart");
    let shard: Vec<OsString> = with(os(&["shard", "--rows", "0:50", "--spec", "tnc:k=4", "--high"]), &[&data])
        .into_iter()
        .chain(with(os(&["--low"]), &[&low]))
        .chain(with(os(&["--out"]), &[&part]))
        .collect();
    failed_rewrite_keeps_the_good_file(d, &shard, &[&part]);
    let receipt = d.join("r.json");
    let bench = with(
        os(&["bench", "--backend", "cpu", "--sizes", "10", "--k", "3", "--kernels", "knn", "--repeat", "1", "--json"]),
        &[&receipt],
    );
    failed_rewrite_keeps_the_good_file(d, &bench, &[&receipt]);
    // Writing through a symbolic link replaces its target and keeps the link.
    let link = d.join("link.npy");
    std::os::unix::fs::symlink(&idx, &link).unwrap();
    let again: Vec<OsString> = with(os(&["knn", "--backend", "cpu", "--k", "2", "--data"]), &[&data])
        .into_iter()
        .chain(with(os(&["--out"]), &[&link]))
        .collect();
    ok(&again);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&link).unwrap(), std::fs::read(&idx).unwrap());
    // A device is written in place, never replaced.
    let null: Vec<OsString> =
        with(os(&["knn", "--backend", "cpu", "--k", "2", "--out", "/dev/null", "--data"]), &[&data]);
    ok(&null);
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
}

/// Starts `args`, waits until it has run `after`, sends SIGTERM: exit 130, one line, and
/// nothing left in `dir` but what was there before.
#[track_caller]
fn sigterm_ends_with_one_line(dir: &Path, args: &[OsString], after: Duration) {
    let before = listing(dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    assert!(child.try_wait().unwrap().is_none(), "{args:?} finished before the signal: make it longer");
    // SAFETY: kill with a valid pid and signal.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(
        stderr.starts_with("faithful: interrupted") || stderr.starts_with("faithful: error: interrupted"),
        "{stderr}"
    );
    assert!(t0.elapsed() < PROMPT, "{args:?} took {:?} to stop", t0.elapsed());
    assert_eq!(listing(dir), before, "{args:?} left files behind");
}

#[test]
fn sigterm_ends_every_long_command_with_one_line_and_130() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = write_npy_rows(d, "d.npy", &random_rows(30_000, 64, 1, 0.0, 1.0));
    let low = write_npy_rows(d, "l.npy", &random_rows(30_000, 2, 2, 0.0, 1.0));
    let wait = Duration::from_millis(700);
    let knn = with(os(&["knn", "--backend", "cpu", "--k", "10", "--out"]), &[&d.join("i.npy")])
        .into_iter()
        .chain(with(os(&["--data"]), &[&data]))
        .collect::<Vec<_>>();
    sigterm_ends_with_one_line(d, &knn, wait);
    let shard = with(
        os(&["shard", "--threads", "1", "--backend", "cpu", "--rows", "0:30000", "--spec", "tnc", "--high"]),
        &[&data],
    )
    .into_iter()
    .chain(with(os(&["--low"]), &[&low]))
    .chain(with(os(&["--out"]), &[&d.join("p.fpart")]))
    .collect::<Vec<_>>();
    sigterm_ends_with_one_line(d, &shard, wait);
    let bench = with(
        os(&["bench", "--backend", "cpu", "--sizes", "30000", "--kernels", "knn", "--json"]),
        &[&d.join("r.json")],
    );
    sigterm_ends_with_one_line(d, &bench, wait);
    let measure: Vec<OsString> = with(os(&["measure", "--backend", "cpu", "--threads", "1", "--high"]), &[&data])
        .into_iter()
        .chain(with(os(&["--low"]), &[&low]))
        .collect();
    sigterm_ends_with_one_line(d, &measure, wait);
}

#[test]
fn the_default_memory_budget_respects_the_address_space_limit() {
    // k = 19 999 at n = 20 000: 4.8 GB of neighbour lists, within half of most machines'
    // memory but not within a 1 GiB address space: refused before any work, not aborted.
    let dir = tempfile::tempdir().unwrap();
    let data = write_npy_rows(dir.path(), "d.npy", &random_rows(20_000, 2, 1, 0.0, 1.0));
    let args = with(os(&["knn", "--backend", "cpu", "--k", "19999", "--data"]), &[&data]);
    refused(&args, &["knn: parameter k=19999", "memory budget"]);
}

// ---------------------------------------------------------------------------------------------
// Random command lines from the real option set
// ---------------------------------------------------------------------------------------------

#[test]
fn random_command_lines_are_a_result_or_one_error_line() {
    // Each command's own options (and some of the others'), each with a value from a pool of
    // valid and hostile ones: every run ends with exit 0, or exit 2 (3: the GPU asked for and
    // unable to serve) and exactly one prefixed stderr line; never a panic, an abort or usage
    // text; promptly, under the 1 GiB limit.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = write_csv(d, "d.csv", &random_rows(30, 3, 1, 0.0, 1.0));
    let low = write_csv(d, "l.csv", &random_rows(30, 2, 2, 0.0, 1.0));
    let labels = common::files::write(d, "y.csv", (0..30).map(|i| format!("{}\n", i % 3)).collect::<String>());
    let part = write_parts(d, &partials(&["tnc:k=4"]))[0].clone();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let long = "9".repeat(5000);
    let hostile: Vec<String> =
        ["-1", "0", "abc", "1e30", "18446744073709551616", "", "\u{1b}[2J", "--json", "/dev/null", "0:-1", &long]
            .iter()
            .map(|v| v.to_string())
            .collect();
    let paths = vec![s(&data), s(&low), s(&labels), s(&part), s(d), s(&d.join("missing.csv")), s(&d.join("o.npy"))];
    let counts: Vec<String> = ["1", "2", "3", "10", "30", "4294967296"].iter().map(|v| v.to_string()).collect();
    let options: Vec<(&str, Vec<String>)> = vec![
        ("--high", paths.clone()),
        ("--low", paths.clone()),
        ("--labels", paths.clone()),
        ("--data", paths.clone()),
        ("--out", paths.clone()),
        ("--distances", paths.clone()),
        ("--json", vec![]),
        ("--local", vec![]),
        (
            "--spec",
            ["tnc:k=3", "mrre", "srho", "nh", "tnc:k=99", "x:y=z", "coranking:k_max=0"].map(String::from).to_vec(),
        ),
        ("--k", counts.clone()),
        ("--threads", counts.clone()),
        ("--block-rows", counts.clone()),
        ("--memory-budget", ["1K", "512M", "2G", "99999999999T"].map(String::from).to_vec()),
        ("--backend", ["cpu", "cpu", "auto", "all", "tpu"].map(String::from).to_vec()),
        ("--numerics", ["exact", "fast", "approx"].map(String::from).to_vec()),
        ("--rows", ["0:30", "0:15", "15:30", "72", "30:0"].map(String::from).to_vec()),
        ("--n", counts.clone()),
        ("--max-rows", counts.clone()),
        ("--sizes", ["3", "10", "12,3"].map(String::from).to_vec()),
        ("--dims", ["2", "3", "4194304"].map(String::from).to_vec()),
        ("--repeat", ["1", "10001"].map(String::from).to_vec()),
        ("--kernels", ["knn", "pairs", "bogus"].map(String::from).to_vec()),
    ];
    let commands = ["measure", "knn", "shard", "fold", "plan", "bench", "backends", "measures", "bogus"];
    let mut rng = common::Rng(2024);
    for case in 0..80 {
        let cmd = commands[rng.below(commands.len() as u64) as usize];
        let mut args: Vec<String> = vec![cmd.into()];
        // The CPU unless drawn otherwise (no GPU start-up in every case).
        if matches!(cmd, "measure" | "knn" | "shard" | "bench") {
            args.extend(["--backend".into(), "cpu".into()]);
        }
        if cmd == "fold" {
            args.push(s(&part));
        }
        for _ in 0..rng.below(6) {
            let (flag, pool) = &options[rng.below(options.len() as u64) as usize];
            args.push(flag.to_string());
            if !pool.is_empty() {
                let from_hostile = rng.below(4) == 0;
                let v = if from_hostile {
                    hostile[rng.below(hostile.len() as u64) as usize].clone()
                } else {
                    pool[rng.below(pool.len() as u64) as usize].clone()
                };
                args.push(v);
            }
        }
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let r = run(&args, limited(), Stdio::piped());
        let stderr = String::from_utf8_lossy(&r.out.stderr).into_owned();
        assert!(!stderr.contains("panicked") && !stderr.contains("Usage"), "case {case} {args:?}: {stderr}");
        match r.out.status.code() {
            Some(0) => {}
            Some(2 | 3) => {
                let lines: Vec<&str> = stderr.lines().collect();
                assert_eq!(lines.len(), 1, "case {case} {args:?}: {stderr}");
                assert!(lines[0].starts_with("faithful: error: "), "case {case} {args:?}: {stderr}");
            }
            other => panic!("case {case} {args:?}: exit {other:?} (signal {:?}): {stderr}", r.out.status.signal()),
        }
        assert!(r.elapsed < Duration::from_secs(20), "case {case} {args:?} took {:?}", r.elapsed);
    }
}

/// An output that is one of the command's inputs (by another spelling of its path or a hard
/// link too) is refused before any work, and the input is left as it was: `report --out`,
/// `knn --out` / `--distances` (`shard --out`: tests/shard_cli.rs).
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let c = common::files::case();
    let (h, l) = (c.high.to_str().unwrap(), c.low.to_str().unwrap());
    let before = (std::fs::read(&c.high).unwrap(), std::fs::read(&c.low).unwrap());
    let dotted = c.path().join(".").join("low.csv");
    let linked = c.path().join("linked.csv");
    std::fs::hard_link(&c.low, &linked).unwrap();
    let (dotted, linked) = (dotted.to_str().unwrap(), linked.to_str().unwrap());
    for (args, phrases) in [
        (vec!["report", "--high", h, "--low", l, "--out", l], vec!["report", "--out", "is the --low file"]),
        (vec!["report", "--high", h, "--low", l, "--out", dotted], vec!["--out", "is the --low file"]),
        (vec!["report", "--high", h, "--low", l, "--out", linked], vec!["--out", "is the --low file"]),
        (vec!["report", "--high", h, "--low", l, "--out", h], vec!["--out", "is the --high file"]),
        (vec!["knn", "--data", h, "--k", "2", "--out", h], vec!["knn", "--out", "is the --data file"]),
        (vec!["knn", "--data", h, "--k", "2", "--distances", h], vec!["knn", "--distances", "is the --data file"]),
    ] {
        refused(&os(&args), &phrases);
    }
    assert_eq!((std::fs::read(&c.high).unwrap(), std::fs::read(&c.low).unwrap()), before);
    // A device is no input's copy: the report goes to /dev/null.
    ok(&os(&["report", "--high", h, "--low", l, "--out", "/dev/null", "--k", "3"]));
}

/// `report --max-size` below the smallest report (its scores alone): refused with the size it
/// needs, exit non-zero, and no file written (before, it was written over the limit, exit 0).
#[test]
fn a_report_limit_below_its_scores_is_refused_and_nothing_written() {
    let c = common::files::case();
    let (h, l) = (c.high.to_str().unwrap(), c.low.to_str().unwrap());
    let out = c.path().join("small.html");
    let o = out.to_str().unwrap();
    refused(
        &os(&["report", "--high", h, "--low", l, "--out", o, "--k", "3", "--max-size", "1K"]),
        &["report: parameter max_size=1024: the smallest report", " kB ("],
    );
    assert!(!out.exists());
}
