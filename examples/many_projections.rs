//! Scores many projections against one original space in one call: the original space's
//! kNN is computed once and shared, as ZADU's `measure_many`.
//!
//! `cargo run --release --example many_projections` (the bundled digits: PCA, a random
//! projection, and the first two pixels as a deliberately poor projection).

use faithful::{Evaluator, Points, Spec};

fn main() -> Result<(), faithful::Error> {
    let ex = faithful::example_digits();
    let n = ex.high.n();
    let pixels: Vec<f64> = (0..n).flat_map(|i| ex.high.row(i)[27..29].to_vec()).collect();
    let mut lows = ex.projections.clone();
    lows.push(Points::from_vec("two_pixels", n, 2, pixels)?);
    let specs: Vec<Spec> = vec!["tnc:k=10".parse()?, "nh:k=10".parse()?];
    let eval = Evaluator::builder(ex.high).build();
    let lows_ref: Vec<&Points> = lows.iter().collect();
    let run = eval.measure_many(&lows_ref, Some(&ex.labels), &specs)?;
    println!("{:<18} {:>16} {:>12} {:>17}", "projection", "trustworthiness", "continuity", "neighborhood_hit");
    for p in &run.projections {
        let v = |i: usize, key: &str| p.scores[i].value(key).expect("declared key");
        println!(
            "{:<18} {:>16.4} {:>12.4} {:>17.4}",
            p.name,
            v(0, "trustworthiness"),
            v(0, "continuity"),
            v(1, "neighborhood_hit")
        );
    }
    // A second call reuses the original space's kNN from the first.
    let again = eval.measure_many(&lows_ref[..1], Some(&ex.labels), &specs)?;
    assert!(again.run.plan.knn_high_reused);
    assert_eq!(again.projections[0].scores, run.projections[0].scores);
    Ok(())
}
