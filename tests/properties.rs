//! Property tests: results are bit-identical for 1 and 2 threads and any block size, on
//! tie-heavy and generic data; permuting the points permutes the local values.

mod common;

use common::Rng;
use faithful::{Evaluator, Labels, Options, Points, Spec};
use proptest::prelude::*;

fn specs(k: usize, n: usize) -> Vec<Spec> {
    common::neighbourhood_specs(k, n, &format!("nd:k={k}"))
}

fn json(eval: &Evaluator, low: &Points, labels: &Labels, specs: &[Spec]) -> String {
    serde_json::to_string(&eval.measure(low, Some(labels), specs).unwrap()).unwrap()
}

/// Data whose values come from `levels` distinct integers: few levels mean many exact ties.
fn data(n: usize, d: usize, levels: u64, seed: u64) -> Points {
    common::levels("p", n, d, levels, seed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn identical_for_any_threads_and_block_size(
        n in 8usize..90, dh in 1usize..6, dl in 1usize..3, levels in prop::sample::select(vec![0u64, 2, 3, 5]),
        k_frac in 0.0f64..1.0, block in 1usize..100, seed in any::<u64>(),
    ) {
        let k = 1 + ((n - 2) as f64 * k_frac) as usize;
        let high = data(n, dh, levels, seed);
        let low = data(n, dl, levels, seed ^ 0xABCD);
        let labels = Labels::new((0..n as i64).map(|i| i % 3).collect());
        let specs = specs(k, n);
        let run = |threads, block_rows| {
            let eval = Evaluator::new(high.clone(), { let mut o = Options::default(); o.threads = Some(threads); o.block_rows = block_rows; o.local = true; o });
            json(&eval, &low, &labels, &specs)
        };
        let reference = run(1, 1);
        prop_assert_eq!(&run(2, block), &reference);
        prop_assert_eq!(&run(1, block), &reference);
        prop_assert_eq!(&run(2, n), &reference);
    }

    #[test]
    fn permuting_points_permutes_local_values(n in 12usize..80, dh in 2usize..6, seed in any::<u64>()) {
        // Generic data (no ties), so the neighbour order does not depend on index tie-breaks.
        let high = data(n, dh, 0, seed);
        let low = data(n, 2, 0, seed ^ 0x5555);
        let labels = Labels::new((0..n as i64).map(|i| (i * 7) % 3).collect());
        let mut perm: Vec<usize> = (0..n).collect();
        let mut rng = Rng(seed ^ 0x1234);
        for i in (1..n).rev() {
            perm.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let specs = specs(4, n);
        let opts = { let mut o = Options::default(); o.local = true; o };
        let base = Evaluator::new(high.clone(), opts.clone()).measure(&low, Some(&labels), &specs).unwrap();
        let permuted = Evaluator::new(high.permuted(&perm).unwrap(), opts)
            .measure(&low.permuted(&perm).unwrap(), Some(&labels.permuted(&perm)), &specs).unwrap();
        for (a, b) in base.iter().zip(&permuted) {
            for ((key, va), (_, vb)) in a.local.iter().flatten().zip(b.local.iter().flatten()) {
                for i in 0..n {
                    prop_assert_eq!(vb[i].to_bits(), va[perm[i]].to_bits(), "{} point {}", key, i);
                }
            }
            for ((key, va), (_, vb)) in a.values.iter().zip(&b.values) {
                prop_assert!((va - vb).abs() <= 1e-12, "{}: {} vs {}", key, va, vb);
            }
        }
    }
}
