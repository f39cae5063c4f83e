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

/// Every measure of the listing, with its default parameters (k = 5), returns exactly its
/// declared keys and local keys, in order: a measure returning more or fewer values fails the
/// run with Error::MeasureOutput (never a value silently dropped).
#[test]
fn every_measure_returns_exactly_the_keys_it_declares() {
    let (high, low, labels) = data();
    let eval = Evaluator::builder(high).local(true).build();
    let mut seen = 0;
    for m in faithful::measures() {
        let spec: Spec =
            if m.params().any(|p| p.name() == "k") { format!("{}:k=5", m.id()) } else { m.id().to_string() }
                .parse()
                .unwrap();
        let score = eval.measure(&low, Some(&labels), &[spec]).unwrap_or_else(|e| panic!("{}: {e}", m.id())).remove(0);
        let keys: Vec<&str> = score.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, m.keys(), "{}: value keys", m.id());
        let local: Vec<&str> = score.local.iter().flatten().map(|(k, _)| k.as_str()).collect();
        assert_eq!(local, m.local_keys(), "{}: local keys", m.id());
        for key in m.keys() {
            assert!(score.value(key).is_some_and(f64::is_finite), "{}: {key}", m.id());
        }
        seen += 1;
    }
    assert_eq!(seen, faithful::measures::REGISTRY.len());
}

#[test]
fn the_listing_names_what_specs_accept() {
    for m in faithful::measures() {
        let by_alias: Spec = m.id().parse().unwrap();
        let by_zadu: Spec = m.zadu_id().parse().unwrap();
        assert!(!m.about().is_empty() && !m.keys().is_empty(), "{}", m.id());
        for p in m.params() {
            // Each parameter's default, written back, is accepted.
            let spec: Spec = format!("{}:{}={}", m.id(), p.name(), p.default()).parse().unwrap();
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
