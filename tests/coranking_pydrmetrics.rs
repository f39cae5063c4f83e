//! Parity with pyDRMetrics 0.0.8 on tie-free data (`tests/fixtures/pydrmetrics/generate.py`):
//! its T, C, QNN and LCMC curves, AUC, kmax, Qlocal and Qglobal follow from faithful's
//! `coranking` curves through pyDRMetrics' own normalisations (docs/measures.md, "Other
//! implementations"), within 1e-12.

use std::path::Path;

use faithful::{Evaluator, Options, data};
use serde_json::Value;

const TOL: f64 = 1e-12;

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= TOL * b.abs().max(1.0), "{what}: from faithful {a}, pyDRMetrics {b}");
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn curves_match_pydrmetrics_on_tie_free_data() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pydrmetrics");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("pydrmetrics.json")).unwrap()).unwrap();
    let cases = fixture["cases"].as_object().unwrap();
    assert_eq!(cases.len(), 3);
    for (name, want) in cases {
        let high = data::read_points(dir.join(format!("{name}_hd.npy"))).unwrap();
        let low = data::read_points(dir.join(format!("{name}_ld.npy"))).unwrap();
        let n = high.n();
        assert_eq!(want["n"].as_u64().unwrap() as usize, n);
        let eval = Evaluator::new(high, Options::default());
        let s = eval.measure(&low, None, &["coranking".parse().unwrap()]).unwrap().remove(0);
        let (nf, m) = (n as f64, (n - 1) as f64);
        // The exact integers behind the curves: joint(K) = n K Q_NX(K), and the T and C
        // numerators S(K) = (1 − T(K)) n K (2n − 3K − 1) / 2, both whole numbers.
        let qnx = s.curve("qnx").unwrap();
        let joint = |k: usize| (qnx[k - 1] * (n * k) as f64).round();
        let numerator =
            |curve: &[f64], k: usize| ((1.0 - curve[k - 1]) * nf * (k * (2 * n - 3 * k - 1)) as f64 / 2.0).round();

        // QNN(K) = joint(K) / (K (n − 1)) for K = 1 … n − 1 (the last: joint = n (n − 1)).
        let qnn: Vec<f64> = (1..n).map(|k| if k == n - 1 { nf / m } else { joint(k) / (k as f64 * m) }).collect();
        let want_qnn = floats(&want["QNN"]);
        assert_eq!(want_qnn.len(), n - 1, "{name}");
        for (k, (a, b)) in qnn.iter().zip(&want_qnn).enumerate() {
            close(*a, *b, &format!("{name} QNN K={}", k + 1));
        }
        let lcmc: Vec<f64> = qnn.iter().enumerate().map(|(t, q)| q - (t + 1) as f64 / (m - 1.0)).collect();
        for (k, (a, b)) in lcmc.iter().zip(&floats(&want["LCMC"])).enumerate() {
            close(*a, *b, &format!("{name} LCMC K={}", k + 1));
        }
        close(qnn.iter().sum::<f64>() / m, want["AUC"].as_f64().unwrap(), &format!("{name} AUC"));
        let kmax = (0..lcmc.len()).fold(0, |b, t| if lcmc[t] > lcmc[b] { t } else { b });
        assert_eq!(kmax as u64, want["kmax"].as_u64().unwrap(), "{name} kmax");
        close(qnn[..=kmax].iter().sum::<f64>() / (kmax + 1) as f64, want["Qlocal"].as_f64().unwrap(), "Qlocal");
        let global = &qnn[kmax..n - 2];
        close(global.iter().sum::<f64>() / global.len() as f64, want["Qglobal"].as_f64().unwrap(), "Qglobal");

        // T at pyDRMetrics' index k (K = k + 1): pairs with r ≤ k < ρ weighted ρ − k − 1, so its
        // numerator is S_T(k) − #{r ≤ k < ρ} = S_T(k) − (n k − joint(k)); over (k+1)(n−1)(n−2−k).
        let (t, c) = (s.curve("trustworthiness").unwrap(), s.curve("continuity").unwrap());
        let (want_t, want_c) = (floats(&want["T"]), floats(&want["C"]));
        assert_eq!(want_t.len(), n - 2);
        close(want_t[0], 1.0, "T at index 0 is an empty sum");
        for k in 1..=t.len() {
            let denom = ((k + 1) * (n - 1) * (n - 2 - k)) as f64;
            let outside = (n * k) as f64 - joint(k);
            let py = |curve: &[f64]| 1.0 - (numerator(curve, k) - outside) / denom;
            close(py(t), want_t[k], &format!("{name} T index {k}"));
            close(py(c), want_c[k], &format!("{name} C index {k}"));
        }
        // And faithful's own R_NX AUC is not pyDRMetrics' AUC (a plain mean of QNN).
        assert!((s.value("auc_rnx").unwrap() - want["AUC"].as_f64().unwrap()).abs() > 1e-3, "{name}");
    }
}
