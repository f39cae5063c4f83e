//! The CPU reference against a brute-force sort-everything oracle on the adversarial corpus:
//! whole neighbour lists, distances and ranks, for k = 1, a middle k and k = n/2 - 1, in
//! several block plans.

mod common;

use common::{Oracle, corpus};
use faithful::resources::{Needs, row_pass};
use faithful::{Evaluator, Options, Spec};

#[test]
fn knn_and_cross_ranks_match_the_oracle() {
    for (name, high, low) in corpus() {
        let n = high.n();
        let (ox, oy) = (Oracle::new(&high), Oracle::new(&low));
        for k in [1, 5, n / 2 - 1] {
            for block_rows in [1, 7, 64] {
                let out = row_pass(&high, None, &[&low], Needs::cross_with_dists(k), block_rows);
                let kx = out.high.as_ref().unwrap();
                let ky = out.lows[0].knn.as_ref().unwrap();
                let cr = out.lows[0].cross.as_ref().unwrap();
                let tag = format!("{name} k={k} block_rows={block_rows}");
                for i in 0..n {
                    assert_eq!(kx.row(i, k), ox.knn(i, k), "{tag}: X kNN of row {i}");
                    assert_eq!(ky.row(i, k), oy.knn(i, k), "{tag}: Y kNN of row {i}");
                    let want_dx: Vec<u64> = ox.knn(i, k).iter().map(|&j| ox.d(i, j as usize).to_bits()).collect();
                    let got_dx: Vec<u64> = kx.dist_row(i, k).iter().map(|d| d.to_bits()).collect();
                    assert_eq!(got_dx, want_dx, "{tag}: X kNN distances of row {i}");
                    let want_rx: Vec<u32> = oy.knn(i, k).iter().map(|&j| ox.r(i, j as usize)).collect();
                    let want_ry: Vec<u32> = ox.knn(i, k).iter().map(|&j| oy.r(i, j as usize)).collect();
                    assert_eq!(cr.rank_high_of_low(i, k), &want_rx[..], "{tag}: X ranks of Y neighbours, row {i}");
                    assert_eq!(cr.rank_low_of_high(i, k), &want_ry[..], "{tag}: Y ranks of X neighbours, row {i}");
                    let want_d: Vec<u64> = oy.knn(i, k).iter().map(|&j| ox.d(i, j as usize).to_bits()).collect();
                    let got_d: Vec<u64> = cr.dist_high_of_low(i, k).iter().map(|d| d.to_bits()).collect();
                    assert_eq!(got_d, want_d, "{tag}: X distances of Y neighbours, row {i}");
                }
            }
        }
    }
}

/// T&C and MRRE local values from the engine equal those computed from the oracle's full
/// rank matrices with ZADU's formulas, bit for bit.
#[test]
fn local_scores_match_oracle_formulas() {
    for (name, high, low) in corpus() {
        let n = high.n();
        let (ox, oy) = (Oracle::new(&high), Oracle::new(&low));
        let k = 5;
        let eval = Evaluator::new(high, {
            let mut o = Options::default();
            o.local = true;
            o
        });
        let specs: Vec<Spec> = ["tnc:k=5", "mrre:k=5", "lcmc:k=5"].iter().map(|s| s.parse().unwrap()).collect();
        let scores = eval.measure(&low, None, &specs).unwrap();
        let f = 2.0 / ((k * (2 * n - 3 * k - 1)) as f64);
        let mut c = 0.0;
        for r in 1..=k as i64 {
            c += (n as i64 - 2 * r + 1).abs() as f64 / r as f64;
        }
        for i in 0..n {
            let missing_sum = |o_base: &Oracle, o_tgt: &Oracle| -> i64 {
                o_tgt
                    .knn(i, k)
                    .iter()
                    .filter(|j| !o_base.knn(i, k).contains(j))
                    .map(|&j| o_base.r(i, j as usize) as i64 - k as i64)
                    .sum()
            };
            let t = 1.0 - missing_sum(&ox, &oy) as f64 * f;
            let cc = 1.0 - missing_sum(&oy, &ox) as f64 * f;
            assert_eq!(scores[0].local("local_trustworthiness").unwrap()[i].to_bits(), t.to_bits(), "{name} T row {i}");
            assert_eq!(scores[0].local("local_continuity").unwrap()[i].to_bits(), cc.to_bits(), "{name} C row {i}");
            let terms: Vec<f64> = oy
                .knn(i, k)
                .iter()
                .map(|&j| {
                    let (rx, ry) = (ox.r(i, j as usize) as i64, oy.r(i, j as usize) as i64);
                    (rx - ry).abs() as f64 / ry as f64
                })
                .collect();
            let mf = 1.0 - faithful::sum::pairwise_sum(&terms) / c;
            assert_eq!(scores[1].local("local_mrre_false").unwrap()[i].to_bits(), mf.to_bits(), "{name} MRRE row {i}");
            let inter = ox.knn(i, k).iter().filter(|j| oy.knn(i, k).contains(j)).count();
            let l = (inter as f64 - (k * k) as f64 / (n - 1) as f64) / k as f64;
            assert_eq!(scores[2].local("local_lcmc").unwrap()[i].to_bits(), l.to_bits(), "{name} LCMC row {i}");
        }
    }
}

/// Reusing the original space's kNN across calls (measure_many) changes nothing.
#[test]
fn cached_original_space_gives_identical_results() {
    for (name, high, low) in corpus().into_iter().take(4) {
        let specs: Vec<Spec> = ["tnc:k=5", "nd:k=4", "mrre:k=3"].iter().map(|s| s.parse().unwrap()).collect();
        let fresh = Evaluator::new(high.clone(), Options::default()).measure(&low, None, &specs).unwrap();
        let eval = Evaluator::new(high, Options::default());
        let first = eval.measure_many(&[&low, &low], None, &specs).unwrap();
        let again = eval.measure_many(&[&low], None, &specs).unwrap();
        assert!(again.run.plan.knn_high_reused, "{name}: second call should reuse the original kNN");
        assert_eq!(first.projections[0].scores, fresh, "{name}");
        assert_eq!(first.projections[1].scores, fresh, "{name}");
        assert_eq!(again.projections[0].scores, fresh, "{name}");
    }
}
