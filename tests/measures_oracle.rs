//! The measures beyond ZADU (issue 26) against a dense NumPy oracle
//! (`tests/fixtures/measures/generate_oracle.py`, outputs committed): generic data, duplicates,
//! an integer lattice with 1e-9 jitter and a 3-D projection. Counts and decisions (kNN overlap,
//! true/false/missing neighbours, triplet accuracy) are identical; sums within 1e-12 relative.
//! Also: the same bits for 1 and 2 threads and several block sizes, and every local output
//! keeps the promise of its declared kind.

use std::path::{Path, PathBuf};

use faithful::{Evaluation, Evaluator, Labels, LocalKind, Points, Score, Spec};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/measures")
}

fn dataset(name: &str) -> (Points, Points) {
    let dir = fixtures().join(name);
    (faithful::read_points(dir.join("hd.npy")).unwrap(), faithful::read_points(dir.join("ld.npy")).unwrap())
}

fn oracle() -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join("oracle.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["results"].as_array().unwrap().clone()
}

fn run(high: &Points, low: &Points, specs: &[Spec], threads: usize, block_rows: usize) -> Evaluation {
    let eval = Evaluator::builder(high.clone()).local(true).threads(threads).block_rows(block_rows).build();
    eval.measure_many(&[low], None, specs).unwrap()
}

/// Counts and decisions: identical.
fn exact_key(key: &str) -> bool {
    matches!(
        key,
        "triplet_accuracy"
            | "local_knn_overlap"
            | "local_jaccard"
            | "true_neighbours"
            | "false_neighbours"
            | "missing_neighbours"
    )
}

#[track_caller]
fn assert_close(what: &str, got: f64, want: f64, scale: f64) {
    let tol = 1e-12 * want.abs().max(scale);
    assert!((got - want).abs() <= tol, "{what}: faithful {got:e}, oracle {want:e} (diff {:e})", (got - want).abs());
}

#[test]
fn every_new_measure_matches_the_dense_numpy_oracle() {
    let mut checked = 0usize;
    let mut current: Option<(String, Points, Points)> = None;
    for r in oracle() {
        let name = r["dataset"].as_str().unwrap();
        if current.as_ref().is_none_or(|(n, _, _)| n != name) {
            let (h, l) = dataset(name);
            current = Some((name.to_string(), h, l));
        }
        let (_, high, low) = current.as_ref().unwrap();
        let text = r["spec"].as_str().unwrap();
        let spec: Spec = text.parse().unwrap();
        let ev = run(high, low, &[spec], 0, 32);
        let score = &ev.projections[0].scores[0];
        let what = format!("{name} {text}");
        for (key, want) in r["values"].as_object().unwrap() {
            let (want, got) = (want.as_f64().unwrap(), score.value(key).unwrap_or_else(|| panic!("{what}: no {key}")));
            if exact_key(key) {
                assert_eq!(got.to_bits(), want.to_bits(), "{what} {key}: {got} vs {want}");
            } else {
                assert_close(&format!("{what} {key}"), got, want, 1e-300);
            }
            checked += 1;
        }
        for (key, want) in r["local"].as_object().unwrap() {
            let want = want.as_array().unwrap();
            let got = score.local(key).unwrap_or_else(|| panic!("{what}: no local {key}"));
            assert_eq!(got.len(), want.len(), "{what} {key}");
            let scale = want.iter().filter_map(Value::as_f64).map(f64::abs).sum::<f64>() / want.len() as f64;
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                match w.as_f64() {
                    // null: the point has no value (NaN in Rust, never 0).
                    None => assert!(g.is_nan(), "{what} {key}[{i}]: {g}, oracle null"),
                    Some(w) if exact_key(key) => assert_eq!(g.to_bits(), w.to_bits(), "{what} {key}[{i}]"),
                    Some(w) => assert_close(&format!("{what} {key}[{i}]"), *g, w, scale),
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20_000, "{checked} values checked");
}

/// Every new measure, all at once (one sweep shared with stress and pr), on tie-heavy data.
fn all_specs() -> Vec<Spec> {
    [
        "sammon",
        "cca_stress:lambda=1.5",
        "cca_stress:lambda=2,kernel=step",
        "residual_variance",
        "stress",
        "pr",
        "sn_stress",
        "nerv:perplexity=10",
        "nerv:perplexity=10,bandwidth=shared,lambda=0.3",
        "knn_overlap:k=7",
        "ale",
        "density_preservation:k=6",
        "triplet_accuracy:random_state=5",
        "global_score",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

fn bits(ev: &Evaluation) -> Vec<(String, Vec<u64>)> {
    let s = |sc: &Score| {
        let mut v: Vec<u64> = sc.values.iter().map(|(_, x)| x.to_bits()).collect();
        for (_, l) in sc.local.iter().flatten() {
            v.extend(l.iter().map(|x| x.to_bits()));
        }
        (sc.id.clone(), v)
    };
    ev.projections[0].scores.iter().map(s).collect()
}

#[test]
fn the_same_bits_for_any_thread_count_and_block_size() {
    for name in ["lattice_400", "duplicates_240"] {
        let (high, low) = dataset(name);
        let want = bits(&run(&high, &low, &all_specs(), 1, 32));
        for (threads, block) in [(2, 32), (1, 1), (2, 7), (2, 64), (1, 1000)] {
            assert_eq!(
                bits(&run(&high, &low, &all_specs(), threads, block)),
                want,
                "{name}: {threads} threads, blocks of {block}"
            );
        }
        // Measured alone (each its own pass) they give the same bits as together.
        for (spec, together) in all_specs().into_iter().zip(&want) {
            let alone = bits(&run(&high, &low, std::slice::from_ref(&spec), 2, 13));
            assert_eq!(&alone[0], together, "{name}: {spec} alone");
        }
    }
}

/// The pair sums from the full-row sweep are those of the half-row pass, bit for bit, and the
/// run report says the sweep ran (once) and how many pairs Sammon left out.
#[test]
fn the_sweep_shares_one_pass_with_the_pair_sums() {
    let (high, low) = dataset("duplicates_240");
    let alone: Vec<Spec> = ["stress", "pr", "sn_stress"].iter().map(|s| s.parse().unwrap()).collect();
    let a = run(&high, &low, &alone, 2, 32);
    let mut with: Vec<Spec> = alone.clone();
    with.push("sammon".parse().unwrap());
    let b = run(&high, &low, &with, 2, 32);
    for (x, y) in a.projections[0].scores.iter().zip(&b.projections[0].scores) {
        assert_eq!(x.values, y.values, "{} with and without sammon", x.id);
    }
    let report = serde_json::to_value(&b.run).unwrap();
    let pw = &report["plan"]["pairwise"];
    assert_eq!(pw["full_row_sweep"], true);
    // The pair sums come with it: each pair in each of its rows.
    assert_eq!(pw["full_row_sweep_tiled"], false);
    // Alone, Sammon's sums come from the tiles, each pair once for both rows: the same bits
    // and the same count of pairs left out.
    let c = run(&high, &low, &["sammon".parse().unwrap()], 2, 32);
    let tiled = serde_json::to_value(&c.run).unwrap();
    assert_eq!(tiled["plan"]["pairwise"]["full_row_sweep_tiled"], true);
    assert_eq!(tiled["plan"]["pairwise"]["zero_high_pairs"], pw["zero_high_pairs"]);
    let sammon = |e: &Evaluation| e.projections[0].scores.iter().find(|s| s.id == "sammon").unwrap().values.clone();
    assert_eq!(sammon(&c), sammon(&b));
    // Ten copies of one point in X (45 pairs) and the duplicates of the generator.
    let zero = pw["zero_high_pairs"].as_u64().unwrap();
    let n = high.n();
    let mut want = 0u64;
    for i in 0..n {
        for j in i + 1..n {
            want += u64::from(high.row(i) == high.row(j));
        }
    }
    assert_eq!(zero, want);
    assert!(zero >= 45);
}

/// Each local output keeps its kind's promise on real data: a `mean` averages to its value, a
/// `sum` sums to it, a `count` holds whole numbers, a `log_ratio` is centred and null only
/// where it has no value. Every measure with local values, old and new.
#[test]
fn local_values_keep_the_promise_of_their_kind() {
    let (high, low) = dataset("generic_300");
    let labels = Labels::new((0..high.n()).map(|i| (high.row(i)[0] > 0.0) as i64 + 2 * (i % 2) as i64).collect());
    let specs: Vec<Spec> = [
        "tnc:k=10",
        "mrre:k=10",
        "lcmc:k=10",
        "nh:k=10",
        "ca_tnc:k=10",
        "coranking:k_max=40",
        "snc:iteration=10",
        "sammon",
        "cca_stress:lambda=4",
        "nerv:perplexity=12",
        "knn_overlap:k=10",
        "ale",
        "density_preservation:k=10",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    let eval = Evaluator::builder(high.clone()).local(true).build();
    let ev = eval.measure_many(&[&low], Some(&labels), &specs).unwrap();
    let mut seen = std::collections::HashSet::new();
    for sc in &ev.projections[0].scores {
        let local = sc.local.as_ref().unwrap_or_else(|| panic!("{} has local values", sc.id));
        for (l, (key, v)) in local.iter().enumerate() {
            let kind = sc.local_kind(key).unwrap_or_else(|| panic!("{}: {key} has a kind", sc.id));
            seen.insert(kind);
            let value = sc.values.get(l).map(|(_, x)| *x);
            let finite: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
            let total: f64 = finite.iter().sum();
            let what = format!("{} {key} ({kind:?})", sc.id);
            match kind {
                LocalKind::Mean => {
                    assert_eq!(finite.len(), v.len(), "{what}: every point has a value");
                    assert_close(&what, total / v.len() as f64, value.unwrap(), 1e-3);
                }
                LocalKind::Sum => assert_close(&what, total, value.unwrap(), 1e-3),
                LocalKind::Count => {
                    assert!(v.iter().all(|x| x.fract() == 0.0 && *x >= 0.0), "{what}: whole numbers");
                }
                LocalKind::LogRatio => assert!((total / finite.len() as f64).abs() < 1e-12, "{what}: centred"),
                LocalKind::Score => assert_eq!(finite.len(), v.len(), "{what}"),
                other => panic!("{what}: no measure here declares {other:?}"),
            }
        }
    }
    for kind in [LocalKind::Mean, LocalKind::Sum, LocalKind::Count, LocalKind::LogRatio, LocalKind::Score] {
        assert!(seen.contains(&kind), "{kind:?} was checked");
    }
}

/// The class separation measures of issue 27 (ivm's dunn and average_between_within,
/// hypothesis_margin, knn_classification) against a dense NumPy / scikit-learn oracle
/// (`generate_classes.py` → `classes.json`) on the four datasets, each with a labeling from the
/// data and a random one with a class of one point: accuracies, votes and Dunn's ratio of two
/// exact distances identical; sums within 1e-12 relative; nulls where a point has no near hit.
#[test]
fn class_measures_match_the_dense_numpy_oracle() {
    let text = std::fs::read_to_string(fixtures().join("classes.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    let exact = |key: &str| key.starts_with("knn_accuracy") || key == "local_knn_accuracy_low" || key == "dunn";
    let (mut checked, mut nulls) = (0usize, 0usize);
    for r in all["results"].as_array().unwrap() {
        let name = r["dataset"].as_str().unwrap();
        let (high, low) = dataset(name);
        let labels_file = fixtures().join(name).join(format!("{}.npy", r["labels"].as_str().unwrap()));
        let labels = faithful::read_labels(labels_file).unwrap();
        let text = r["spec"].as_str().unwrap();
        let eval = Evaluator::builder(high.clone()).local(true).block_rows(32).build();
        let ev = eval.measure_many(&[&low], Some(&labels), &[text.parse().unwrap()]).unwrap();
        let score = &ev.projections[0].scores[0];
        let what = format!("{name} {} {text}", r["labels"]);
        for (key, want) in r["values"].as_object().unwrap() {
            let (want, got) = (want.as_f64().unwrap(), score.value(key).unwrap_or_else(|| panic!("{what}: no {key}")));
            if exact(key) {
                assert_eq!(got.to_bits(), want.to_bits(), "{what} {key}: {got} vs {want}");
            } else {
                assert_close(&format!("{what} {key}"), got, want, 1e-300);
            }
            checked += 1;
        }
        for (key, want) in r["local"].as_object().unwrap() {
            let got = score.local(key).unwrap_or_else(|| panic!("{what}: no local {key}"));
            let want = want.as_array().unwrap();
            assert_eq!(got.len(), want.len());
            let has_null = want.iter().any(Value::is_null);
            // A partial_mean without nulls is reported as a mean.
            let kind = score.local_kind(key).unwrap();
            assert!(kind == LocalKind::Mean || (has_null && kind == LocalKind::PartialMean), "{what} {key}: {kind:?}");
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                match w.as_f64() {
                    None => {
                        assert!(g.is_nan(), "{what} {key}[{i}]: {g}, oracle null");
                        nulls += 1;
                    }
                    Some(w) if exact(key) => assert_eq!(g.to_bits(), w.to_bits(), "{what} {key}[{i}]"),
                    Some(w) => assert_close(&format!("{what} {key}[{i}]"), *g, w, 1e-300),
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 9000 && nulls >= 4, "{checked} values checked, {nulls} nulls");
}
