//! The distortion views' data (`Evaluator::views`, `faithful views`) and the HTML report
//! (`Evaluator::html_report`, `faithful report`): the lists and ranks are the exact kNN lists and
//! the brute-force ranks, the Shepard bins hold every pair once, the co-ranking matrix every
//! ordered pair once with the coranking measure's R_NX bits, the local values are `measure
//! --local`'s, and the report is one self-contained, deterministic, bounded file.

mod common;

use std::ffi::OsString;

use common::{levels, uniform, with_duplicates};
use faithful::reference::distance_pair;
use faithful::{Evaluator, Options, Points, ReportOptions, Spec, ViewsRequest};

/// The 1-based rank of j among i's neighbours in `p` (ties by index, self excluded).
fn rank(p: &Points, i: usize, j: usize) -> u32 {
    let d = distance_pair(p, i, j);
    1 + (0..p.n())
        .filter(|&l| {
            l != i && {
                let e = distance_pair(p, i, l);
                e < d || (e == d && l < j)
            }
        })
        .count() as u32
}

fn specs(list: &[&str]) -> Vec<Spec> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

/// Tie-heavy data (few levels, duplicates) so that ranks hinge on ties by index.
fn cases() -> Vec<(Points, Points)> {
    vec![
        (levels("high", 90, 4, 3, 1), levels("low", 90, 2, 4, 2)),
        (with_duplicates(70, 3, 5), uniform("low", 70, 2, 6)),
    ]
}

#[test]
fn lists_and_ranks_are_the_exact_lists_and_the_brute_force_ranks() {
    for (high, low) in cases() {
        let n = high.n();
        let k = 7;
        let eval = Evaluator::builder(high.clone()).build();
        let v =
            eval.views(&[&low], None, &[], &ViewsRequest::new().k(k).shepard_bins(0).coranking_per_octave(0)).unwrap();
        let (knn_high, _) = Evaluator::builder(high.clone()).build().knn(k).unwrap();
        let (knn_low, _) = Evaluator::builder(low.clone()).build().knn(k).unwrap();
        assert_eq!(v.knn_high.as_deref().unwrap(), &knn_high.idx[..]);
        let nb = v.projections[0].neighbourhoods.as_ref().unwrap();
        assert_eq!(nb.knn_low, knn_low.idx);
        for i in 0..n {
            for s in 0..k {
                let j = knn_high.idx[i * k + s] as usize;
                assert_eq!(nb.rank_low_of_high(i)[s], rank(&low, i, j), "r^Y({i}, {j})");
                let j = knn_low.idx[i * k + s] as usize;
                assert_eq!(nb.rank_high_of_low(i)[s], rank(&high, i, j), "r^X({i}, {j})");
            }
        }
        assert!(v.projections[0].shepard.is_none() && v.projections[0].coranking.is_none());
    }
}

#[test]
fn the_local_values_are_measure_locals_and_lists_at_a_smaller_k_are_prefixes() {
    let (high, low) = cases().remove(0);
    let s = specs(&["tnc:k=12", "mrre:k=12"]);
    let want = Evaluator::builder(high.clone()).local(true).build().measure(&low, None, &s).unwrap();
    let eval = Evaluator::builder(high.clone()).build();
    // The specs' k (12) sizes the pass; the views take the first 5 of each list.
    let v = eval.views(&[&low], None, &s, &ViewsRequest::new().k(5).shepard_bins(0).coranking_per_octave(0)).unwrap();
    assert_eq!(v.evaluation.projections[0].scores, want);
    let nb = v.projections[0].neighbourhoods.as_ref().unwrap();
    let (knn_low, _) = Evaluator::builder(low.clone()).build().knn(12).unwrap();
    for i in 0..high.n() {
        assert_eq!(nb.low(i), &knn_low.row(i, 12)[..5]);
    }
}

#[test]
fn shepard_counts_every_pair_once_for_any_thread_count_and_block_size() {
    let (high, low) = cases().remove(1);
    let n = high.n() as u64;
    let request = ViewsRequest::new().k(0).shepard_bins(17).coranking_per_octave(0);
    let mut seen = None;
    for (threads, block) in [(1, 1), (2, 7), (0, 64)] {
        let mut o = Options::default();
        o.threads = Some(threads);
        o.block_rows = block;
        let v = Evaluator::new(high.clone(), o).views(&[&low], None, &[], &request).unwrap();
        let sh = v.projections[0].shepard.clone().unwrap();
        assert_eq!(sh.pairs, n * (n - 1) / 2);
        assert_eq!(sh.counts.iter().sum::<u64>(), sh.pairs);
        // Every pair in the bin its distances name.
        let mut want = vec![0u64; 17 * 17];
        for i in 0..high.n() {
            for j in i + 1..high.n() {
                let a = faithful::resources::shepard_bin(distance_pair(&high, i, j), sh.max_high, 17);
                let b = faithful::resources::shepard_bin(distance_pair(&low, i, j), sh.max_low, 17);
                want[a * 17 + b] += 1;
            }
        }
        assert_eq!(sh.counts, want);
        if let Some(prev) = &seen {
            assert_eq!(&sh, prev);
        }
        seen = Some(sh);
    }
}

#[test]
fn the_coranking_matrix_holds_every_ordered_pair_and_the_measures_rnx() {
    let (high, low) = cases().remove(0);
    let n = high.n();
    let eval = Evaluator::builder(high.clone()).build();
    let v = eval.views(&[&low], None, &[], &ViewsRequest::new().k(0).shepard_bins(0).coranking_per_octave(3)).unwrap();
    let c = v.projections[0].coranking.as_ref().unwrap();
    assert_eq!(c.counts.iter().sum::<u64>(), (n * (n - 1)) as u64);
    assert_eq!(c.edges[0], 1);
    assert_eq!(*c.edges.last().unwrap() as usize, n);
    let measure = Evaluator::builder(high).build().measure(&low, None, &specs(&["coranking"])).unwrap();
    assert_eq!(measure[0].curve("rnx").unwrap(), &c.rnx[..]);
    assert_eq!(measure[0].value("auc_rnx"), Some(c.auc_rnx));
    // The diagonal bins of a projection onto itself hold every pair.
    let same = Evaluator::builder(low.clone()).build();
    let v = same.views(&[&low], None, &[], &ViewsRequest::new().k(0).shepard_bins(0).coranking_per_octave(3)).unwrap();
    let c = v.projections[0].coranking.as_ref().unwrap();
    let b = c.bins();
    assert_eq!((0..b).map(|t| c.counts[t * b + t]).sum::<u64>(), (n * (n - 1)) as u64);
}

#[test]
fn bad_requests_are_typed_errors() {
    let (high, low) = cases().remove(1);
    let eval = Evaluator::builder(high).build();
    for (r, phrase) in [
        (ViewsRequest::new().k(70), "1 <= k < n"),
        (ViewsRequest::new().shepard_bins(1025), "at most 1024"),
        (ViewsRequest::new().coranking_per_octave(17), "at most 16"),
    ] {
        let e = eval.views(&[&low], None, &[], &r).unwrap_err().to_string();
        assert!(e.contains(phrase), "{e}");
    }
    let mut o = Options::default();
    o.memory_budget = Some(1000);
    let e = Evaluator::new(uniform("high", 70, 3, 1), o).views(&[&low], None, &[], &ViewsRequest::new()).unwrap_err();
    assert!(matches!(e, faithful::Error::ParamMemory { .. }), "{e}");
    // A kNN graph holds no ranks or distances of arbitrary pairs: refused by name, never run.
    let (n, k) = (70, 2);
    let idx: Vec<i64> = (0..n).flat_map(|i| [(i + 1) % n, (i + 2) % n]).map(|j| j as i64).collect();
    let graph = faithful::KnnGraph::from_arrays("g", n, k, &idx, &vec![1.0; n * k]).unwrap();
    let e = Evaluator::builder(Points::from_knn_graph("g", graph))
        .build()
        .views(&[&low], None, &[], &ViewsRequest::new())
        .unwrap_err();
    assert!(matches!(e, faithful::Error::NeedsInput { .. }), "{e}");
    assert!(e.to_string().contains("views: needs every original distance and rank"), "{e}");
}

fn example() -> (Points, Vec<Points>, faithful::Labels) {
    let ex = faithful::example_digits();
    (ex.high, ex.projections, ex.labels)
}

#[test]
fn the_example_report_is_small_deterministic_and_self_contained() {
    let (high, lows, labels) = example();
    let lows: Vec<&Points> = lows.iter().collect();
    let eval = Evaluator::builder(high.clone()).build();
    let r = eval.html_report(&lows, Some(&labels), &[], &ReportOptions::new()).unwrap();
    assert!(r.html.len() < 2_000_000, "{} bytes", r.html.len());
    assert!(r.left_out.is_empty(), "{:?}", r.left_out);
    for needle in
        ["<!doctype html>", "data-status=\"loading\"", "id=\"faithful-data\"", "startReport()", "DecompressionStream"]
    {
        assert!(r.html.contains(needle), "{needle}");
    }
    // No network: nothing is fetched or linked from elsewhere.
    for banned in ["http://", "https://", "<link", " src=", "import(", "fetch("] {
        assert!(!r.html.contains(banned), "the report refers to {banned}");
    }
    let again = Evaluator::builder(high).build().html_report(&lows, Some(&labels), &[], &ReportOptions::new()).unwrap();
    assert_eq!(r.html, again.html, "the same inputs give the same bytes");
}

#[test]
fn a_report_past_its_size_limit_leaves_data_out_and_says_so() {
    let (high, lows, labels) = example();
    let lows: Vec<&Points> = lows.iter().collect();
    let eval = Evaluator::builder(high).build();
    let small = eval.html_report(&lows, Some(&labels), &[], &ReportOptions::new().max_bytes(400_000)).unwrap();
    assert!(small.left_out.iter().any(|l| l.contains("kNN lists")), "{:?}", small.left_out);
    assert!(small.html.contains("Left out of this report"));
    assert!(small.html.len() <= 400_000, "{}", small.html.len());
    // A limit even the scores alone pass: refused, naming the smallest report's size.
    let e = eval.html_report(&lows, Some(&labels), &[], &ReportOptions::new().max_bytes(1)).unwrap_err().to_string();
    assert!(e.starts_with("report: parameter max_size=1: the smallest report"), "{e}");
    let smallest: usize =
        e.rsplit('(').next().and_then(|t| t.strip_suffix(" bytes)")).expect("its size").parse().unwrap();
    // At that size it is written, the whole page counted (its code is most of it).
    let tiny = eval.html_report(&lows, Some(&labels), &[], &ReportOptions::new().max_bytes(smallest as u64)).unwrap();
    assert!(tiny.left_out.iter().any(|l| l.contains("coordinates")), "{:?}", tiny.left_out);
    assert!(tiny.html.len() <= smallest, "{} > {smallest}", tiny.html.len());
    assert!(tiny.html.len() < small.html.len());
    assert!(e.contains(&format!("is {:.1} kB", smallest as f64 / 1e3)), "{e}");
    let none = eval.html_report(&lows, Some(&labels), &[], &ReportOptions::new().all_pairs_max_n(100)).unwrap();
    assert!(none.left_out.iter().any(|l| l.contains("all-pairs views")), "{:?}", none.left_out);
    let e = eval.html_report(&lows, None, &[], &ReportOptions::new().k(1797)).unwrap_err().to_string();
    assert!(e.contains("1 <= k < n"), "{e}");
}

/// A constant projection has no Spearman's ρ: the report leaves the caption's srho out of that
/// projection only and says so (stress, defined, stays; another projection keeps its srho);
/// srho asked for by name still fails as a typed error.
#[test]
fn a_caption_measure_undefined_on_a_constant_projection_is_left_out_not_fatal() {
    let high = uniform("high", 40, 3, 7);
    let flat = Points::from_vec("flat", 40, 2, vec![1.5; 80]).unwrap();
    let spread = Points::from_vec("spread", 40, 2, high.as_slice()[..80].to_vec()).unwrap();
    let eval = Evaluator::builder(high).build();
    let r = eval.html_report(&[&spread, &flat], None, &[], &ReportOptions::new().k(5)).unwrap();
    let why = r.left_out.iter().find(|l| l.starts_with("srho")).unwrap_or_else(|| panic!("{:?}", r.left_out));
    assert!(why.contains("on flat") && why.contains("constant"), "{why}");
    assert_eq!(r.left_out.len(), 1, "{:?}", r.left_out);
    let asked = eval.html_report(&[&flat], None, &specs(&["srho"]), &ReportOptions::new().k(5));
    assert!(matches!(asked, Err(faithful::Error::Undefined { .. })), "{asked:?}");

    // The views behind it: srho scored on spread (its value is the one srho as a spec gives),
    // left out of flat's scores with the reason; stress on both.
    let request = ViewsRequest::new().k(5).optional(specs(&["stress", "srho"]));
    let v = eval.views(&[&spread, &flat], None, &specs(&["tnc:k=5"]), &request).unwrap();
    let ids = |p: usize| v.evaluation.projections[p].scores.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(0), ["tnc", "stress", "srho"]);
    assert_eq!(ids(1), ["tnc", "stress"]);
    assert!(v.projections[0].left_out.is_empty());
    let left = &v.projections[1].left_out;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, "srho");
    assert!(
        left[0].to_string().starts_with("srho: undefined because") && left[0].reason.contains("constant"),
        "{}",
        left[0]
    );
    let alone = eval.measure(&spread, None, &specs(&["srho"])).unwrap();
    assert_eq!(v.evaluation.projections[0].scores[2].values, alone[0].values);
    let json = serde_json::to_value(&v).unwrap();
    assert!(json["projections"][0].get("left_out").is_none());
    assert_eq!(json["projections"][1]["left_out"][0]["id"], "srho");
    // An optional spec's other errors fail the call as a spec's would (nh needs labels).
    let err = eval.views(&[&spread], None, &[], &ViewsRequest::new().k(5).optional(specs(&["nh"]))).unwrap_err();
    assert!(matches!(err, faithful::Error::LabelsRequired { .. }), "{err:?}");
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_faithful")).args(args).output().expect("faithful runs")
}

/// `faithful views --json`'s lists are `faithful knn --json`'s, and its locals `measure --local`'s.
#[test]
fn cli_views_json_agrees_with_knn_and_measure() {
    let dir = tempfile::tempdir().unwrap();
    let (high, low) = cases().remove(0);
    let write = |name: &str, p: &Points| {
        let path = dir.path().join(name);
        let mut f = std::fs::File::create(&path).unwrap();
        faithful::write_npy(&mut f, p.n(), p.dim(), p.as_slice().iter().copied()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let (h, l) = (write("high.npy", &high), write("low.npy", &low));
    let out = cli(&["views", "--high", &h, "--low", &l, "--k", "6", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let knn = |path: &str| -> serde_json::Value {
        let o = cli(&["knn", "--data", path, "--k", "6", "--json"]);
        assert!(o.status.success());
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let flat = |rows: &serde_json::Value| -> Vec<u64> {
        rows.as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()))
            .collect()
    };
    let ints =
        |a: &serde_json::Value| -> Vec<u64> { a.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect() };
    assert_eq!(ints(&v["knn_high"]), flat(&knn(&h)["indices"]));
    let views = &v["projections"][0]["views"];
    assert_eq!(ints(&views["neighbourhoods"]["knn_low"]), flat(&knn(&l)["indices"]));
    let m = cli(&["measure", "--high", &h, "--low", &l, "--spec", "tnc:k=6", "--local", "--json"]);
    let m: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(v["projections"][0]["scores"], m["projections"][0]["scores"]);
    let n = high.n() as u64;
    assert_eq!(views["shepard"]["pairs"].as_u64(), Some(n * (n - 1) / 2));
    assert_eq!(ints(&views["coranking"]["counts"]).iter().sum::<u64>(), n * (n - 1));
}

#[test]
fn cli_report_writes_atomically_and_refuses_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    let o = out.to_string_lossy().into_owned();
    let run = cli(&["report", "--out", &o, "--k", "5"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("data-status=\"loading\""));
    let note = String::from_utf8_lossy(&run.stderr);
    assert!(note.starts_with("faithful: wrote ") && note.contains(&format!("{} bytes", html.len())), "{note}");
    // Nothing but the report is left in the folder (the temporary file was renamed).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let missing = dir.path().join("no/such/folder/r.html").to_string_lossy().into_owned();
    let args: Vec<OsString> = ["report", "--out", &missing].iter().map(OsString::from).collect();
    common::cli::expect_error(&args, &["cannot write", "r.html"]);
    let args: Vec<OsString> = ["report", "--out", &o, "--k", "1797"].iter().map(OsString::from).collect();
    common::cli::expect_error(&args, &["k", "1 <= k < n"]);
    let args: Vec<OsString> = ["report", "--out", &o, "--shepard-bins", "0"].iter().map(OsString::from).collect();
    common::cli::expect_error(&args, &["--shepard-bins"]);
    // The earlier good file is still whole.
    assert_eq!(std::fs::read_to_string(&out).unwrap(), html);
}
