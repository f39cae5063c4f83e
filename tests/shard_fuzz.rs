//! Fuzzing the partial (`.fpart`) reader and the fold with proptest, as src/data/fuzz.rs does
//! for `.npy`: arbitrary bytes, valid partials with one byte or one number changed, and
//! hand-made degenerate runs. Every input gives a result or an error with a one-line message,
//! never a panic, and promptly.

mod common;

use std::time::{Duration, Instant};

use common::resealed;
use faithful::shard::plan;
use faithful::{Evaluator, Options, Partial, Points, Spec, fold};
use proptest::prelude::*;

/// What one read and fold may take: milliseconds are expected.
const PROMPT: Duration = Duration::from_secs(2);

/// The partials of a small run: n = 300 in three blocks, every kind of local value and the
/// co-ranking tallies.
fn valid() -> &'static Vec<String> {
    static PARTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    PARTS.get_or_init(|| {
        let n = 300;
        let v = |s: u64, d: usize| (0..n * d).map(|i| ((i as u64 * s) % 7) as f64).collect::<Vec<_>>();
        let high = Points::from_vec("high", n, 3, v(5, 3)).unwrap();
        let low = Points::from_vec("low", n, 2, v(3, 2)).unwrap();
        let mut o = Options::default();
        o.threads = Some(1);
        let ev = Evaluator::new(high, o);
        let specs: Vec<Spec> =
            ["tnc:k=4", "mrre:k=3", "coranking:k_max=6"].iter().map(|s| s.parse().unwrap()).collect();
        plan(n, 100).into_iter().map(|r| ev.map_rows(&low, None, r, &specs).unwrap().to_json()).collect()
    })
}

/// Reads `texts` as partials and folds those that read; errors are one short line, and a fold
/// that succeeds holds only finite numbers (never a NaN, an infinity or a JSON null).
fn read_and_fold(texts: &[String]) {
    let t = Instant::now();
    let one_line = |msg: String| {
        assert!(!msg.chars().any(char::is_control), "control character in {msg:?}");
        assert!(msg.chars().count() < 600, "{} chars: {msg}", msg.len());
    };
    let mut parts = Vec::new();
    for (i, text) in texts.iter().enumerate() {
        match Partial::from_json(text, &format!("part-{i}.fpart")) {
            Ok(p) => parts.push(p),
            Err(e) => one_line(e.to_string()),
        }
    }
    match fold(&parts) {
        Err(e) => one_line(e.to_string()),
        Ok(ev) => {
            for score in ev.projections.iter().flat_map(|p| &p.scores) {
                let all = score
                    .values
                    .iter()
                    .map(|(_, v)| *v)
                    .chain(score.local.iter().flatten().chain(&score.curves).flat_map(|(_, v)| v.iter().copied()));
                for v in all {
                    assert!(v.is_finite(), "{}: a folded value is {v}", score.id);
                }
            }
        }
    }
    assert!(t.elapsed() < PROMPT, "took {:?}", t.elapsed());
}

/// The number tokens of `text`: (start, end) byte ranges of digit runs.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_are_an_error_or_a_fold(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        read_and_fold(&[String::from_utf8_lossy(&bytes).into_owned()]);
    }

    #[test]
    fn a_changed_byte_is_an_error_or_a_fold(part in 0usize..3, at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut texts = valid().clone();
        let mut b = texts[part].clone().into_bytes();
        let i = at.index(b.len());
        b[i] = byte;
        texts[part] = String::from_utf8_lossy(&b).into_owned();
        read_and_fold(&texts);
    }

    #[test]
    fn a_changed_number_is_an_error_or_a_fold(
        part in 0usize..3, at in any::<prop::sample::Index>(),
        value in prop_oneof![0u64..4, 0u64..400, Just(u64::from(u32::MAX)), Just(u64::MAX), any::<u64>()],
        alone in any::<bool>(),
    ) {
        let mut texts = valid().clone();
        let spans = numbers(&texts[part]);
        let (s, e) = spans[at.index(spans.len())];
        texts[part].replace_range(s..e, &value.to_string());
        if alone {
            texts = vec![texts[part].clone()];
        }
        read_and_fold(&texts);
    }

    /// A changed byte or number that changes what a partial holds is refused by its checksum
    /// (it was folded as if whole); one that reads must hold what the original holds.
    #[test]
    fn a_changed_byte_or_number_never_reads_as_other_content(
        part in 0usize..3, at in any::<prop::sample::Index>(), byte in any::<u8>(),
        value in prop_oneof![0u64..10, 0u64..400, any::<u64>()], number in any::<bool>(),
    ) {
        let original = Partial::from_json(&valid()[part], "part").unwrap();
        let text = if number {
            let mut t = valid()[part].clone();
            let spans = numbers(&t);
            let (s, e) = spans[at.index(spans.len())];
            t.replace_range(s..e, &value.to_string());
            t
        } else {
            let mut b = valid()[part].clone().into_bytes();
            let i = at.index(b.len());
            b[i] = byte;
            String::from_utf8_lossy(&b).into_owned()
        };
        match Partial::from_json(&text, "part-0.fpart") {
            Ok(p) => prop_assert_eq!(p, original),
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.contains("part-0.fpart"), "{}", msg);
            }
        }
    }
}

/// A value that breaks arithmetic: huge, tiny, negative, NaN, infinite, or ordinary.
fn hostile_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::MAX),
        Just(-f64::MAX),
        Just(1e308),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(-1.0),
        Just(0.0),
        -2.0f64..2.0,
        any::<f64>(),
    ]
}

/// A count that breaks arithmetic: 0, 1, 2, near n, past n, u32/u64 limits.
fn hostile_count() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(1), Just(2), 3u64..400, Just(u64::from(u32::MAX)), Just(u64::MAX), any::<u64>()]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// One field of real partials changed by meaning (issue 24): a local value (its block sum
    /// kept, or recomputed so that the partial stays self-consistent), a stored sum, a
    /// co-ranking tally or its sizes, n, a spec's k, the rows. An error of one line or a fold
    /// of finite numbers; never a panic, a NaN or a null.
    #[test]
    fn a_changed_field_is_an_error_or_a_finite_fold(
        part in 0usize..3, which in 0usize..10, at in any::<prop::sample::Index>(),
        value in hostile_f64(), count in hostile_count(), all in any::<bool>(),
    ) {
        let mut parts: Vec<serde_json::Value> = valid().iter().map(|t| serde_json::from_str(t).unwrap()).collect();
        let targets: Vec<usize> = if all { (0..parts.len()).collect() } else { vec![part] };
        for &t in &targets {
            let p = &mut parts[t];
            let scores = p["scores"].as_array_mut().unwrap();
            let s = at.index(scores.len());
            match which {
                0..=2 => {
                    let locals = scores[s]["locals"].as_array_mut().unwrap();
                    let l = at.index(locals.len());
                    let mut v: Vec<f64> = locals[l]["bits"].as_array().unwrap().iter().map(|b| f64::from_bits(b.as_u64().unwrap())).collect();
                    match which {
                        // A value changed, the sum kept: the fold must see the mismatch.
                        0 => { let i = at.index(v.len()); v[i] = value; }
                        // Every value changed and the sum recomputed: self-consistent.
                        1 => { v.iter_mut().for_each(|x| *x = value); locals[l]["sum_bits"] = faithful::sum::pairwise_sum(&v).to_bits().into(); }
                        // Only the stored sum.
                        _ => locals[l]["sum_bits"] = value.to_bits().into(),
                    }
                    locals[l]["bits"] = v.iter().map(|x| x.to_bits()).collect::<Vec<_>>().into();
                }
                3 | 4 => {
                    // coranking is the last spec: its tallies.
                    let counts = &mut scores[2]["counts"];
                    let field = ["joint", "trust", "cont", "err_low", "err_high"][at.index(5)];
                    if which == 3 {
                        let arr = counts[field].as_array_mut().unwrap();
                        if !arr.is_empty() { let i = at.index(arr.len()); arr[i] = count.into(); }
                    } else {
                        counts[["n", "k_max", "k_tnc"][at.index(3)]] = count.into();
                    }
                }
                5 => p["n"] = count.into(),
                6 => {
                    let spec = ["tnc:k=", "mrre:k=", "coranking:k_max="][at.index(3)];
                    let k = if count > i64::MAX as u64 { count.to_string() } else { (count % 400).to_string() };
                    let specs = p["specs"].as_array_mut().unwrap();
                    let i = at.index(specs.len());
                    specs[i] = format!("{spec}{k}").into();
                }
                7 => p["rows"] = serde_json::json!([count % 400, (count / 400) % 400]),
                8 => p["dim_high"] = (count % 3).into(),
                _ => p["backend"] = ["cpu", "gpu", "tpu", "\u{1b}[2J", ""][at.index(5)].into(),
            }
        }
        let texts: Vec<String> = parts.iter().map(resealed).collect();
        read_and_fold(&texts);
    }
}

/// Degenerate runs a partial can claim: n of 0, 1 and 2 with co-ranking's default k_max
/// (n − 2), a block past n, empty tallies.
#[test]
fn degenerate_partials_are_errors_not_panics() {
    let text = &valid()[0];
    let p: serde_json::Value = serde_json::from_str(text).unwrap();
    for n in [0usize, 1, 2, 3] {
        for k_max in ["0", "1", "6"] {
            let mut q = p.clone();
            q["n"] = n.into();
            q["rows"] = serde_json::json!([0, n]);
            q["specs"] = serde_json::json!(["tnc:k=4", "mrre:k=3", format!("coranking:k_max={k_max}")]);
            // Local values consistent with the claimed rows (n ones and their sum), so the
            // fold gets past its per-partial checks to the measures' own arithmetic.
            for score in q["scores"].as_array_mut().unwrap() {
                for local in score["locals"].as_array_mut().unwrap() {
                    local["bits"] = serde_json::json!(vec![1f64.to_bits(); n]);
                    local["sum_bits"] = (n as f64).to_bits().into();
                }
                if !score["counts"].is_null() {
                    score["counts"]["n"] = n.into();
                }
            }
            read_and_fold(&[resealed(&q)]);
        }
    }
}

/// The binary form (`Partial::to_bytes`, the npm pool's) of the valid partials, and the same
/// read-and-fold of bytes (errors are one short line, folds finite, all prompt).
fn valid_bytes() -> Vec<Vec<u8>> {
    valid().iter().map(|t| Partial::from_json(t, "part").unwrap().to_bytes()).collect()
}

fn read_and_fold_bytes(blobs: &[Vec<u8>]) {
    let t = Instant::now();
    let mut parts = Vec::new();
    for (i, b) in blobs.iter().enumerate() {
        match Partial::from_bytes(b, &format!("partial {i}")) {
            Ok(p) => parts.push(p),
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.chars().any(char::is_control), "control character in {msg:?}");
                assert!(msg.chars().count() < 600, "{} chars: {msg}", msg.len());
            }
        }
    }
    // The fold of what read is read_and_fold's (through the JSON form: the same partials).
    let texts: Vec<String> = parts.iter().map(Partial::to_json).collect();
    read_and_fold(&texts);
    assert!(t.elapsed() < PROMPT, "took {:?}", t.elapsed());
}

/// The binary form reads back to the same partial and folds to the same bits as the JSON.
#[test]
fn binary_partials_read_back_whole_and_fold_as_the_json() {
    let parts: Vec<Partial> = valid().iter().map(|t| Partial::from_json(t, "part").unwrap()).collect();
    let back: Vec<Partial> = valid_bytes().iter().map(|b| Partial::from_bytes(b, "part").unwrap()).collect();
    assert_eq!(back, parts);
    assert!(parts.iter().any(|p| p.scores.iter().any(|s| s.locals.iter().any(|l| !l.bits.is_empty()))));
    assert_eq!(format!("{:?}", fold(&back).unwrap().projections), format!("{:?}", fold(&parts).unwrap().projections));
    // Every truncation is an error naming the partial, never a shorter partial.
    let b = &valid_bytes()[0];
    for cut in 0..b.len() {
        let e = Partial::from_bytes(&b[..cut], "partial 0").unwrap_err().to_string();
        assert!(e.contains("partial 0"), "{e}");
    }
    let mut long = b.clone();
    long.push(0);
    assert!(Partial::from_bytes(&long, "p").unwrap_err().to_string().contains("1 bytes follow its last value"));
    // A JSON text is not the binary form, nor the binary form a JSON text.
    assert!(Partial::from_bytes(valid()[0].as_bytes(), "p").is_err());
    assert!(Partial::from_json(&String::from_utf8_lossy(b), "p").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_after_the_magic_are_an_error_or_a_fold(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut b = faithful::shard::PARTIAL_BINARY_MAGIC.to_vec();
        b.extend(bytes);
        read_and_fold_bytes(&[b]);
    }

    /// One byte changed anywhere (the header's length, the JSON, a count, a value), or a
    /// count set to a hostile value: an error of one line or a finite fold, in bounded memory.
    #[test]
    fn a_changed_binary_byte_or_count_is_an_error_or_a_fold(
        part in 0usize..3, at in any::<prop::sample::Index>(), byte in any::<u8>(), count in hostile_count(), which in any::<bool>(),
    ) {
        let mut blobs = valid_bytes();
        let b = &mut blobs[part];
        if which {
            let i = at.index(b.len());
            b[i] = byte;
        } else {
            // The first local's count sits right after the header.
            let head = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
            b[12 + head..20 + head].copy_from_slice(&count.to_le_bytes());
        }
        read_and_fold_bytes(&blobs);
    }
}
