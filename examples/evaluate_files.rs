//! Evaluates one projection of one original space and prints a table of scores.
//!
//! `cargo run --release --example evaluate_files -- HIGH.npy LOW.npy [LABELS.npy]`
//! (.npy or .csv). Without arguments it scores the bundled digits' PCA projection.

use faithful::{Evaluator, Labels, Points, Spec, read_labels, read_points};

fn main() -> Result<(), faithful::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (high, low, labels): (Points, Points, Option<Labels>) = match &args[..] {
        [high, low, rest @ ..] if rest.len() <= 1 => {
            (read_points(high)?, read_points(low)?, rest.first().map(read_labels).transpose()?)
        }
        [] => {
            let ex = faithful::example_digits();
            (ex.high, ex.projections[0].clone(), Some(ex.labels))
        }
        _ => {
            eprintln!("usage: evaluate_files HIGH LOW [LABELS]");
            std::process::exit(2);
        }
    };
    let mut specs: Vec<Spec> =
        ["tnc:k=10", "mrre:k=10", "lcmc:k=10", "stress", "srho"].iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    if labels.is_some() {
        specs.push("nh:k=10".parse()?);
    }
    let eval = Evaluator::builder(high).build();
    let scores = eval.measure(&low, labels.as_ref(), &specs)?;
    println!("{:<8} {:<24} {:>12}", "measure", "key", "value");
    for score in &scores {
        for (key, value) in &score.values {
            println!("{:<8} {:<24} {:>12.6}", score.id, key, value);
        }
    }
    Ok(())
}
