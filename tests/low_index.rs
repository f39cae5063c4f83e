//! The exact spatial index of low-dimensional projections (`reference::KdTree`, `LowIndex`)
//! against the brute-force reference: the same neighbour lists, distance bits and ranks, on the
//! hostile corpus (duplicates, lattices, 1e−9 jitter, collinear and coincident projections,
//! tiny and huge scales) in 1, 2 and 3 dimensions, n from 2 to 10⁵.

mod common;

use common::{Rng, points, uniform, with_duplicates};
use faithful::reference::{KdTree, RankScratch, TreeScratch, count_ranks, distance_row, select_knn};
use faithful::resources::{LowIndex, Needs, RankTable, Resident, row_pass_resident};
use faithful::{Evaluator, Labels, Points, Spec};

/// Hostile projections of n points in `dim` dimensions.
fn projections(n: usize, dim: usize, seed: u64) -> Vec<(String, Points)> {
    let mut rng = Rng(seed);
    let mut jit = Rng(seed + 1);
    let mut out = vec![
        ("duplicates".to_string(), with_duplicates(n, dim, seed)),
        ("lattice".into(), points("lat", n, dim, |i, c| ((i * (c + 1) + i / 7) % 5) as f64)),
        (
            "lattice_jitter_1e-9".into(),
            points("latj", n, dim, |i, c| ((i * (c + 1)) % 5) as f64 + 1e-9 * (jit.uniform() - 0.5)),
        ),
        ("coincident".into(), points("same", n, dim, |_, c| 0.25 * c as f64)),
        ("two_sites".into(), points("two", n, dim, |i, c| ((i % 2) * (c + 1)) as f64)),
        ("scale_1e-20".into(), points("tiny", n, dim, |_, _| 1e-20 * rng.uniform())),
        ("scale_1e20".into(), points("huge", n, dim, |_, _| 1e20 * rng.uniform())),
        ("offset_1e4".into(), points("off", n, dim, |_, _| 1e4 + rng.uniform())),
        ("generic".into(), uniform("gen", n, dim, seed + 2)),
    ];
    if dim > 1 {
        // Collinear: every point on one line through the origin, equal steps (ties both ways).
        out.push(("collinear".into(), points("line", n, dim, |i, c| ((i % 11) * (c + 1)) as f64 * 0.5)));
    }
    out
}

/// Full rows (`Never`) and the index (`Auto`) give the same pass, for the whole pass and with the
/// original space's rank table resident; the index served every row it could.
fn same_pass(tag: &str, high: &Points, low: &Points, k: usize) -> u64 {
    let n = high.n();
    let table = RankTable::build(high, 16);
    let mut fallbacks = 0;
    for ranks in [None, Some(&table)] {
        let resident = Resident { knn: None, ranks };
        let run = |li| row_pass_resident(high, resident, &[low], Needs::cross_with_dists(k), 13, li, 0..n);
        let (rows, index) = (run(LowIndex::Never), run(LowIndex::Auto));
        let tag = format!("{tag} k={k} table={}", ranks.is_some());
        assert_eq!(rows.lows[0].knn, index.lows[0].knn, "{tag}: kNN lists and distances");
        assert_eq!(rows.lows[0].cross, index.lows[0].cross, "{tag}: cross ranks and distances");
        assert_eq!(rows.high, index.high, "{tag}: original kNN");
        let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
        let (a, b) = (rows.lows[0].knn.as_ref().unwrap(), index.lows[0].knn.as_ref().unwrap());
        assert_eq!(bits(&a.dist), bits(&b.dist), "{tag}: distance bits");
        assert_eq!(rows.low_index[0].path, "rows");
        if k * 8 <= n {
            assert_eq!(index.low_index[0].path, "kd_tree", "{tag}: {:?}", index.low_index[0]);
            assert_eq!(index.stats.low_rows_indexed, n as u64, "{tag}");
        }
        fallbacks += index.stats.low_index_fallbacks;
    }
    fallbacks
}

#[test]
fn the_index_path_is_the_brute_force_path_on_the_hostile_corpus() {
    let mut fallbacks = 0;
    for dim in 1..=3 {
        for n in [2, 3, 17, 64, 301] {
            let high = with_duplicates(n, 6, 11);
            for (name, low) in projections(n, dim, 5 + n as u64) {
                for k in [1, 5, (n / 8).max(1), n - 1] {
                    if k < n {
                        fallbacks += same_pass(&format!("{name} dim={dim} n={n}"), &high, &low, k);
                    }
                }
            }
        }
    }
    // Some rows' counts gave up in the tree and were counted over their full rows: that path
    // is checked too.
    assert!(fallbacks > 0, "no row fell back to its full row");
}

/// The index's kNN and rank counts row by row against the reference at n = 10⁵ (sampled rows:
/// each brute-force row costs n), on a lattice with duplicates and 1e−9 jitter.
#[test]
fn the_index_is_exact_at_a_hundred_thousand_points() {
    let n = 100_000;
    let mut jit = Rng(17);
    for dim in 1..=3 {
        let low = points("big", n, dim, |i, c| {
            let v = ((i * (2 * c + 3) + i / 13) % 97) as f64;
            if i % 3 == 0 { v + 1e-9 * (jit.uniform() - 0.5) } else { v }
        });
        let tree = KdTree::build(&low).unwrap();
        let mut s = TreeScratch::default();
        let (mut row, mut keys) = (vec![0.0; n], Vec::new());
        let k = 30;
        for i in (0..n).step_by(4999) {
            distance_row(&low, i, &mut row);
            let (mut wi, mut wd) = (vec![0; k], vec![0.0; k]);
            select_knn(&row, i, k, &mut keys, &mut wi, &mut wd);
            let (mut gi, mut gd) = (vec![0; k], vec![0.0; k]);
            tree.knn(&low, i, k, &mut s, &mut gi, &mut gd);
            assert_eq!(gi, wi, "dim {dim}: kNN of row {i}");
            assert_eq!(
                gd.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                wd.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
            );
            // Queries near and far: the kNN's tail and points across the whole set.
            let mut queries: Vec<u32> = wi[k / 2..].to_vec();
            queries.extend((0..n as u32).filter(|&j| j as usize != i && !wi.contains(&j)).step_by(n / 40 + 1));
            let mut want = vec![0; queries.len()];
            count_ranks(&row, i, &queries, &mut want, &mut RankScratch::default());
            let mut got = vec![0; queries.len()];
            assert!(tree.count_ranks(&low, i, &queries, &mut got, &mut s, usize::MAX), "dim {dim}");
            assert_eq!(got, want, "dim {dim}: ranks of row {i}");
        }
    }
}

/// Through the evaluator: every neighbourhood measure's scores and local values, and the run
/// report's path, for the index and for full rows.
#[test]
fn scores_are_the_same_bits_and_the_report_says_which_path_served() {
    let n = 240;
    let high = with_duplicates(n, 7, 3);
    let labels = Labels::new((0..n as i64).map(|i| i % 3).collect());
    let specs: Vec<Spec> =
        ["tnc:k=9", "mrre:k=9", "lcmc:k=9", "nh:k=9", "ca_tnc:k=9"].iter().map(|s| s.parse().unwrap()).collect();
    for (name, low) in projections(n, 2, 9) {
        let run = |li| {
            let eval = Evaluator::builder(high.clone()).local(true).low_index(li).build();
            eval.measure_many(&[&low], Some(&labels), &specs).unwrap()
        };
        let (rows, index) = (run(LowIndex::Never), run(LowIndex::Auto));
        assert_eq!(rows.projections[0].scores, index.projections[0].scores, "{name}");
        assert_eq!(rows.run.plan.low_index[0].path, "rows", "{name}");
        assert_eq!(index.run.plan.low_index[0].path, "kd_tree", "{name}");
        assert!(index.run.plan.low_index[0].reason.contains("k-d tree"), "{name}");
        assert_eq!(index.run.work.low_rows_indexed, n as u64, "{name}");
    }
    // Beyond three dimensions, and with k large next to n, full rows serve and say why.
    let low4 = uniform("l4", n, 4, 1);
    let eval = Evaluator::builder(high.clone()).build();
    let r = eval.measure_many(&[&low4], None, &specs[..1]).unwrap();
    assert_eq!(r.run.plan.low_index[0].path, "rows");
    assert!(r.run.plan.low_index[0].reason.contains("at most 3"), "{}", r.run.plan.low_index[0].reason);
    let r = eval.measure_many(&[&uniform("l2", n, 2, 2)], None, &["lcmc:k=100".parse().unwrap()]).unwrap();
    assert_eq!(r.run.plan.low_index[0].path, "rows");
    assert!(r.run.plan.low_index[0].reason.contains("large next to n"), "{}", r.run.plan.low_index[0].reason);
}
