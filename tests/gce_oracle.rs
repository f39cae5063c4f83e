//! `gce` (issue 27) against DRquality 0.2.1's `GabrielClassificationError`, through the values
//! SickleJS committed from running it (`tests/fixtures/gce/fetch_sicklejs.py` → `gce.json`, the
//! SickleJS commit recorded there): the value within 1e-12 relative and every per-point value
//! (null where DRquality's is NaN) on blobs (a PCA and a random projection), a Swiss roll and
//! 500 blobs in 20-D. `duplicates` (coincident projected points) is left out as SickleJS leaves
//! it out: DRquality's Gabriel graph (spdep) joins coincident points, faithful's and SickleJS's
//! strict empty-disc test does not (docs/measures.md).

use std::path::{Path, PathBuf};

use faithful::{Evaluator, LocalKind};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gce")
}

#[track_caller]
fn assert_close(what: &str, got: f64, want: f64) {
    let tol = 1e-12 * want.abs().max(1.0);
    assert!((got - want).abs() <= tol, "{what}: faithful {got:e}, DRquality {want:e}");
}

#[test]
fn gce_matches_drquality() {
    let text = std::fs::read_to_string(fixtures().join("gce.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    let (mut checked, mut nulls) = (0usize, 0usize);
    for (name, r) in all["fixtures"].as_object().unwrap() {
        if name == "duplicates" {
            continue;
        }
        let dir = fixtures().join(name);
        let high = faithful::read_points(dir.join("hd.npy")).unwrap();
        let low = faithful::read_points(dir.join("ld.npy")).unwrap();
        let labels = faithful::read_labels(dir.join("labels.npy")).unwrap();
        let eval = Evaluator::builder(high).local(true).build();
        let score = eval.measure(&low, Some(&labels), &["gce".parse().unwrap()]).unwrap().remove(0);
        assert_close(name, score.value("gabriel_classification_error").unwrap(), r["gce"].as_f64().unwrap());
        let local = score.local("local_gce").unwrap();
        let want = r["gce_perpoint"].as_array().unwrap();
        assert_eq!(local.len(), want.len());
        for (i, (g, w)) in local.iter().zip(want).enumerate() {
            match w.as_f64() {
                None => {
                    assert!(g.is_nan(), "{name}[{i}]: {g}, DRquality NaN");
                    nulls += 1;
                }
                Some(w) => assert_close(&format!("{name}[{i}]"), *g, w),
            }
            checked += 1;
        }
        assert_eq!(score.local_kind("local_gce"), Some(LocalKind::PartialMean), "{name} has points with one neighbour");
    }
    assert!(checked >= 1200 && nulls >= 16, "{checked} values, {nulls} nulls");
}
