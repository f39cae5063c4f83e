//! Hostile parameters and numerics (issue 11): parameters that size memory are checked against
//! the memory budget before any work, seeds follow one rule, `--threads` is bounded, and no
//! measure ever reports a non-finite number: scale-free measures are scale-safe and any
//! non-finite score is a typed error. On the command line: exit 2 and one stderr line naming
//! the problem.

mod common;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;

use common::cli::{self, Limits};
use common::files::{measure_args, random_rows, write_csv, write_npy_rows};
use common::{Rng, points};
use faithful::{Error, Evaluator, Labels, Options, Points, Spec};
use tempfile::TempDir;

struct Case {
    _dir: TempDir,
    high: PathBuf,
    low: PathBuf,
    labels: PathBuf,
}

fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let high = write_csv(dir.path(), "high.csv", &random_rows(60, 5, 1, 0.0, 1.0));
    let low = write_csv(dir.path(), "low.csv", &random_rows(60, 2, 2, 0.0, 1.0));
    let labels = dir.path().join("labels.csv");
    std::fs::write(&labels, (0..60).map(|i| (i % 3).to_string()).collect::<Vec<_>>().join("\n")).unwrap();
    Case { _dir: dir, high, low, labels }
}

/// (exit code, stdout, stderr) of the binary.
fn run(args: &[OsString]) -> (Option<i32>, String, String) {
    let out = cli::run(args, Limits::default(), Stdio::piped()).out;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit 2, in bounded time, with exactly one stderr line containing every phrase (the CLI's
/// error contract, `common::cli::check_error`).
fn expect_error(c: &Case, extra: &[&str], phrases: &[&str]) -> String {
    let mut all = vec!["--labels", c.labels.to_str().unwrap(), "--backend", "cpu"];
    all.extend_from_slice(extra);
    let args = measure_args(&c.high, &[&c.low], &all);
    let r = cli::run(&args, Limits::default(), Stdio::piped());
    assert!(r.elapsed < cli::PROMPT, "{extra:?}: took {:?}", r.elapsed);
    cli::check_error(&r, &args, phrases)
}

fn expect_ok(c: &Case, extra: &[&str]) -> String {
    let mut all = vec!["--labels", c.labels.to_str().unwrap(), "--backend", "cpu", "--json"];
    all.extend_from_slice(extra);
    let (code, stdout, stderr) = run(&measure_args(&c.high, &[&c.low], &all));
    assert_eq!(code, Some(0), "{extra:?}: {stderr}");
    assert!(stderr.is_empty(), "{extra:?}: stderr must be empty: {stderr}");
    stdout
}

#[test]
fn n_triplets_beyond_the_memory_budget_is_refused_before_any_work() {
    let c = case();
    // 10^12 triplets would abort on allocation; 10^8 would take ~3 GB.
    expect_error(
        &c,
        &["--spec", "cadi:n_triplets=1000000000000"],
        &["cadi", "n_triplets=1000000000000", "32000000000000 bytes", "memory budget"],
    );
    expect_error(
        &c,
        &["--spec", "cadi:n_triplets=100000000", "--memory-budget", "1G"],
        &["n_triplets=100000000", "3200000000 bytes", "1073741824"],
    );
    expect_error(&c, &["--spec", "cadi:n_triplets=-1"], &["cadi", "n_triplets=-1", "zero or greater"]);
    expect_ok(&c, &["--spec", "cadi:n_triplets=1000", "--memory-budget", "1M"]);
}

#[test]
fn k_sizes_neighbour_lists_within_the_memory_budget() {
    let c = case();
    // n = 60, k = 29: 60·29·(12 + 12 + 24) bytes of lists and cross ranks = 83520.
    expect_error(&c, &["--spec", "tnc:k=29", "--memory-budget", "64K"], &["tnc", "k=29", "83520 bytes", "65536"]);
    expect_ok(&c, &["--spec", "tnc:k=29", "--memory-budget", "128K"]);
    // `faithful knn` too: 60·29·12 bytes = 20880.
    let (code, _, stderr) = run(&[
        "knn".into(),
        "--data".into(),
        c.high.clone().into(),
        "--k".into(),
        "29".into(),
        "--memory-budget".into(),
        "16K".into(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("knn: parameter k=29 needs 20880 bytes"), "{stderr}");
    // In the library, the same typed error.
    let high = points("high", 60, 3, |i, c| ((i * 7 + c * 3) % 11) as f64);
    let low = points("low", 60, 2, |i, c| ((i * 5 + c) % 13) as f64);
    let opts = {
        let mut o = Options::default();
        o.memory_budget = Some(1 << 10);
        o
    };
    let err = Evaluator::new(high, opts).measure(&low, None, &["lcmc:k=10".parse::<Spec>().unwrap()]).unwrap_err();
    assert!(matches!(&err, Error::ParamMemory { id, param, .. } if id == "lcmc" && param == "k"), "{err:?}");
}

#[test]
fn seeds_follow_one_rule() {
    let c = case();
    // Each seed's range is its NumPy generator's: RandomState (l_tnc) 32 bits, default_rng
    // (cadi) any non-negative integer (faithful: 63 bits).
    for spec in ["l_tnc:cvm=ch_btw,random_seed=4294967296", "l_tnc:random_seed=-1"] {
        expect_error(&c, &["--spec", spec], &["random_seed", "0 <= seed < 2^32"]);
    }
    expect_error(&c, &["--spec", "cadi:random_seed=-1"], &["random_seed", "0 <= seed < 2^63"]);
    expect_error(&c, &["--spec", "cadi:random_seed=1.5"], &["random_seed=1.5"]);
    // The largest seed is accepted, and l_tnc's no longer wraps: 2^32 - 1 is not 2^32 + (2^32 - 1).
    expect_ok(&c, &["--spec", "l_tnc:cvm=ch_btw,random_seed=4294967295"]);
    expect_ok(&c, &["--spec", "cadi:random_seed=4294967295"]);
    // default_rng takes seeds past 2^32 (tests/cluster_measures.rs holds one to ZADU's score).
    expect_ok(&c, &["--spec", "cadi:random_seed=4294967296"]);
    expect_ok(&c, &["--spec", "cadi:random_seed=9223372036854775807"]);
}

#[test]
fn threads_are_bounded_and_zero_means_all_cores() {
    let c = case();
    expect_error(&c, &["--threads", "65535"], &["--threads 65535", "1024"]);
    expect_error(&c, &["--threads", "1025"], &["1024"]);
    let all = expect_ok(&c, &["--threads", "0"]);
    let v: serde_json::Value = serde_json::from_str(&all).unwrap();
    let want = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(v["run"]["threads"], want, "--threads 0 must use every core");
    let two: serde_json::Value = serde_json::from_str(&expect_ok(&c, &["--threads", "2"])).unwrap();
    assert_eq!(two["run"]["threads"], 2);
    assert_eq!(two["projections"], v["projections"]);
    let err = Evaluator::new(points("h", 10, 2, |i, c| (i + c) as f64), {
        let mut o = Options::default();
        o.threads = Some(5000);
        o
    })
    .measure(&points("l", 10, 1, |i, _| i as f64), None, &["tnc:k=2".parse::<Spec>().unwrap()])
    .unwrap_err();
    assert!(matches!(&err, Error::TooManyThreads { threads: 5000, limit: 1024 }), "{err:?}");
    assert!(err.to_string().contains("1024"), "{err}");
}

/// A projection of generic data scaled by `s`.
fn scaled(low: &Points, s: f64) -> Points {
    points("low", low.n(), low.dim(), |i, c| low.row(i)[c] * s)
}

fn value(eval: &Evaluator, low: &Points, spec: &str) -> f64 {
    let scores = eval.measure(low, None, &[spec.parse::<Spec>().unwrap()]).unwrap();
    scores[0].values[0].1
}

#[test]
fn scale_free_measures_are_scale_safe() {
    let mut rng = Rng(5);
    let high = points("high", 150, 5, |_, _| rng.uniform());
    let low = points("low", 150, 2, |_, _| rng.uniform());
    let eval = Evaluator::new(high, Options::default());
    for spec in ["sn_stress", "pr"] {
        let want = value(&eval, &low, spec);
        for s in [1e100, 1e140, 1e-100, 1e-160, 2f64.powi(300)] {
            let got = value(&eval, &scaled(&low, s), spec);
            assert!((got - want).abs() <= 1e-14 * want.abs(), "{spec} at scale {s:e}: {got} vs {want}");
        }
    }
    // An exact power of two inside the safe range changes nothing, bit for bit.
    assert_eq!(value(&eval, &scaled(&low, 1024.0), "sn_stress").to_bits(), value(&eval, &low, "sn_stress").to_bits());
}

#[test]
fn no_measure_prints_a_non_finite_number() {
    // Every measure, on ordinary and on extreme projections: each either scores finite numbers
    // or fails with one line; the JSON never holds null.
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(9);
    let rows = |n: usize, d: usize, s: f64, rng: &mut Rng| {
        (0..n).map(|_| (0..d).map(|_| rng.uniform() * s).collect()).collect::<Vec<Vec<f64>>>()
    };
    let high = write_npy_rows(dir.path(), "high.npy", &rows(80, 4, 1.0, &mut rng));
    let labels = dir.path().join("labels.csv");
    std::fs::write(&labels, (0..80).map(|i| (i % 4).to_string()).collect::<Vec<_>>().join("\n")).unwrap();
    let ids: Vec<&str> = faithful::measures::REGISTRY.iter().map(|d| d.id).collect();
    for s in [1.0, 1e100, 1e-100, 1e-160] {
        let low = write_npy_rows(dir.path(), &format!("low{s:e}.npy"), &rows(80, 2, s, &mut rng));
        for id in &ids {
            let spec = if ["tnc", "ca_tnc"].contains(id) { format!("{id}:k=10") } else { id.to_string() };
            let args = measure_args(
                &high,
                &[&low],
                &["--labels", labels.to_str().unwrap(), "--spec", &spec, "--local", "--json", "--backend", "cpu"],
            );
            let (code, stdout, stderr) = run(&args);
            match code {
                Some(0) => {
                    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                    let scores = v["projections"].to_string();
                    assert!(!scores.contains("NaN"), "{id} at {s:e}: {scores}");
                    for score in v["projections"][0]["scores"].as_array().unwrap() {
                        for (k, x) in score["values"].as_object().unwrap() {
                            assert!(x.as_f64().is_some_and(f64::is_finite), "{id} at {s:e}: {k} = {x}");
                        }
                        // null only where the kind says a point may have no value.
                        for (k, xs) in score["local"].as_object().into_iter().flatten() {
                            let kind = score["local_kinds"][k].as_str().unwrap();
                            let nullable = ["partial_mean", "log_ratio"].contains(&kind);
                            for x in xs.as_array().unwrap() {
                                assert!(
                                    x.as_f64().is_some_and(f64::is_finite) || (nullable && x.is_null()),
                                    "{id} at {s:e}: {k} has {x}"
                                );
                            }
                        }
                    }
                }
                Some(2) => assert_eq!(stderr.lines().count(), 1, "{id} at {s:e}: {stderr}"),
                other => panic!("{id} at {s:e}: exit {other:?}: {stderr}"),
            }
        }
    }
}

#[test]
fn a_non_finite_score_is_a_typed_error() {
    // Identical points in the projection except one: per-point Procrustes and friends stay
    // defined, but a 0/0 anywhere must surface as NonFiniteScore or Undefined, never as NaN.
    let high = points("high", 30, 3, |i, c| ((i * 3 + c) % 7) as f64);
    let low = points("low", 30, 2, |i, _| if i == 0 { 1.0 } else { 0.0 });
    let labels = Labels::new((0..30).map(|i| (i % 3) as i64).collect());
    let eval = Evaluator::new(high, {
        let mut o = Options::default();
        o.local = true;
        o
    });
    for def in faithful::measures::REGISTRY {
        let text = match def.id {
            _ if def.params.iter().any(|p| p.name == "k") => format!("{}:k=5", def.id),
            "cca_stress" => "cca_stress:lambda=1".into(),
            "nerv" => "nerv:perplexity=5".into(),
            _ => def.id.to_string(),
        };
        let spec: Spec = text.parse().unwrap();
        match eval.measure(&low, Some(&labels), &[spec]) {
            Ok(scores) => {
                for s in &scores {
                    assert!(s.values.iter().all(|(_, v)| v.is_finite()), "{}: {:?}", def.id, s.values);
                    for (k, l) in s.local.iter().flatten() {
                        let nullable = s.local_kind(k).is_some_and(|k| k.allows_missing());
                        assert!(
                            l.iter().all(|v| v.is_finite() || (nullable && v.is_nan())),
                            "{}: non-finite local value",
                            def.id
                        );
                    }
                }
            }
            Err(Error::NonFiniteScore { id, key, .. }) => assert!(id == def.id && !key.is_empty()),
            Err(e) => assert!(!e.to_string().contains("NaN"), "{}: {e}", def.id),
        }
    }
}

/// Original coordinates within faithful's range (|x| < 1e150) whose squared distances still
/// sum past f64's range (300 points of 4000 coordinates ±0.99e150): the all-pairs sums of the
/// original space overflow, and the measures built on them say so, never a NaN or an infinite
/// score blamed on the projection; the measures whose sums stay finite still score.
#[test]
fn sums_of_squared_original_distances_that_overflow_are_named() {
    let mut rng = Rng(7);
    let high = points("high", 300, 4000, |_, _| if rng.uniform() < 0.5 { -0.99e150 } else { 0.99e150 });
    let low = points("low", 300, 2, |i, c| ((i * 7 + c * 3) % 11) as f64);
    let eval = Evaluator::new(high, Options::default());
    for id in ["stress", "sn_stress"] {
        let err = eval.measure(&low, None, &[id.parse::<Spec>().unwrap()]).unwrap_err();
        let text = err.to_string();
        assert!(matches!(&err, Error::Undefined { .. }), "{id}: {err:?}");
        assert!(
            text.contains("the sum of the squared original distances overflows f64 (the largest original distance is"),
            "{id}: {text}"
        );
    }
    for spec in ["sammon", "pr", "srho", "nm_stress"] {
        let v = value(&eval, &low, spec);
        assert!(v.is_finite(), "{spec}: {v}");
    }
}

/// The measures beyond ZADU on the smallest and most degenerate inputs: n = 2 and 3, every point
/// identical in both spaces, a constant projection, duplicates only. Each gives finite values
/// (nulls only in a kind that allows them) or a typed error naming the measure, never a NaN.
#[test]
fn new_measures_on_hostile_inputs_give_a_value_or_a_typed_error() {
    let specs = [
        "sammon",
        "cca_stress:lambda=1",
        "cca_stress:lambda=0.5,kernel=step",
        "residual_variance",
        "nerv:perplexity=1",
        "nerv:perplexity=1,bandwidth=shared",
        "knn_overlap:k=1",
        "ale",
        "density_preservation:k=1",
        "triplet_accuracy",
        "triplet_accuracy:exhaustive=true",
        "global_score",
    ];
    let cases: Vec<(&str, Points, Points)> = vec![
        ("n=2", points("h", 2, 3, |i, c| (i + c) as f64), points("l", 2, 2, |i, c| (i * c) as f64)),
        ("n=3", points("h", 3, 3, |i, c| (i * i + c) as f64), points("l", 3, 2, |i, c| (i + 2 * c) as f64)),
        ("identical", points("h", 12, 3, |_, _| 1.5), points("l", 12, 2, |_, _| -2.0)),
        ("constant projection", points("h", 12, 3, |i, c| ((i * 5 + c) % 7) as f64), points("l", 12, 2, |_, _| 3.0)),
        ("duplicates only", points("h", 12, 3, |i, c| (i % 2 + c) as f64), points("l", 12, 2, |i, _| (i % 2) as f64)),
    ];
    let mut defined = 0;
    for (what, high, low) in &cases {
        let eval = Evaluator::builder(high.clone()).local(true).build();
        for text in specs {
            let spec: Spec = text.parse().unwrap();
            match eval.measure(low, None, &[spec]) {
                Ok(scores) => {
                    defined += 1;
                    for s in &scores {
                        assert!(s.values.iter().all(|(_, v)| v.is_finite()), "{text} on {what}: {:?}", s.values);
                        for (k, l) in s.local.iter().flatten() {
                            let nullable = s.local_kind(k).is_some_and(|k| k.allows_missing());
                            assert!(
                                l.iter().all(|v| v.is_finite() || (nullable && v.is_nan())),
                                "{text} on {what}: {k}"
                            );
                        }
                    }
                }
                Err(e) => {
                    let id = text.split(':').next().unwrap();
                    let msg = e.to_string();
                    assert!(msg.starts_with(id) || msg.contains(&format!("{id}:")), "{text} on {what}: {msg}");
                    assert!(!msg.contains("NaN") && !msg.contains("panic"), "{text} on {what}: {msg}");
                }
            }
        }
    }
    assert!(defined > 20, "{defined} defined results");
}

/// Issue 27's class separation, topology and scatterplot measures on the smallest and most degenerate inputs,
/// with labels: n = 2 and 3, every point identical, a collinear projection (the Gabriel graph's
/// and the gap index's hard case), a single class, a class with one member. Each gives finite
/// values (nulls only in a kind that allows them) or a typed error naming the measure, never a NaN.
#[test]
fn class_and_topology_measures_on_hostile_inputs() {
    let specs = [
        "ivm:measure=dunn",
        "ivm:measure=average_between_within",
        "hypothesis_margin",
        "knn_classification:k=1",
        "topology:dim=0",
        "topology:dim=1",
        "gce",
        "scagnostics",
    ];
    let cases: Vec<(&str, Points, Points, Vec<i64>)> = vec![
        ("n=2", points("h", 2, 3, |i, c| (i + c) as f64), points("l", 2, 2, |i, c| (i * c) as f64), vec![0, 1]),
        (
            "n=3",
            points("h", 3, 3, |i, c| (i * i + c) as f64),
            points("l", 3, 2, |i, c| (i + 2 * c) as f64),
            vec![0, 1, 0],
        ),
        (
            "identical",
            points("h", 12, 3, |_, _| 1.5),
            points("l", 12, 2, |_, _| -2.0),
            (0..12).map(|i| i % 3).collect(),
        ),
        (
            "collinear projection",
            points("h", 12, 3, |i, c| ((i * 5 + c) % 7) as f64),
            points("l", 12, 2, |i, c| (i * (c + 1)) as f64),
            (0..12).map(|i| i % 2).collect(),
        ),
        (
            "single class",
            points("h", 12, 3, |i, c| ((i * 5 + c) % 7) as f64),
            points("l", 12, 2, |i, c| ((i * 3 + c * 5) % 11) as f64),
            vec![4; 12],
        ),
        (
            "a class of one",
            points("h", 12, 3, |i, c| ((i * 5 + c) % 7) as f64),
            points("l", 12, 2, |i, c| ((i * 3 + c * 5) % 11) as f64),
            (0..12).map(|i| i64::from(i > 0) + (i % 2) as i64 * i64::from(i > 0)).collect(),
        ),
    ];
    let (mut defined, mut refused) = (0, 0);
    for (what, high, low, labels) in &cases {
        let labels = Labels::new(labels.clone());
        let eval = Evaluator::builder(high.clone()).local(true).build();
        for text in specs {
            let spec: Spec = text.parse().unwrap();
            match eval.measure(low, Some(&labels), &[spec]) {
                Ok(scores) => {
                    defined += 1;
                    for s in &scores {
                        assert!(s.values.iter().all(|(_, v)| v.is_finite()), "{text} on {what}: {:?}", s.values);
                        for (k, l) in s.local.iter().flatten() {
                            let nullable = s.local_kind(k).is_some_and(|k| k.allows_missing());
                            assert!(
                                l.iter().all(|v| v.is_finite() || (nullable && v.is_nan())),
                                "{text} on {what}: {k} {l:?}"
                            );
                        }
                        for (k, c) in &s.curves {
                            assert!(c.iter().all(|v| v.is_finite()), "{text} on {what}: curve {k}");
                        }
                    }
                }
                Err(e) => {
                    refused += 1;
                    let id = text.split(':').next().unwrap();
                    let msg = e.to_string();
                    assert!(msg.contains(id), "{text} on {what}: {msg}");
                    assert!(!msg.contains("NaN") && !msg.contains("panic"), "{text} on {what}: {msg}");
                }
            }
        }
    }
    assert!(defined > 15 && refused > 5, "{defined} defined, {refused} refused");
}
