//! The curated public API (src/lib.rs): the builder sets what `Options` holds, every measure
//! returns exactly the keys the listing declares, and the listing agrees with what specs accept.

use faithful::bench::blobs;
use faithful::{BackendChoice, Evaluator, Labels, Numerics, Options, Spec};

/// 60 points in 5 clusters (5 dims, projected to the first 2), labelled by cluster.
fn data() -> (faithful::Points, faithful::Points, Labels) {
    let b = blobs(60, 5, 7);
    (b.high, b.low, Labels::new(b.labels))
}

#[test]
fn the_builder_sets_the_options_it_names() {
    let (high, ..) = data();
    let cancel = faithful::Cancel::new();
    let eval = Evaluator::builder(high)
        .threads(3)
        .block_rows(7)
        .local(true)
        .backend(BackendChoice::Cpu)
        .numerics(Numerics::Fast)
        .memory_budget(1 << 20)
        .temp_budget(1 << 21)
        .temp_dir("/nonexistent/faithful")
        .cancel(cancel.clone())
        .progress(|_| {})
        .build();
    let o = eval.options();
    assert_eq!(o.threads, Some(3));
    assert_eq!(o.block_rows, 7);
    assert!(o.local);
    assert_eq!((o.backend, o.numerics), (BackendChoice::Cpu, Numerics::Fast));
    assert_eq!((o.memory_budget, o.temp_budget), (Some(1 << 20), Some(1 << 21)));
    assert_eq!(o.temp_dir.as_deref(), Some(std::path::Path::new("/nonexistent/faithful")));
    assert!(o.progress.is_some());
    cancel.request();
    assert!(o.cancel.as_ref().is_some_and(faithful::Cancel::is_requested));
    let defaults = Options::default();
    let plain = Evaluator::builder(eval.high().clone()).options(defaults.clone()).build();
    assert_eq!((plain.options().threads, plain.options().local), (defaults.threads, defaults.local));
}

/// `threads` applies to `knn` as to `measure_many`: the run reports the pool it ran on, and the
/// graph does not depend on it.
#[test]
fn knn_runs_on_the_threads_asked_for() {
    let (high, ..) = data();
    let (one, run_one) = Evaluator::builder(high.clone()).threads(1).build().knn(4).unwrap();
    let (three, run_three) = Evaluator::builder(high).threads(3).build().knn(4).unwrap();
    assert_eq!((run_one.threads, run_three.threads), (1, 3));
    assert_eq!((&one.idx, &one.dist), (&three.idx, &three.dist));
}

#[test]
fn builder_and_new_give_the_same_scores() {
    let (high, low, labels) = data();
    let specs: Vec<Spec> = ["tnc:k=5", "nh:k=5", "stress"].iter().map(|s| s.parse().unwrap()).collect();
    let mut opts = Options::default();
    opts.local = true;
    let a = Evaluator::new(high.clone(), opts).measure(&low, Some(&labels), &specs).unwrap();
    let b = Evaluator::builder(high).local(true).build().measure(&low, Some(&labels), &specs).unwrap();
    assert_eq!(a, b);
    assert!(a[0].value("trustworthiness").is_some_and(|v| v > 0.5), "{:?}", a[0]);
    assert_eq!(a[0].value("no such key"), None);
}

/// Every measure of the listing returns exactly its declared keys and local keys, in order: the
/// evaluator matches a measure's named outputs to the keys it declares and fails the run with
/// Error::MeasureOutput on a key missing, undeclared or returned twice (never a value under
/// another key's name, never one dropped). Measures run with k = 5, and the keyed ones (ivm,
/// c_evm) with every choice of the parameters their key is named after.
#[test]
fn every_measure_returns_exactly_the_keys_it_declares() {
    let (high, low, labels) = data();
    let eval = Evaluator::builder(high).local(true).build();
    let mut seen = std::collections::BTreeSet::new();
    let mut runs = 0;
    for m in faithful::measures() {
        for (spec, keys) in specs_and_keys(&m) {
            let score = eval
                .measure(&low, Some(&labels), &[spec.parse().unwrap()])
                .unwrap_or_else(|e| panic!("{spec}: {e}"))
                .remove(0);
            let got: Vec<&str> = score.values.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(got, keys, "{spec}: value keys");
            let local: Vec<&str> = score.local.iter().flatten().map(|(k, _)| k.as_str()).collect();
            assert_eq!(local, m.local_keys(), "{spec}: local keys");
            for key in &keys {
                assert!(score.value(key).is_some_and(f64::is_finite), "{spec}: {key}");
            }
            runs += 1;
        }
        seen.insert(m.id());
    }
    assert_eq!(seen.len(), faithful::measures::REGISTRY.len());
    // ivm's 5 measures and c_evm's 4 beyond one run each.
    assert_eq!(runs, seen.len() + 4 + 3);
}

/// The specs to run for measure `m` and the keys each must return: one spec (k = 5 where the
/// measure has k) with the declared keys, or for a measure keyed by choice parameters one spec
/// per choice, keyed as ZADU names it (`ivm:measure=davies_bouldin` → `davies_bouldin`,
/// `c_evm:measure=ami` → `kmeans_ami`).
fn specs_and_keys(m: &faithful::MeasureInfo) -> Vec<(String, Vec<String>)> {
    // k = 5 where the measure has k, and a value for every parameter without a default.
    let mut given: Vec<String> = m.params().filter(|p| p.required()).map(|p| format!("{}=1", p.name())).collect();
    if m.params().any(|p| p.name() == "k") {
        given.insert(0, "k=5".into());
    }
    let base = if given.is_empty() { m.id().to_string() } else { format!("{}:{}", m.id(), given.join(",")) };
    let declared = || m.keys().iter().map(|k| k.to_string()).collect::<Vec<_>>();
    let Some(measure) = m.params().find(|p| p.name() == "measure") else { return vec![(base, declared())] };
    let clustering = m.params().find(|p| p.name() == "clustering").map(|p| p.default());
    measure
        .choices()
        .unwrap()
        .iter()
        .map(|c| {
            let key = clustering.map_or(c.to_string(), |cl| format!("{cl}_{c}"));
            (format!("{base}:measure={c}"), vec![key])
        })
        .collect()
}

#[test]
fn the_listing_names_what_specs_accept() {
    for m in faithful::measures() {
        let by_alias: Spec = m.id().parse().unwrap();
        let by_zadu: Spec = m.zadu_id().parse().unwrap();
        assert!(!m.about().is_empty() && !m.keys().is_empty(), "{}", m.id());
        for p in m.params() {
            if p.required() {
                // No default: leaving it out is a typed error naming it.
                let (high, low, labels) = data();
                let err = Evaluator::new(high, Options::default()).measure(
                    &low,
                    Some(&labels),
                    std::slice::from_ref(&by_alias),
                );
                assert!(
                    matches!(&err, Err(faithful::Error::MissingParam { param, .. }) if param == p.name()),
                    "{}: {err:?}",
                    m.id()
                );
                assert_eq!(p.default(), "");
                continue;
            }
            // Each parameter's default, written back, is accepted (with a value for each
            // parameter that has none).
            let required: String = m.params().filter(|q| q.required()).map(|q| format!(",{}=1", q.name())).collect();
            let spec: Spec = format!("{}:{}={}{required}", m.id(), p.name(), p.default()).parse().unwrap();
            let (high, low, labels) = data();
            Evaluator::new(high, Options::default())
                .measure(&low, Some(&labels), &[spec])
                .unwrap_or_else(|e| panic!("{}:{}={}: {e}", m.id(), p.name(), p.default()));
            if let Some(choices) = p.choices() {
                assert!(choices.contains(&p.default()), "{}: {}", m.id(), p.name());
            }
        }
        drop((by_alias, by_zadu));
    }
}
