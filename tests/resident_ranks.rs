//! The original space's resident rank table changes nothing but speed: with and without it the
//! row pass gives the same neighbour lists, ranks and distances bit for bit, and an evaluator's
//! scores and local values are the same bits, on the adversarial corpus (ties, duplicates,
//! lattices, extreme scales). The run report says which source served and why.

mod common;

use common::{Oracle, Rng, corpus, points, with_duplicates};
use faithful::resources::{LowIndex, Needs, RankTable, Resident, row_pass, row_pass_resident};
use faithful::{Evaluation, Evaluator, Labels, Points, ResidentRanks, Spec};

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|d| d.to_bits()).collect()
}

#[test]
fn the_table_holds_the_oracle_ranks() {
    for (name, high, _) in corpus() {
        let n = high.n();
        let o = Oracle::new(&high);
        for block_rows in [1, 5, 64] {
            let t = RankTable::build(&high, block_rows);
            for i in 0..n {
                for j in (0..n).filter(|&j| j != i) {
                    assert_eq!(t.rank(i, j), o.r(i, j), "{name} block_rows={block_rows}: rank of ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn the_pass_with_the_table_gives_the_same_lists_ranks_and_distances() {
    for (name, high, low) in corpus() {
        let n = high.n();
        let table = RankTable::build(&high, 8);
        for k in [1, 5, n / 2 - 1] {
            let plain = row_pass(&high, None, &[&low], Needs::cross_with_dists(k), 16);
            let knn = plain.high.clone().unwrap();
            for block_rows in [1, 7, 64] {
                let resident = Resident { knn: Some(&knn), ranks: Some(&table) };
                // Full projection rows (tests/low_index.rs checks the projection's index with the table).
                let got = row_pass_resident(
                    &high,
                    resident,
                    &[&low],
                    Needs::cross_with_dists(k),
                    block_rows,
                    LowIndex::Never,
                    0..n,
                );
                let tag = format!("{name} k={k} block_rows={block_rows}");
                let (a, b) = (&plain.lows[0], &got.lows[0]);
                let (ka, kb) = (a.knn.as_ref().unwrap(), b.knn.as_ref().unwrap());
                assert_eq!(ka.idx, kb.idx, "{tag}: projection kNN");
                assert_eq!(bits(&ka.dist), bits(&kb.dist), "{tag}: projection kNN distances");
                let (ca, cb) = (a.cross.as_ref().unwrap(), b.cross.as_ref().unwrap());
                assert_eq!(ca.rank_high_of_low, cb.rank_high_of_low, "{tag}: original ranks of projection neighbours");
                assert_eq!(ca.rank_low_of_high, cb.rank_low_of_high, "{tag}: projection ranks of original neighbours");
                assert_eq!(bits(&ca.dist_high_of_low), bits(&cb.dist_high_of_low), "{tag}: original distances");
                assert_eq!(bits(&ca.dist_low_of_high), bits(&cb.dist_low_of_high), "{tag}: projection distances");
                // Only the projection's rows were computed; every original rank was a lookup.
                assert_eq!(got.stats.distance_rows, n as u64, "{tag}");
                assert_eq!(got.stats.ranks_from_table, (n * k) as u64, "{tag}");
                // Without the distances asked for (T&C, MRRE, ...): the same ranks, no distance lists.
                let bare =
                    row_pass_resident(&high, resident, &[&low], Needs::cross(k), block_rows, LowIndex::Never, 0..n);
                let cc = bare.lows[0].cross.as_ref().unwrap();
                assert_eq!(cc.rank_high_of_low, cb.rank_high_of_low, "{tag}: ranks without distances");
                assert_eq!(cc.rank_low_of_high, cb.rank_low_of_high, "{tag}: ranks without distances");
                assert!(
                    cc.dist_high_of_low.is_empty() && cc.dist_low_of_high.is_empty(),
                    "{tag}: distances not asked for"
                );
            }
        }
    }
}

fn specs(k: usize) -> Vec<Spec> {
    ["tnc", "mrre", "lcmc", "nh", "ca_tnc", "nd"].iter().map(|id| format!("{id}:k={k}").parse().unwrap()).collect()
}

fn evaluator(high: &Points, policy: ResidentRanks) -> Evaluator {
    Evaluator::builder(high.clone()).local(true).resident_ranks(policy).build()
}

fn scores_json(e: &Evaluation) -> String {
    serde_json::to_string(&e.projections).unwrap()
}

fn source(e: &Evaluation) -> (&'static str, bool) {
    let r = e.run.plan.high_ranks.as_ref().expect("a run with cross ranks reports their source");
    (r.source, r.built_now)
}

/// Projections that change from call to call, as in an optimising layout: each a perturbed
/// copy of the first, with duplicates and ties kept.
fn moving(low: &Points, step: usize) -> Points {
    let mut rng = Rng(step as u64 + 11);
    let (n, d) = (low.n(), low.dim());
    points(&format!("{}_{step}", low.name()), n, d, |i, c| {
        let v = low.row(i)[c];
        if step == 0 || i % 3 == 0 { v } else { v + (rng.below(3) as f64 - 1.0) * 0.25 }
    })
}

#[test]
fn evaluator_scores_are_the_same_bits_with_and_without_the_table() {
    for (name, high, low) in corpus() {
        let n = high.n();
        let labels = Labels::new((0..n as i64).map(|i| i % 3).collect());
        let k = (n / 2 - 1).min(7);
        let specs = specs(k);
        let never = evaluator(&high, ResidentRanks::Never);
        let auto = evaluator(&high, ResidentRanks::Auto);
        let always = evaluator(&high, ResidentRanks::Always);
        for step in 0..3 {
            let low = moving(&low, step);
            let run = |e: &Evaluator| e.measure_many(&[&low], Some(&labels), &specs).unwrap();
            let (a, b, c) = (run(&never), run(&auto), run(&always));
            let tag = format!("{name} step {step}");
            assert_eq!(scores_json(&a), scores_json(&b), "{tag}: auto");
            assert_eq!(scores_json(&a), scores_json(&c), "{tag}: always");
            assert_eq!(source(&a), ("recomputed", false), "{tag}");
            let want_auto = match step {
                0 => ("recomputed", false),
                1 => ("resident_table", true),
                _ => ("resident_table", false),
            };
            assert_eq!(source(&b), want_auto, "{tag}");
            assert_eq!(source(&c), ("resident_table", step == 0), "{tag}");
            if step > 0 {
                // The original space's kNN is cached and its ranks are looked up: one distance
                // row per point, the projection's.
                assert_eq!(c.run.work.distance_rows, n as u64, "{tag}");
            }
        }
    }
}

#[test]
fn a_table_over_the_memory_budget_falls_back_and_says_why() {
    let high = with_duplicates(101, 4, 5);
    let low = with_duplicates(101, 2, 6);
    let specs = specs(5);
    let labels = Labels::new((0..101).map(|i| i % 2).collect());
    let plain = evaluator(&high, ResidentRanks::Never).measure_many(&[&low], Some(&labels), &specs).unwrap();
    // 101² u16 ranks are 20 402 bytes; with the lists (24 240 bytes) they exceed 30 000.
    let tight = Evaluator::builder(high.clone())
        .local(true)
        .resident_ranks(ResidentRanks::Always)
        .memory_budget(30_000)
        .build();
    for _ in 0..2 {
        let e = tight.measure_many(&[&low], Some(&labels), &specs).unwrap();
        let r = e.run.plan.high_ranks.as_ref().unwrap();
        assert_eq!(r.source, "recomputed");
        assert!(r.reason.contains("exceed the memory budget (30000 bytes)"), "{}", r.reason);
        assert_eq!(r.table_bytes, 20_402);
        assert_eq!(scores_json(&e), scores_json(&plain));
    }
    // A run with no cross ranks says nothing about them.
    let e = tight.measure_many(&[&low], Some(&labels), &["nh:k=5".parse().unwrap()]).unwrap();
    assert!(e.run.plan.high_ranks.is_none());
}

/// The table path's original distances follow the original space's metric or its given
/// distance matrix (the pair-at-a-time reads dispatch as the rows do): the same lists, ranks and
/// distances bit for bit as the plain pass.
#[test]
fn the_table_path_reads_distances_under_the_metric() {
    use faithful::{DistanceMatrix, Metric};
    let n = 120;
    let coords = points("h", n, 4, |i, c| ((i * (c + 2) + i / 5) % 9) as f64 * 0.5 + 0.25);
    let low = points("l", n, 2, |i, c| ((i * (c + 3)) % 11) as f64);
    let mut spaces = Vec::new();
    for m in [Metric::Cosine, Metric::Cityblock, Metric::Chebyshev] {
        spaces.push((format!("{m}"), coords.clone().with_metric(m).unwrap()));
    }
    let mut d = vec![0.0; n * n];
    for (i, row) in d.chunks_mut(n).enumerate() {
        faithful::reference::distance_row(&spaces[0].1, i, row);
        row[i] = 0.0;
    }
    spaces.push(("distance matrix".into(), Points::from_distances("d", DistanceMatrix::from_vec("d", n, d).unwrap())));
    for (name, high) in &spaces {
        let k = 9;
        let table = RankTable::build(high, 8);
        let plain = row_pass(high, None, &[&low], Needs::cross_with_dists(k), 16);
        let knn = plain.high.clone().unwrap();
        let resident = Resident { knn: Some(&knn), ranks: Some(&table) };
        let got = row_pass_resident(high, resident, &[&low], Needs::cross_with_dists(k), 16, LowIndex::Auto, 0..n);
        assert_eq!(got.stats.ranks_from_table, (n * k) as u64, "{name}");
        let (ca, cb) = (plain.lows[0].cross.as_ref().unwrap(), got.lows[0].cross.as_ref().unwrap());
        assert_eq!(ca.rank_high_of_low, cb.rank_high_of_low, "{name}: original ranks");
        assert_eq!(bits(&ca.dist_high_of_low), bits(&cb.dist_high_of_low), "{name}: original distances");
        assert_eq!(ca.rank_low_of_high, cb.rank_low_of_high, "{name}: projection ranks");
        assert_eq!(bits(&ca.dist_low_of_high), bits(&cb.dist_low_of_high), "{name}: projection distances");
    }
}
