//! `topology` (issue 27) against ripser and gudhi from PyPI
//! (`tests/fixtures/measures/generate_topology.py`, output `topology.json` committed): the H0 and
//! H1 Vietoris–Rips diagrams of both spaces and their bottleneck and 1-Wasserstein distances on
//! generic data, a Swiss roll and a dataset of duplicates (≤ 300 points). Against gudhi (double
//! precision): every birth and death and both distances within 1e-12 relative; against ripser
//! (float32 inside): the diagram rounded to float32 is ripser's, pair for pair.

use std::path::{Path, PathBuf};

use faithful::{Evaluator, Points};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/measures")
}

fn dataset(name: &str) -> (Points, Points) {
    let dir = fixtures().join(name);
    (faithful::read_points(dir.join("hd.npy")).unwrap(), faithful::read_points(dir.join("ld.npy")).unwrap())
}

#[track_caller]
fn assert_close(what: &str, got: f64, want: f64) {
    let tol = 1e-12 * want.abs().max(1e-300);
    assert!((got - want).abs() <= tol, "{what}: faithful {got:e}, oracle {want:e} (diff {:e})", (got - want).abs());
}

fn pairs(v: &Value) -> Vec<(f64, f64)> {
    v.as_array().unwrap().iter().map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap())).collect()
}

#[test]
fn diagrams_and_distances_match_ripser_and_gudhi() {
    let text = std::fs::read_to_string(fixtures().join("topology.json")).unwrap();
    let all: Value = serde_json::from_str(&text).unwrap();
    let (mut checked, mut h1_pairs) = (0usize, 0usize);
    for r in all["results"].as_array().unwrap() {
        let name = r["dataset"].as_str().unwrap();
        let dim = r["dim"].as_u64().unwrap();
        let (high, low) = dataset(name);
        let eval = Evaluator::builder(high).build();
        let spec = format!("topology:dim={dim}");
        let score = eval.measure(&low, None, &[spec.parse().unwrap()]).unwrap().remove(0);
        let what = format!("{name} dim={dim}");
        for space in ["high", "low"] {
            // faithful's diagram: dim 0 as deaths (births 0), dim 1 as births and deaths.
            let deaths = score.curve(&format!("deaths_{space}")).unwrap();
            let got: Vec<(f64, f64)> = if dim == 0 {
                deaths.iter().map(|&d| (0.0, d)).collect()
            } else {
                let births = score.curve(&format!("births_{space}")).unwrap();
                births.iter().copied().zip(deaths.iter().copied()).collect()
            };
            let want = pairs(&r[space]);
            assert_eq!(got.len(), want.len(), "{what} {space}: number of pairs");
            assert!(got.windows(2).all(|w| w[0] <= w[1]), "{what} {space}: sorted by birth, then death");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_close(&format!("{what} {space}[{i}] birth"), g.0, w.0);
                assert_close(&format!("{what} {space}[{i}] death"), g.1, w.1);
                checked += 2;
            }
            if dim == 1 {
                h1_pairs += got.len();
            }
            // ripser holds distances in float32: ours rounded to float32 are its pairs.
            let mut single: Vec<(f64, f64)> =
                got.iter().map(|&(b, d)| (f64::from(b as f32), f64::from(d as f32))).collect();
            single.sort_by(|a, b| a.partial_cmp(b).unwrap());
            assert_eq!(single, pairs(&r[format!("ripser_{space}")]), "{what} {space}: ripser's diagram");
        }
        for key in ["bottleneck", "wasserstein"] {
            assert_close(&format!("{what} {key}"), score.value(key).unwrap(), r[key].as_f64().unwrap());
            checked += 1;
        }
    }
    assert!(checked > 2000 && h1_pairs > 300, "{checked} values, {h1_pairs} H1 pairs checked");
}
