//! Golden parity with ZADU 0.5.4: every score and every local value within 1e-12 on the
//! fixtures of `tests/fixtures/generate.py` (blobs and tie-heavy data, n = 500 and 2000).
//!
//! One exception, [`arbitrary_triangulation`]: `gi` on the tie-heavy fixtures.

mod common;

use std::path::Path;

use faithful::measures::find;
use faithful::{Error, Evaluator, Options, Spec, data};
use serde_json::Value;

use common::zadu::{TOL, close};

fn spec_of(result: &Value) -> Spec {
    common::zadu::spec(result["id"].as_str().unwrap(), &result["params"])
}

/// The only exception to golden parity: `gi` on the `ties_*` fixtures. Their projection is a 5×5
/// integer lattice with duplicates, so every lattice square has four cocircular corners and the
/// Delaunay triangulation is not unique: ZADU gets scipy's (Qhull's) choice, faithful spade's,
/// and the gap index depends on that choice (docs/measures.md, "what differs from ZADU"). On
/// blobs (general position) gi is held to the same 1e-12 as everything else.
fn arbitrary_triangulation(dir: &Path, id: &str) -> bool {
    id == "gi" && dir.file_name().unwrap().to_str().unwrap().starts_with("ties_")
}

/// faithful's own gi on the `ties_*` fixtures (its triangulation's choice on the cocircular
/// lattice squares), pinned so that a change of triangulation shows up here.
const FAITHFUL_GI_TIES: &[(&str, f64)] = &[("ties_500", 0.41991002637678093), ("ties_2000", 0.3725869129002965)];

/// For [`arbitrary_triangulation`]: instead of ZADU's value, faithful's value must lie in [0, 1],
/// be bit-identical across fresh evaluators and thread counts, and equal the pinned value.
fn check_arbitrary_gi(dir: &Path, spec: &Spec, got: f64, zadu: f64, problems: &mut Vec<String>) {
    let tag = format!("{} {spec} (cocircular projection: faithful {got}, ZADU/scipy {zadu})", dir.display());
    if !(0.0..=1.0).contains(&got) {
        problems.push(format!("{tag}: outside [0, 1]"));
    }
    let high = data::read_points(dir.join("hd.npy")).unwrap();
    let low = data::read_points(dir.join("ld.npy")).unwrap();
    for threads in [None, Some(1), Some(3)] {
        let eval = Evaluator::new(high.clone(), {
            let mut o = Options::default();
            o.threads = threads;
            o
        });
        let again = eval.measure(&low, None, std::slice::from_ref(spec)).unwrap()[0].value("gap_index").unwrap();
        if again.to_bits() != got.to_bits() {
            problems.push(format!("{tag}: {again} with threads {threads:?}"));
        }
    }
    let name = dir.file_name().unwrap().to_str().unwrap();
    match FAITHFUL_GI_TIES.iter().find(|(n, _)| *n == name) {
        Some((_, pinned)) if close(got, *pinned) => {}
        pinned => problems.push(format!("{tag}: pinned {pinned:?}")),
    }
}

fn check_dataset(dir: &Path) -> usize {
    let high = data::read_points(dir.join("hd.npy")).unwrap();
    let low = data::read_points(dir.join("ld.npy")).unwrap();
    let labels = data::read_labels(dir.join("label.npy")).unwrap();
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("zadu.json")).unwrap()).unwrap();
    assert_eq!(golden["zadu_version"], "0.5.4");
    let results: Vec<&Value> =
        golden["results"].as_array().unwrap().iter().filter(|r| find(r["id"].as_str().unwrap()).is_ok()).collect();
    let eval = Evaluator::new(high, {
        let mut o = Options::default();
        o.local = true;
        o
    });

    let (ok, failing): (Vec<&Value>, Vec<&Value>) = results.iter().partition(|r| r.get("error").is_none());
    let specs: Vec<Spec> = ok.iter().map(|r| spec_of(r)).collect();
    let scores = eval.measure(&low, Some(&labels), &specs).unwrap();
    let mut problems = Vec::new();
    let mut bit_identical = 0;
    let mut compared = 0;
    let mut excepted = 0;
    for (r, score) in ok.iter().zip(&scores) {
        let tag = format!("{} {}", dir.display(), spec_of(r));
        for (key, want) in r["values"].as_object().unwrap() {
            let want = want.as_f64().unwrap();
            if arbitrary_triangulation(dir, r["id"].as_str().unwrap()) {
                match score.value(key) {
                    Some(got) => check_arbitrary_gi(dir, &spec_of(r), got, want, &mut problems),
                    None => problems.push(format!("{tag} {key}: no value")),
                }
                excepted += 1;
                continue;
            }
            match score.value(key) {
                Some(got) if close(got, want) => {
                    compared += 1;
                    bit_identical += usize::from(got.to_bits() == want.to_bits());
                }
                got => problems.push(format!("{tag} {key}: faithful {got:?} zadu {want}")),
            }
        }
        for (key, want) in r.get("local").and_then(Value::as_object).into_iter().flatten() {
            let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let got = score.local(key).unwrap_or_else(|| panic!("{tag}: no local {key}"));
            assert_eq!(got.len(), want.len(), "{tag} {key}");
            let bad = got.iter().zip(&want).filter(|(g, w)| !close(**g, **w)).count();
            if bad > 0 {
                problems.push(format!("{tag} {key}: {bad} local values differ"));
            }
            compared += got.len();
            bit_identical += got.iter().zip(&want).filter(|(g, w)| g.to_bits() == w.to_bits()).count();
        }
    }
    for r in &failing {
        let spec = spec_of(r);
        match eval.measure(&low, Some(&labels), std::slice::from_ref(&spec)) {
            Err(Error::Undefined { .. }) => {}
            other => {
                problems.push(format!("{} {spec}: ZADU raised {}, faithful gave {other:?}", dir.display(), r["error"]))
            }
        }
    }
    assert!(problems.is_empty(), "{} mismatches:\n{}", problems.len(), problems.join("\n"));
    // Every fixture result of an implemented measure was checked: values, locals or the error.
    assert_eq!(ok.len() + failing.len(), results.len());
    // The exception covers exactly gi's one score on the ties fixtures, nothing else.
    assert_eq!(excepted, usize::from(arbitrary_triangulation(dir, "gi")), "{}", dir.display());
    eprintln!(
        "{}: {} specs, {compared} values within {TOL}, {bit_identical} bit-identical, {excepted} excepted (gi, cocircular)",
        dir.display(),
        results.len()
    );
    results.len()
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden").join(name)
}

#[test]
fn blobs_500() {
    assert!(check_dataset(&fixture("blobs_500")) >= 16);
}

#[test]
fn ties_500() {
    assert!(check_dataset(&fixture("ties_500")) >= 16);
}

#[test]
fn blobs_2000() {
    assert!(check_dataset(&fixture("blobs_2000")) >= 16);
}

#[test]
fn ties_2000() {
    assert!(check_dataset(&fixture("ties_2000")) >= 16);
}
