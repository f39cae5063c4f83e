//! Row shards (issue 16): fold(map_rows(...)) over any aligned plan, in any order, is the same
//! bits as one `measure`; bad plans and mixed runs are refused with typed errors; a shard's
//! partial is the same bytes however often and however it is computed.

mod common;

use common::Rng;
use faithful::shard::{Partial, halves, is_block, plan, spans};
use faithful::{Error, Evaluator, Labels, Options, Points, Score, Spec, fold};
use proptest::prelude::*;
use std::ops::Range;

fn specs(k: usize, n: usize) -> Vec<Spec> {
    common::neighbourhood_specs(k, n, &format!("coranking:k_max={}", (2 * k).min(n - 2)))
}

fn data(name: &str, n: usize, d: usize, levels: u64, seed: u64) -> Points {
    common::levels(name, n, d, levels, seed)
}

/// One run's inputs.
struct Run {
    high: Points,
    low: Points,
    labels: Labels,
    specs: Vec<Spec>,
}

/// Tie-level data of n points, the original space `high_d`-dimensional and the projection 2-D
/// (seeds `seed` and `seed + 1`), and labels cycling through `classes`.
fn tied(
    n: usize,
    (high_d, high_levels): (usize, u64),
    low_levels: u64,
    classes: i64,
    seed: u64,
    specs: Vec<Spec>,
) -> Run {
    Run {
        high: data("high", n, high_d, high_levels, seed),
        low: data("low", n, 2, low_levels, seed.wrapping_add(1)),
        labels: Labels::new((0..n as i64).map(|i| i % classes).collect()),
        specs,
    }
}

/// The run most tests share.
fn run(n: usize) -> Run {
    tied(n, (3, 3), 3, 3, 1, specs(5, n))
}

fn eval(high: &Points, threads: usize, block_rows: usize) -> Evaluator {
    let mut o = Options::default();
    o.threads = Some(threads);
    o.block_rows = block_rows;
    o.local = true;
    Evaluator::new(high.clone(), o)
}

/// A random plan: each node of the summation tree is split or kept at random.
fn random_plan(n: usize, rng: &mut Rng) -> Vec<Range<usize>> {
    fn go(node: Range<usize>, rng: &mut Rng, out: &mut Vec<Range<usize>>) {
        match halves(&node) {
            Some((a, b)) if rng.below(3) > 0 => {
                go(a, rng, out);
                go(b, rng, out);
            }
            _ => out.push(node),
        }
    }
    let mut out = Vec::new();
    go(0..n, rng, &mut out);
    out
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
}

/// Every bit of two score lists: values, local values, params.
fn assert_same_bits(got: &[Score], want: &[Score]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!((&g.id, &g.params), (&w.id, &w.params));
        let bits = |v: &[(String, f64)]| v.iter().map(|(k, x)| (k.clone(), x.to_bits())).collect::<Vec<_>>();
        assert_eq!(bits(&g.values), bits(&w.values), "{}", g.id);
        let lbits = |s: &Score| {
            s.local
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()))
                .collect::<Vec<_>>()
        };
        assert_eq!(lbits(g), lbits(w), "{} local", g.id);
    }
}

/// Shards `plan` (in a shuffled order, through JSON), folds, and compares with one measure.
fn check_fold(run: &Run, plan: &[Range<usize>], rng: &mut Rng) {
    let Run { high, low, labels, specs } = run;
    let want = eval(high, 1, 32).measure(low, Some(labels), specs).unwrap();
    let mut order = plan.to_vec();
    shuffle(&mut order, rng);
    let shard = eval(high, 2, 7);
    let parts: Vec<Partial> = order
        .iter()
        .map(|r| {
            let text = shard.map_rows(low, Some(labels), r.clone(), specs).unwrap().to_json();
            Partial::from_json(&text, "part").unwrap()
        })
        .collect();
    let got = fold(&parts).unwrap();
    assert_eq!(got.projections.len(), 1);
    assert_same_bits(&got.projections[0].scores, &want);
    // The JSON users compare is the same text.
    assert_eq!(serde_json::to_string(&got.projections[0].scores).unwrap(), serde_json::to_string(&want).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn fold_of_random_plans_equals_one_measure(
        n in 33usize..1500, levels in prop::sample::select(vec![0u64, 2, 3]), k_frac in 0.0f64..1.0,
        seed in any::<u64>(),
    ) {
        let k = 1 + ((n / 4) as f64 * k_frac) as usize;
        let mut rng = Rng(seed ^ 0x77);
        let plan = random_plan(n, &mut rng);
        for r in &plan {
            prop_assert!(is_block(n, r));
        }
        check_fold(&tied(n, (3, levels), levels, 3, seed, specs(k, n)), &plan, &mut rng);
    }
}

#[test]
fn fold_equals_one_measure_at_5000_tie_heavy() {
    let n = 5000;
    check_fold(&tied(n, (4, 2), 3, 4, 11, specs(10, n)), &plan(n, 700), &mut Rng(5));
}

/// coranking's default k_max is n − 2, past ZADU's T&C range (K < n/2): its T and C tallies are
/// shorter than its other tallies, and the fold must accept them (it once refused them).
#[test]
fn fold_of_coranking_with_the_default_k_max() {
    let n = 301;
    let specs: Vec<Spec> = ["coranking", "tnc"].iter().map(|s| s.parse().unwrap()).collect();
    check_fold(&tied(n, (3, 3), 0, 2, 21, specs), &plan(n, 100), &mut Rng(3));
}

/// knn_overlap's two values are the means of its first two local outputs (its counts fold too);
/// nerv's three the means of its three (each block sweeps its own full rows).
#[test]
fn fold_of_knn_overlap_and_nerv_equals_one_measure() {
    let n = 700;
    let specs: Vec<Spec> =
        ["knn_overlap:k=6", "tnc:k=4", "nerv:perplexity=12", "nerv:perplexity=5,bandwidth=shared,lambda=0.2"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
    check_fold(&tied(n, (3, 3), 3, 2, 17, specs), &plan(n, 150), &mut Rng(9));
}

#[test]
fn plans_tile_the_rows_with_tree_blocks() {
    for n in [2usize, 33, 128, 129, 1000, 4099] {
        for max in [1usize, 100, 300, 5000] {
            let p = plan(n, max);
            assert_eq!(p.first().unwrap().start, 0);
            assert_eq!(p.last().unwrap().end, n);
            for w in p.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
            assert!(p.iter().all(|r| is_block(n, r) && (r.len() <= max.max(128) || r.len() == n)));
        }
    }
    // A leaf of the tree is never split, and a range across two nodes is no block.
    assert_eq!(plan(100, 10), vec![0..100]);
    assert!(!is_block(1000, &(0..10)));
    assert!(!is_block(1000, &(400..600)));
}

fn parts(r: &Run, plan: &[Range<usize>]) -> Vec<Partial> {
    let e = eval(&r.high, 1, 32);
    plan.iter().map(|b| e.map_rows(&r.low, Some(&r.labels), b.clone(), &r.specs).unwrap()).collect()
}

fn fold_error(parts: &[Partial]) -> String {
    match fold(parts) {
        Err(e @ Error::BadPartial { .. }) => e.to_string(),
        Ok(_) => panic!("expected a BadPartial error, got a fold"),
        Err(e) => panic!("expected a BadPartial error, got {e:?}"),
    }
}

#[test]
fn fold_rejects_gaps_overlaps_and_mixed_runs() {
    let n = 600;
    let r = run(n);
    let plan = plan(n, 150);
    assert!(plan.len() >= 4);
    let all = parts(&r, &plan);
    assert!(fold(&all).is_ok());

    let mut gap = all.clone();
    gap.remove(1);
    let msg = fold_error(&gap);
    assert!(msg.contains(&format!("rows {}:{} are in no partial", plan[1].start, plan[1].end)), "{msg}");

    let mut tail = all.clone();
    tail.pop();
    assert!(fold_error(&tail).contains("are in no partial"));

    let mut twice = all.clone();
    twice.push(all[2].clone());
    assert!(fold_error(&twice).contains("overlaps"));

    // A block that contains two others overlaps them.
    let parent = plan[0].start..plan[1].end;
    if is_block(n, &parent) {
        let mut over = all.clone();
        over.extend(parts(&r, &[parent]));
        assert!(fold_error(&over).contains("overlaps"));
    }

    // Another run: other data, other specs, other labels.
    let other = Run { low: data("low", n, 2, 3, 99), ..run(n) };
    let mut mixed = all.clone();
    mixed[0] = parts(&other, &plan[..1]).remove(0);
    assert!(fold_error(&mixed).contains("fingerprint"));
    let other = Run { specs: specs(6, n), ..run(n) };
    mixed[0] = parts(&other, &plan[..1]).remove(0);
    assert!(fold_error(&mixed).contains("specs"));
    let other = Run { labels: Labels::new((0..n as i64).map(|i| i % 2).collect()), ..run(n) };
    mixed[0] = parts(&other, &plan[..1]).remove(0);
    assert!(fold_error(&mixed).contains("fingerprint"));

    assert!(fold_error(&[]).contains("no partials"));
}

#[test]
fn damaged_partials_are_refused() {
    let n = 300;
    let r = run(n);
    let plan = plan(n, 150);
    let all = parts(&r, &plan);

    let mut value = all.clone();
    value[0].scores[0].locals[0].bits[3] ^= 1 << 40;
    assert!(fold_error(&value).contains("stored sum is not the sum"));

    let mut short = all.clone();
    short[1].scores[1].locals[0].bits.pop();
    assert!(fold_error(&short).contains("values for"));

    // Co-ranking tallies past what the block's rows can hold (they would overflow when added),
    // or sized for another k_max.
    let mut huge = all.clone();
    huge[1].scores[5].counts.as_mut().unwrap().joint[0] = u64::MAX;
    assert!(fold_error(&huge).contains("rows from its first row on can hold"));
    let mut resized = all.clone();
    resized[1].scores[5].counts.as_mut().unwrap().err_low.pop();
    assert!(fold_error(&resized).contains("not sized"));

    let mut off = all.clone();
    off[0].rows = [0, 10];
    assert!(fold_error(&off).contains("not a block of the shard plan"));

    let text = all[0].to_json();
    let bad_version = text.replacen("\"version\":2", "\"version\":3", 1);
    match Partial::from_json(&bad_version, "p.fpart") {
        Err(Error::BadPartial { what, reason }) => {
            assert!(what == "p.fpart" && reason.contains("version 3"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // One digit of a value changed in the text: its checksum refuses it (the stored sum cannot
    // see a change in the last bit), in both forms; sealed again, it reads.
    let bits = all[0].scores[0].locals[0].bits[3];
    let changed = text.replacen(&format!("{bits},"), &format!("{},", bits ^ 1), 1);
    assert_ne!(changed, text);
    match Partial::from_json(&changed, "p.fpart") {
        Err(Error::BadPartial { what, reason }) => {
            assert!(what == "p.fpart" && reason.contains("checksum") && reason.contains("damaged"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    let mut bytes = all[0].to_bytes();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x10;
    assert!(
        matches!(Partial::from_bytes(&bytes, "p"), Err(Error::BadPartial { reason, .. }) if reason.contains("checksum"))
    );
    let mut resealed = all[0].clone();
    resealed.scores[0].locals[0].bits[3] ^= 1;
    resealed.seal();
    assert_ne!(resealed.checksum, all[0].checksum);
    assert_eq!(Partial::from_json(&resealed.to_json(), "p").unwrap(), resealed);
    assert_eq!(Partial::from_bytes(&resealed.to_bytes(), "p").unwrap(), resealed);
    for junk in ["", "{}", "[1,2]", &text[..text.len() / 2]] {
        assert!(matches!(Partial::from_json(junk, "p.fpart"), Err(Error::BadPartial { .. })));
    }
}

/// The fold's run report times the fold itself (a partial carries no timings): every phase is
/// present and non-negative, the phases add up, and the fold took some time.
#[test]
fn the_fold_reports_its_own_timings() {
    let n = 600;
    let r = run(n);
    let got = fold(&parts(&r, &plan(n, 150))).unwrap();
    let report = serde_json::to_value(&got.run).unwrap();
    let t = |key: &str| report["timings"][key].as_f64().unwrap_or_else(|| panic!("run.timings.{key}: {report}"));
    for key in ["validate_s", "resources_s", "measures_s", "total_s"] {
        assert!(t(key) >= 0.0, "run.timings.{key} = {}", t(key));
    }
    assert!(t("total_s") > 0.0, "{report}");
    assert!((t("validate_s") + t("measures_s") - t("total_s")).abs() <= 1e-9 * t("total_s").max(1.0));
}

#[test]
fn map_rows_refuses_other_measures_and_off_plan_rows() {
    let n = 300;
    let r = run(n);
    let e = eval(&r.high, 1, 32);
    for id in [
        "srho",
        "stress",
        "nm_stress",
        "snc",
        "l_tnc",
        "dtm",
        "sammon",
        "cca_stress:lambda=1",
        "residual_variance",
        "ale",
        "density_preservation",
        "triplet_accuracy",
        "global_score",
    ] {
        let spec: Spec = id.parse().unwrap();
        match e.map_rows(&r.low, Some(&r.labels), 0..n, &[spec]) {
            Err(err @ Error::NotShardable { .. }) => {
                let name = id.split(':').next().unwrap();
                assert!(err.to_string().starts_with(&format!("{name}: cannot be computed in row shards")), "{err}")
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    #[allow(clippy::reversed_empty_ranges)]
    let ranges = [0..10, 5..300, 0..301, 200..100];
    for rows in ranges {
        match e.map_rows(&r.low, Some(&r.labels), rows.clone(), &r.specs) {
            Err(err @ Error::BadRows { .. }) => assert!(err.to_string().contains("not a block"), "{err}"),
            other => panic!("{rows:?}: {other:?}"),
        }
    }
}

#[test]
fn a_shard_is_the_same_bytes_every_time() {
    let n = 1000;
    let r = run(n);
    let block = plan(n, 300)[1].clone();
    let once = |threads, rows_per_task| {
        eval(&r.high, threads, rows_per_task)
            .map_rows(&r.low, Some(&r.labels), block.clone(), &r.specs)
            .unwrap()
            .to_json()
    };
    let first = once(1, 32);
    assert_eq!(once(1, 32), first);
    assert_eq!(once(2, 5), first);
    assert_eq!(once(2, 1000), first);
}

#[test]
fn pool_spans_tile_the_plan_in_balanced_runs_of_blocks() {
    for n in [2usize, 129, 700, 5000, 20_000] {
        for w in 1..=9 {
            let spans = spans(n, w);
            assert!(!spans.is_empty() && spans.len() <= w, "n={n} w={w}");
            let blocks: Vec<Range<usize>> = spans.iter().flatten().cloned().collect();
            assert_eq!(blocks.first().unwrap().start, 0);
            assert_eq!(blocks.last().unwrap().end, n);
            for b in blocks.windows(2) {
                assert_eq!(b[0].end, b[1].start, "n={n} w={w}");
            }
            assert!(blocks.iter().all(|b| is_block(n, b)), "n={n} w={w}");
            // Balanced: each span within a block (≤ n/(4w) rows or a 128-row leaf) of its share.
            if n >= 5000 {
                let slack = (n / (4 * w)).max(128);
                for s in &spans {
                    let rows = s.last().unwrap().end - s[0].start;
                    assert!(rows.abs_diff(n / w) <= slack, "n={n} w={w}: a span of {rows} rows");
                }
                assert_eq!(spans.len(), w, "n={n} w={w}");
            }
        }
    }
    // As few blocks as balance allows: two workers take one half each.
    assert_eq!(spans(8000, 2), vec![vec![0..4000], vec![4000..8000]]);
    assert!(spans(20_000, 3).iter().all(|s| s.len() <= 4), "{:?}", spans(20_000, 3));
}

/// With coranking, a span's tallies travel on its first block (zeros on the others): they fold to
/// one measure for any pool size, and the fold's bound on a block's tallies (the run's n rows,
/// not the block's) accepts them; a tally past the run's bound is named on its block.
#[test]
fn spans_with_coranking_carry_their_tallies_on_the_first_block() {
    let n = 1000;
    let r = run(n);
    let want = eval(&r.high, 1, 32).measure(&r.low, Some(&r.labels), &r.specs).unwrap();
    for w in [2, 3] {
        let parts: Vec<Partial> = spans(n, w)
            .iter()
            .flat_map(|blocks| {
                let e = eval(&r.high, 1, 16);
                pollster::block_on(e.map_blocks_async(&r.low, Some(&r.labels), blocks, &r.specs)).unwrap()
            })
            .collect();
        let c = |p: &Partial| p.scores.iter().find_map(|s| s.counts.clone()).expect("coranking counts");
        // Tallies on one block per span (the first), zeros on the rest.
        let spans = spans(n, w);
        let carrying: Vec<usize> = (0..parts.len()).filter(|&i| c(&parts[i]).joint.iter().any(|&j| j > 0)).collect();
        let firsts: Vec<usize> = spans.iter().scan(0, |at, s| Some(std::mem::replace(at, *at + s.len()))).collect();
        assert!(parts.len() > spans.len() && carrying == firsts, "w={w}: {carrying:?} {firsts:?}");
        assert_same_bits(&fold(&parts).unwrap().projections[0].scores, &want);
        let s = parts[1].scores.iter().position(|s| s.counts.is_some()).unwrap();
        let total: u64 = parts.iter().map(|p| c(p).joint[0]).sum();
        let mut wrong = parts.clone();
        wrong[1].scores[s].counts.as_mut().unwrap().joint[0] = n as u64 + 1;
        let e = fold(&wrong).unwrap_err().to_string();
        let from = n - parts[1].rows[0];
        assert!(e.contains(&format!("is more than the {from} rows from its first row on can hold")), "{e}");
        // Tallies a block cannot hold that still fit the run's n rows: the last block is held
        // to its own rows, and a block to the rows from its first on.
        let last = parts.len() - 1;
        let own = (parts[last].rows[1] - parts[last].rows[0]) as u64;
        assert!(total + own < n as u64, "w={w}: the case fits the run's bound");
        let mut wrong = parts.clone();
        wrong[last].scores[s].counts.as_mut().unwrap().joint[0] = own + 1;
        let e = fold(&wrong).unwrap_err().to_string();
        assert!(e.contains(&format!("joint[0] = {} is more than its {own} rows can hold", own + 1)), "{e}");
        let mut wrong = parts.clone();
        // A block before the last span's first, so that tallies follow it: alone it fits.
        let mid = firsts.last().unwrap() - 1;
        let later = n - parts[mid].rows[0];
        let later_total: u64 = parts[mid..].iter().map(|p| c(p).joint[0]).sum();
        assert!(parts[mid + 1..].iter().map(|p| c(p).joint[0]).sum::<u64>() > 0, "w={w}");
        wrong[mid].scores[s].counts.as_mut().unwrap().joint[0] += later as u64 + 1 - later_total;
        let e = fold(&wrong).unwrap_err().to_string();
        assert!(e.contains(&format!("with the later blocks' is more than the {later} rows")), "{e}");
    }
}

/// A worker's span mapped at once (one partial per block) folds to one measure, on the first
/// call and on later calls that reuse the span's resident kNN and rank-table rows; the spans
/// of any pool size fold to the same bits.
#[test]
fn spans_mapped_at_once_fold_to_one_measure_with_resident_rows() {
    let n = 900;
    // No coranking here: with it each block runs the fused pass (tested in the fold tests above).
    let r = tied(n, (4, 3), 3, 3, 8, common::neighbourhood_specs(6, n, "lcmc:k=3"));
    let want = eval(&r.high, 1, 32).measure(&r.low, Some(&r.labels), &r.specs).unwrap();
    // A projection that keeps neighbourhoods (X's first two coordinates, jittered): its index
    // counts the missing neighbours' ranks without full rows.
    let mut jit = Rng(99);
    let second = common::points("low2", n, 2, |i, c| r.high.row(i)[c] + 0.01 * jit.uniform());
    let want2 = eval(&r.high, 1, 32).measure(&second, Some(&r.labels), &r.specs).unwrap();
    for w in [1, 2, 3, 7] {
        let workers: Vec<Evaluator> = spans(n, w).iter().map(|_| eval(&r.high, 1, 16)).collect();
        for (call, (low, want)) in [(&r.low, &want), (&second, &want2), (&second, &want2)].into_iter().enumerate() {
            let parts: Vec<Partial> = spans(n, w)
                .iter()
                .zip(&workers)
                .flat_map(|(blocks, e)| {
                    pollster::block_on(e.map_blocks_async(low, Some(&r.labels), blocks, &r.specs)).unwrap()
                })
                .collect();
            let folded = fold(&parts).unwrap();
            assert_same_bits(&folded.projections[0].scores, want);
            // The fold reports the spans' index and table tallies too: every projection row's kNN
            // came from the index, and the third call's original ranks from the table rows.
            let work = &folded.run.work;
            assert_eq!(work.low_rows_indexed, n as u64, "w={w} call {call}");
            if call == 2 {
                assert!(work.ranks_from_table > 0, "w={w}: {work:?}");
            }
            // The first call computes the original space's rows of every span; the third looks
            // its ranks up in the span's rank-table rows (built by the second), and the generic
            // projection's index computes almost no rows either.
            let rows: u64 = parts.iter().map(|p| p.work.distance_rows).sum();
            match call {
                0 => assert!(rows >= n as u64, "w={w}: {rows} distance rows"),
                2 => assert!(rows < n as u64 / 2, "w={w}: {rows} distance rows"),
                _ => {}
            }
        }
    }
    // Blocks that do not follow each other are refused.
    let e = eval(&r.high, 1, 16);
    let p = plan(n, 200);
    let err = pollster::block_on(e.map_blocks_async(&r.low, Some(&r.labels), &[p[0].clone(), p[2].clone()], &r.specs))
        .unwrap_err();
    assert!(matches!(err, Error::BadRows { .. }) && err.to_string().contains("follow each other"), "{err}");
}
