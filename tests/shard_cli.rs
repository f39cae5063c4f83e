//! `faithful plan`, `shard` and `fold` as separate processes (issue 16): the folded JSON is the
//! projections of `measure --json --local`, and bad partials are one-line errors, exit 2.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::expect_error;
use common::files::{self, write_csv};
use serde_json::Value;

fn faithful(args: &[OsString]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_faithful")).args(args).output().expect("binary runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Tie-heavy data: small integers.
fn tie_rows(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    files::random_rows(n, d, seed, 0.0, 4.0).into_iter().map(|r| r.into_iter().map(f64::floor).collect()).collect()
}

struct Files {
    dir: tempfile::TempDir,
    high: PathBuf,
    low: PathBuf,
    labels: PathBuf,
}

fn files(n: usize) -> Files {
    let dir = tempfile::tempdir().unwrap();
    let high = write_csv(dir.path(), "high.csv", &tie_rows(n, 4, 1));
    let low = write_csv(dir.path(), "low.csv", &tie_rows(n, 2, 2));
    let labels = files::write(dir.path(), "labels.csv", (0..n).map(|i| format!("{}\n", i % 3)).collect::<String>());
    Files { dir, high, low, labels }
}

const SPECS: [&str; 12] = [
    "--spec",
    "tnc:k=7",
    "--spec",
    "mrre:k=7",
    "--spec",
    "lcmc:k=7",
    "--spec",
    "nh:k=7",
    "--spec",
    "ca_tnc:k=7",
    "--spec",
    "coranking:k_max=30",
];

fn shard(f: &Files, rows: &str, out: &Path) {
    let mut a = os(&["shard", "--rows", rows, "--out"]);
    a.push(out.into());
    for (flag, p) in [("--high", &f.high), ("--low", &f.low), ("--labels", &f.labels)] {
        a.push(flag.into());
        a.push(p.into());
    }
    a.extend(os(&SPECS));
    faithful(&a);
}

/// Plans, shards every block in its own process, and returns the partials' paths.
fn shard_all(f: &Files, n: usize, max_rows: usize) -> Vec<PathBuf> {
    let plan = faithful(&os(&["plan", "--n", &n.to_string(), "--max-rows", &max_rows.to_string()]));
    plan.lines()
        .enumerate()
        .map(|(i, rows)| {
            let out = f.dir.path().join(format!("part-{i:03}.fpart"));
            shard(f, rows, &out);
            out
        })
        .collect()
}

#[test]
fn shard_and_fold_processes_equal_one_measure() {
    let n = 700;
    let f = files(n);
    let mut parts = shard_all(&f, n, 200);
    assert!(parts.len() >= 4, "{parts:?}");
    parts.reverse();
    let mut a = os(&["fold", "--json"]);
    a.extend(parts.iter().map(OsString::from));
    let folded: Value = serde_json::from_str(&faithful(&a)).unwrap();

    let mut m = os(&["measure", "--json", "--local", "--high"]);
    m.extend([f.high.clone().into(), "--low".into(), f.low.clone().into(), "--labels".into(), f.labels.clone().into()]);
    m.extend(os(&SPECS));
    let measured: Value = serde_json::from_str(&faithful(&m)).unwrap();
    assert_eq!(folded["projections"], measured["projections"]);
    assert_eq!(folded["run"]["n"], Value::from(n));

    // The table output names every key.
    let mut t = os(&["fold"]);
    t.extend(parts.iter().map(OsString::from));
    let table = faithful(&t);
    assert!(table.contains("trustworthiness") && table.contains("neighborhood_hit"), "{table}");

    // Re-running a shard writes the same bytes.
    let again = f.dir.path().join("again.fpart");
    let first = faithful(&os(&["plan", "--n", "700", "--max-rows", "200"])).lines().next().unwrap().to_string();
    shard(&f, &first, &again);
    let original = parts.iter().find(|p| p.ends_with("part-000.fpart")).unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(original).unwrap());
}

#[test]
fn bad_partials_are_one_line_errors() {
    let n = 300;
    let f = files(n);
    let parts = shard_all(&f, n, 150);
    let dir = f.dir.path();
    let fold = |files: &[&Path], phrases: &[&str]| {
        let mut a = os(&["fold"]);
        a.extend(files.iter().map(OsString::from));
        expect_error(&a, phrases)
    };
    let junk = files::write(dir, "junk.fpart", "not json at all");
    fold(&[&parts[0], &junk], &["junk.fpart", "not a faithful partial"]);
    let empty = files::write(dir, "empty.fpart", "");
    fold(&[&empty], &["empty.fpart", "not a faithful partial"]);
    let binary = files::write(dir, "binary.fpart", [0xffu8, 0xfe, 0x00, 0x01]);
    fold(&[&binary], &["binary.fpart"]);
    let text = std::fs::read_to_string(&parts[0]).unwrap();
    let newer = files::write(dir, "newer.fpart", text.replacen("\"version\":2", "\"version\":9", 1));
    fold(&[&newer], &["newer.fpart", "version 9"]);
    // One digit of the body changed (a co-ranking tally, a value's last bit: what no sum sees):
    // the checksum refuses it, naming the file.
    let at = text.find("\"bits\":[").unwrap() + 8;
    let digit = text[at..].find(|c: char| c.is_ascii_digit()).unwrap() + at;
    let mut b = text.clone().into_bytes();
    b[digit] = if b[digit] == b'9' { b'8' } else { b[digit] + 1 };
    let damaged = files::write(dir, "damaged.fpart", b);
    let mut whole: Vec<&Path> = parts[1..].iter().map(PathBuf::as_path).collect();
    whole.push(&damaged);
    fold(&whole, &["damaged.fpart", "checksum", "a damaged partial"]);
    fold(&[&dir.join("missing.fpart")], &["missing.fpart", "cannot read"]);
    fold(&[dir], &["not a regular file"]);
    // A gap and an overlap.
    let rest: Vec<&Path> = parts[1..].iter().map(PathBuf::as_path).collect();
    fold(&rest, &["are in no partial"]);
    let mut twice: Vec<&Path> = parts.iter().map(PathBuf::as_path).collect();
    twice.push(&parts[0]);
    fold(&twice, &["is given twice"]);
}

#[test]
fn shard_refuses_other_measures_and_off_plan_rows() {
    let f = files(300);
    let base = |rows: &str, spec: &str| {
        let mut a = os(&["shard", "--rows", rows, "--spec", spec, "--out"]);
        a.push(f.dir.path().join("x.fpart").into());
        a.extend(["--high".into(), f.high.clone().into(), "--low".into(), f.low.clone().into()]);
        a
    };
    expect_error(
        &os(&["plan", "--n", "1", "--max-rows", "10"]),
        &["--n '1': out of range: expected a whole number ≥ 2"],
    );
    expect_error(&base("0:300", "srho"), &["srho: cannot be computed in row shards"]);
    expect_error(&base("0:10", "tnc:k=5"), &["rows 0:10 are not a block of the shard plan for n=300"]);
    assert!(!f.dir.path().join("x.fpart").exists());
}

/// `--out` is checked before any input is read or any work done: a missing folder or a
/// directory is refused at once (not after the block's work), and so is an input's own path.
#[test]
fn shard_checks_its_output_before_any_work() {
    let f = files(300);
    let dir = f.dir.path();
    let args = |out: &Path, low: &Path| {
        let mut a = os(&["shard", "--rows", "0:300", "--spec", "tnc:k=5", "--out"]);
        a.push(out.into());
        a.extend(["--high".into(), f.high.clone().into(), "--low".into(), low.into()]);
        a
    };
    // The projection does not exist: the output's error comes first, so it was checked first.
    let missing = dir.join("no_such_low.npy");
    expect_error(&args(&dir.join("no_such_dir/part.fpart"), &missing), &["cannot write", "no_such_dir"]);
    expect_error(&args(dir, &missing), &["cannot write", "is a directory"]);
    // An input as the output: refused, and the input is untouched.
    let before = std::fs::read(&f.low).unwrap();
    expect_error(&args(&f.low, &f.low), &["--out", "is the --low file"]);
    expect_error(&args(&f.high, &f.low), &["--out", "is the --high file"]);
    assert_eq!(std::fs::read(&f.low).unwrap(), before);
}
