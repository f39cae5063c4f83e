//! The command line's original space as users hold it: `--metric`, `--high-distances`,
//! `--high-knn` and `--high-knn-indices/--high-knn-distances` on `measure`, `views`, `report`,
//! `knn` and `shard`; the run report says what served; every bad input is one line, exit 2, in
//! bounded time and memory.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::cli::{Limits, PROMPT, check_error, expect_error, run};
use common::files::{write, write_npy};
use ndarray::Array2;
use serde_json::Value;

const ONE_GIB: u64 = 1 << 30;

fn fixture(parts: &[&str]) -> PathBuf {
    parts.iter().fold(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metrics"), |p, s| p.join(s))
}

fn args(parts: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    parts.iter().map(|p| p.as_ref().to_os_string()).collect()
}

/// Runs `faithful` and parses its JSON.
fn json(a: &[OsString]) -> Value {
    let r = run(a, Limits::default(), Stdio::piped());
    let stderr = String::from_utf8_lossy(&r.out.stderr);
    assert!(r.out.status.success(), "{a:?} failed: {stderr}");
    serde_json::from_slice(&r.out.stdout).unwrap()
}

fn values(v: &Value, spec: usize) -> &Value {
    &v["projections"][0]["scores"][spec]["values"]
}

/// Bounded memory and time for a refusal: one line naming every phrase.
#[track_caller]
fn refused(a: &[OsString], phrases: &[&str]) -> String {
    let r = run(a, Limits { address_space: Some(ONE_GIB), ..Limits::default() }, Stdio::piped());
    let line = check_error(&r, a, phrases);
    assert!(r.elapsed < PROMPT, "{a:?} took {:?}", r.elapsed);
    line
}

#[test]
fn metric_runs_report_both_spaces_and_equal_the_library() {
    let (hd, ld) = (fixture(&["generic", "hd.npy"]), fixture(&["generic", "ld.npy"]));
    for metric in ["cosine", "correlation", "cityblock", "chebyshev", "sqeuclidean"] {
        let v = json(&args(&[
            &"measure",
            &"--high",
            &hd,
            &"--low",
            &ld,
            &"--metric",
            &metric,
            &"--spec",
            &"tnc:k=5",
            &"--json",
        ]));
        assert_eq!(v["run"]["spaces"]["high"]["metric"], metric);
        assert_eq!(v["run"]["spaces"]["high"]["input"], "coordinates");
        assert_eq!(v["run"]["spaces"]["low"]["metric"], "euclidean");
        let high = faithful::read_points(&hd).unwrap().with_metric(metric.parse().unwrap()).unwrap();
        let low = faithful::read_points(&ld).unwrap();
        let want = faithful::Evaluator::builder(high).build().measure(&low, None, &["tnc:k=5".parse().unwrap()]);
        let t = want.unwrap()[0].value("trustworthiness").unwrap();
        assert_eq!(values(&v, 0)["trustworthiness"].as_f64().unwrap().to_bits(), t.to_bits(), "{metric}");
    }
    // Minkowski's p, and p = 1 served by cityblock's kernel: the same bits.
    let mk = |p: &str| {
        json(&args(&[
            &"measure",
            &"--high",
            &hd,
            &"--low",
            &ld,
            &"--metric",
            &"minkowski",
            &"--minkowski-p",
            &p,
            &"--spec",
            &"tnc:k=5",
            &"--json",
        ]))
    };
    let city = json(&args(&[
        &"measure",
        &"--high",
        &hd,
        &"--low",
        &ld,
        &"--metric",
        &"cityblock",
        &"--spec",
        &"tnc:k=5",
        &"--json",
    ]));
    assert_eq!(values(&mk("1"), 0), values(&city, 0));
    assert_eq!(mk("3")["run"]["spaces"]["high"]["metric"], "minkowski:p=3");
}

#[test]
fn knn_under_a_metric_is_scipys_order() {
    let hd = fixture(&["ties", "hd.npy"]);
    let v = json(&args(&[&"knn", &"--data", &hd, &"--k", &"71", &"--metric", &"cosine", &"--json"]));
    let order: Array2<i32> = ndarray_npy::read_npy(fixture(&["ties", "cosine", "order.npy"])).unwrap();
    for i in 0..72 {
        let got: Vec<i64> = v["indices"][i].as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
        let want: Vec<i64> = order.row(i).iter().map(|&j| j as i64).collect();
        assert_eq!(got, want, "row {i}");
    }
}

#[test]
fn a_distance_matrix_gives_the_metrics_scores() {
    let dir = tempfile::tempdir().unwrap();
    let (hd, ld) = (fixture(&["generic", "hd.npy"]), fixture(&["generic", "ld.npy"]));
    let specs = ["tnc:k=5", "mrre:k=5", "stress", "coranking:k_max=20"];
    let with = |high: &[&dyn AsRef<std::ffi::OsStr>]| {
        let mut a = args(&[&"measure"]);
        a.extend(args(high));
        a.extend(args(&[&"--low", &ld, &"--json"]));
        for s in specs {
            a.extend(args(&[&"--spec", &s]));
        }
        json(&a)
    };
    // scipy's cosine matrix with its diagonal set to 0 (cdist rounds some above 0); f32 too.
    let mut d: Array2<f64> = ndarray_npy::read_npy(fixture(&["generic", "cosine", "dist.npy"])).unwrap();
    d.diag_mut().fill(0.0);
    let path = write_npy(dir.path(), "cos.npy", &d);
    let by_matrix = with(&[&"--high-distances", &path]);
    let by_metric = with(&[&"--high", &hd, &"--metric", &"cosine"]);
    assert_eq!(by_matrix["projections"], by_metric["projections"]);
    assert_eq!(by_matrix["run"]["spaces"]["high"]["input"], "distance matrix");
    assert_eq!(by_matrix["run"]["spaces"]["high"]["metric"], "precomputed");
    // Fortran order reads the same matrix (it is symmetric).
    let fortran = write_npy(dir.path(), "cos_f.npy", &d.t().as_standard_layout().reversed_axes());
    assert_eq!(with(&[&"--high-distances", &fortran])["projections"], by_metric["projections"]);
    // knn on the matrix.
    let v = json(&args(&[&"knn", &"--high-distances", &path, &"--k", &"4", &"--json"]));
    let w = json(&args(&[&"knn", &"--data", &hd, &"--metric", &"cosine", &"--k", &"4", &"--json"]));
    assert_eq!(v["indices"], w["indices"]);
    assert_eq!(v["distances"], w["distances"]);
}

#[test]
fn bad_distance_matrices_are_one_line_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let ld = fixture(&["generic", "ld.npy"]);
    let base: Array2<f64> = ndarray_npy::read_npy(fixture(&["generic", "euclidean", "dist.npy"])).unwrap();
    let measure = |p: &Path| args(&[&"measure", &"--high-distances", &p, &"--low", &ld]);
    let case = |name: &str, f: &dyn Fn(&mut Array2<f64>)| {
        let mut d = base.clone();
        f(&mut d);
        write_npy(dir.path(), name, &d)
    };
    let p = case("asym.npy", &|d| d[[3, 9]] = 0.5);
    refused(&measure(&p), &["asym.npy: not a distance matrix", "entry [3, 9] = 0.5 differs from entry [9, 3]"]);
    let p = case("neg.npy", &|d| {
        d[[4, 2]] = -1.0;
        d[[2, 4]] = -1.0
    });
    refused(&measure(&p), &["neg.npy", "entry [2, 4] = -1 is negative"]);
    // Faithful's bound on coordinates: 1e300 squared is not finite (stress and sammon scored NaN
    // and infinity on it, blamed on the projection).
    let p = case("huge.npy", &|d| {
        d[[5, 7]] = 1e300;
        d[[7, 5]] = 1e300
    });
    refused(&measure(&p), &["huge.npy: not a distance matrix", "entry [5, 7] = 1e300 is too large"]);
    let p = case("nan.npy", &|d| d[[1, 1]] = f64::NAN);
    refused(&measure(&p), &["entry [1, 1] is NaN"]);
    let p = case("diag.npy", &|d| d[[6, 6]] = 1e-16);
    refused(&measure(&p), &["diagonal entry [6, 6] = 0.0000000000000001 is not 0"]);
    let p = write_npy(dir.path(), "rect.npy", &Array2::<f64>::zeros((72, 71)));
    refused(&measure(&p), &["rect.npy", "shape (72, 71) is not square"]);
    let p = write_npy(dir.path(), "small.npy", &Array2::<f64>::zeros((71, 71)));
    refused(&measure(&p), &["ld.npy: has 72 rows but the original space has 71"]);
    let p = write_npy(dir.path(), "vec.npy", &ndarray::Array1::<f64>::zeros(9));
    refused(&measure(&p), &["vec.npy", "expected a 2-D array, got 1-D"]);
    // A 100 GB claimed shape (115 000² float64) in a small file: refused before any allocation.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (115000, 115000), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let padded = format!("{header}{}\n", " ".repeat(63 - (10 + header.len()) % 64));
    bytes.extend((padded.len() as u16).to_le_bytes());
    bytes.extend(padded.as_bytes());
    bytes.extend([0u8; 4096]);
    let p = write(dir.path(), "huge.npy", bytes);
    refused(&measure(&p), &["huge.npy", "truncated", "(115000, 115000)"]);
    // A metric does not apply to given distances.
    let p = case("ok.npy", &|_| {});
    let mut a = measure(&p);
    a.extend(args(&[&"--metric", &"cosine"]));
    let r = run(&a, Limits::default(), Stdio::piped());
    assert_eq!(r.out.status.code(), Some(2));
}

#[test]
fn zero_vectors_and_bad_metrics_are_refused_by_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut hd: Array2<f64> = ndarray_npy::read_npy(fixture(&["generic", "hd.npy"])).unwrap();
    let ld = fixture(&["generic", "ld.npy"]);
    hd.row_mut(17).fill(0.0);
    let zero = write_npy(dir.path(), "zero.npy", &hd);
    let measure = |m: &str| args(&[&"measure", &"--high", &zero, &"--low", &ld, &"--metric", &m]);
    refused(&measure("cosine"), &["zero.npy: row 17: is a zero vector", "cosine distance is undefined"]);
    // Constant rows under correlation (the zero row is constant too).
    refused(&measure("correlation"), &["row 17: is constant"]);
    // Euclidean takes it.
    assert!(run(&measure("euclidean"), Limits::default(), Stdio::piped()).out.status.success());
    refused(&measure("hamming"), &["invalid metric 'hamming': unknown metric"]);
    let mut a = measure("minkowski");
    a.extend(args(&[&"--minkowski-p", &"0.5"]));
    refused(&a, &["p must be at least 1"]);
    // A negative p reaches the range check (not "unknown option"); 1e400 is not read as inf.
    let mut a = measure("minkowski");
    a.extend(args(&[&"--minkowski-p", &"-1"]));
    refused(&a, &["p must be at least 1"]);
    let mut a = measure("minkowski");
    a.extend(args(&[&"--minkowski-p", &"1e400"]));
    refused(&a, &["'1e400' is too large for a 64-bit float"]);
    let mut a = measure("cosine");
    a.extend(args(&[&"--minkowski-p", &"3"]));
    refused(&a, &["--minkowski-p 3 needs --metric minkowski"]);
    // Coordinate measures need Euclidean coordinates.
    let mut a = args(&[&"measure", &"--high", &fixture(&["generic", "hd.npy"]), &"--low", &ld, &"--metric", &"cosine"]);
    a.extend(args(&[&"--spec", &"proc:k=5"]));
    refused(&a, &["proc: needs the original coordinates under the Euclidean metric"]);
    // TriMap's global score fits X linearly: coordinates too.
    let mut a = args(&[&"measure", &"--high", &fixture(&["generic", "hd.npy"]), &"--low", &ld, &"--metric", &"cosine"]);
    a.extend(args(&[&"--spec", &"global_score"]));
    refused(&a, &["global_score: needs the original coordinates under the Euclidean metric"]);
}

#[test]
fn a_knn_graph_serves_the_neighbour_measures_and_refuses_the_others_by_name() {
    let (hd, ld) = (fixture(&["generic", "hd.npy"]), fixture(&["generic", "ld.npy"]));
    let graph = fixture(&["graphs", "knn10.npz"]);
    let specs = ["continuity:k=10", "mrre_missing:k=7", "lcmc:k=10", "nd:k=10"];
    let with = |high: &[&dyn AsRef<std::ffi::OsStr>], specs: &[&str]| {
        let mut a = args(&[&"measure"]);
        a.extend(args(high));
        a.extend(args(&[&"--low", &ld, &"--json"]));
        for s in specs {
            a.extend(args(&[&"--spec", s]));
        }
        json(&a)
    };
    let g = with(&[&"--high-knn", &graph], &specs);
    let full = with(&[&"--high", &hd], &specs);
    assert_eq!(g["projections"], full["projections"]);
    let report = &g["run"]["spaces"]["high"];
    assert_eq!(report["input"], "kNN graph");
    assert_eq!(report["graph"]["k"], 10);
    assert_eq!(report["graph"]["ties_verified"], false);
    // tnc's continuity from the coordinates is the graph's.
    let tnc = with(&[&"--high", &hd], &["tnc:k=10"]);
    assert_eq!(values(&tnc, 0)["continuity"], values(&g, 0)["continuity"]);
    // A ragged graph: cut to the shortest row, reordered rows counted.
    let r = with(&[&"--high-knn", &fixture(&["graphs", "ragged.npz"])], &["continuity:k=10"]);
    let rep = &r["run"]["spaces"]["high"]["graph"];
    assert_eq!((rep["k"].as_u64(), rep["k_max"].as_u64()), (Some(10), Some(12)));
    assert_eq!((rep["rows_truncated"].as_u64(), rep["rows_reordered"].as_u64()), (Some(1), Some(1)));
    assert_eq!(values(&r, 0), values(&g, 0));
    // The index/distance pair of `faithful knn`.
    let dir = tempfile::tempdir().unwrap();
    let (ip, dp) = (dir.path().join("i.npy"), dir.path().join("d.npy"));
    let a = args(&[&"knn", &"--data", &hd, &"--k", &"10", &"--out", &ip, &"--distances", &dp]);
    assert!(run(&a, Limits::default(), Stdio::piped()).out.status.success());
    let pair = with(&[&"--high-knn-indices", &ip, &"--high-knn-distances", &dp], &specs);
    assert_eq!(pair["projections"], full["projections"]);
    // Refusals name what is needed.
    let refuse = |spec: &str, phrases: &[&str]| {
        refused(
            &args(&[&"measure", &"--high-knn", &graph, &"--low", &ld, &"--spec", &spec]),
            &[phrases, &["the original space was given as a kNN graph (10 neighbours per point)"]].concat(),
        )
    };
    refuse("tnc:k=5", &["tnc: needs the original ranks of arbitrary pairs", "--high-distances"]);
    refuse("stress", &["stress: needs every original distance"]);
    refuse("continuity:k=11", &["11 original neighbours per point"]);
    refuse("coranking", &["coranking: needs 70 original neighbours per point (k_max=70)"]);
    let cr = with(&[&"--high-knn", &graph], &["coranking:k_max=10"]);
    let full = with(&[&"--high", &hd], &["coranking:k_max=10"]);
    assert_eq!(values(&cr, 0), values(&full, 0));
    assert_eq!(
        cr["projections"][0]["scores"][0]["curves"]["qnx"],
        full["projections"][0]["scores"][0]["curves"]["qnx"]
    );
    refuse("proc:k=5", &["proc: needs the original coordinates"]);
    // Issue 26's neighbour measures run from the graph, the full run's bits; a measure that
    // reads arbitrary original pairs itself is refused by name, never run on what is not there.
    for spec in ["knn_overlap:k=5", "density_preservation:k=5"] {
        let g = with(&[&"--high-knn", &graph], &[spec]);
        let full = with(&[&"--high", &hd], &[spec]);
        assert_eq!(values(&g, 0), values(&full, 0), "{spec}");
    }
    refuse("triplet_accuracy", &["triplet_accuracy: needs every original distance"]);
}

#[test]
fn bad_graphs_are_one_line_refusals() {
    let ld = fixture(&["generic", "ld.npy"]);
    let measure = |g: &Path| args(&[&"measure", &"--high-knn", &g, &"--low", &ld, &"--spec", &"continuity:k=3"]);
    refused(
        &measure(&fixture(&["graphs", "self_loop.npz"])),
        &["self_loop.npz: not a kNN graph", "row 5: a self loop"],
    );
    refused(&measure(&fixture(&["graphs", "out_of_range.npz"])), &["row 4: index 75 is out of range 0..72"]);
    refused(&measure(&fixture(&["graphs", "csc.npz"])), &["holds a 'csc' matrix, not CSR"]);
    refused(&measure(&fixture(&["generic", "hd.npy"])), &["hd.npy", "not a .npz (zip) archive"]);
    let dir = tempfile::tempdir().unwrap();
    let (ip, dp) = (dir.path().join("i.npy"), dir.path().join("d.npy"));
    let idx = Array2::from_shape_fn((72, 3), |(i, c)| ((i + c + 1) % 72) as i64);
    let mut dist = Array2::from_elem((72, 3), 1.0f64);
    ndarray_npy::write_npy(&ip, &idx).unwrap();
    ndarray_npy::write_npy(&dp, &dist).unwrap();
    let pair = args(&[&"measure", &"--high-knn-indices", &ip, &"--high-knn-distances", &dp, &"--low", &ld]);
    let mut ok = pair.clone();
    ok.extend(args(&[&"--spec", &"lcmc:k=3"]));
    assert!(run(&ok, Limits::default(), Stdio::piped()).out.status.success());
    dist[[9, 1]] = -2.0;
    ndarray_npy::write_npy(&dp, &dist).unwrap();
    // A bad distance names the distances file (it named the indices).
    refused(&pair, &["d.npy: not a kNN graph: row 9, column 1: the distance is -2"]);
    dist[[9, 1]] = f64::NAN;
    ndarray_npy::write_npy(&dp, &dist).unwrap();
    refused(&pair, &["d.npy: not a kNN graph: row 9, column 1: the distance is NaN"]);
    dist[[9, 1]] = 1.0;
    ndarray_npy::write_npy(&dp, &Array2::from_elem((72, 4), 1.0f64)).unwrap();
    refused(&pair, &["the indices are 72×3 but the distances"]);
    let missing = args(&[&"measure", &"--high-knn-indices", &ip, &"--low", &ld]);
    let r = run(&missing, Limits::default(), Stdio::piped());
    assert_eq!(r.out.status.code(), Some(2), "--high-knn-indices without its distances");
    expect_error(&args(&[&"measure", &"--high-knn", &"/dev/zero", &"--low", &ld]), &["not a regular file"]);
}

/// A distance matrix that shrinks while a run reads its rows fails the run (never scores of a
/// partly read file).
#[test]
fn a_matrix_file_that_changes_during_a_run_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let d: Array2<f64> = ndarray_npy::read_npy(fixture(&["generic", "euclidean", "dist.npy"])).unwrap();
    let path = write_npy(dir.path(), "d.npy", &d);
    let high = faithful::read_distances(&path).unwrap();
    let low = faithful::read_points(fixture(&["generic", "ld.npy"])).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(1000).unwrap();
    let err =
        faithful::Evaluator::builder(high).build().measure(&low, None, &["tnc:k=5".parse().unwrap()]).unwrap_err();
    assert!(err.to_string().contains("the file changed while being read"), "{err}");
}

/// Row shards under a metric, and of a distance matrix, fold to the full run's local values.
#[test]
fn shards_take_the_metric_and_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden/blobs_500");
    let (hd, ld) = (golden.join("hd.npy"), golden.join("ld.npy"));
    let points = faithful::read_points(&hd).unwrap().with_metric(faithful::Metric::Correlation).unwrap();
    let n = points.n();
    let mut d = Array2::<f64>::zeros((n, n));
    for i in 0..n {
        let mut row = vec![0.0; n];
        faithful::reference::distance_row(&points, i, &mut row);
        row[i] = 0.0;
        d.row_mut(i).assign(&ndarray::ArrayView1::from(&row));
    }
    let matrix = write_npy(dir.path(), "corr.npy", &d);
    let full = json(&args(&[
        &"measure",
        &"--high",
        &hd,
        &"--low",
        &ld,
        &"--metric",
        &"correlation",
        &"--spec",
        &"tnc:k=5",
        &"--local",
        &"--json",
    ]));
    for high in [args(&[&"--high", &hd, &"--metric", &"correlation"]), args(&[&"--high-distances", &matrix])] {
        let mut parts = Vec::new();
        for (t, rows) in ["0:120", "120:248", "248:368", "368:432", "432:500"].iter().enumerate() {
            let out = dir.path().join(format!("p{t}.fpart"));
            let mut a = args(&[&"shard"]);
            a.extend(high.clone());
            a.extend(args(&[&"--low", &ld, &"--rows", rows, &"--spec", &"tnc:k=5", &"--out", &out]));
            let r = run(&a, Limits::default(), Stdio::piped());
            assert!(r.out.status.success(), "{}", String::from_utf8_lossy(&r.out.stderr));
            parts.push(out);
        }
        let mut a = args(&[&"fold", &"--json"]);
        a.extend(parts.iter().map(|p| p.as_os_str().to_os_string()));
        let folded = json(&a);
        assert_eq!(folded["projections"][0]["scores"], full["projections"][0]["scores"]);
        let want = if high[0] == "--high" { "correlation" } else { "precomputed" };
        assert_eq!(folded["run"]["spaces"]["high"]["metric"], want);
    }
}

/// `views` and `report` read the original space as `measure` does (one inputs path): under a
/// metric (the bundled example too), as a distance matrix; their values are the library's. A
/// kNN graph cannot serve their all-pairs views: one line, exit 2.
#[test]
fn views_and_report_take_the_metric_and_the_matrix_and_refuse_a_graph() {
    use faithful::{BackendChoice, Evaluator, Metric, Options, ReportOptions, ViewsRequest};
    let cpu = || {
        let mut o = Options::default();
        o.backend = BackendChoice::Cpu;
        o
    };
    // The bundled example under cosine, without its all-pairs parts (fast in debug builds).
    let v = json(&args(&[
        &"views",
        &"--json",
        &"--metric",
        &"cosine",
        &"--k",
        &"5",
        &"--shepard-bins",
        &"0",
        &"--coranking-per-octave",
        &"0",
        &"--backend",
        &"cpu",
    ]));
    assert_eq!(v["run"]["spaces"]["high"]["metric"], "cosine");
    let ex = faithful::example_digits();
    let eval = Evaluator::new(ex.high.with_metric(Metric::Cosine).unwrap(), cpu());
    let lows: Vec<&faithful::Points> = ex.projections.iter().collect();
    let request = ViewsRequest::new().k(5).shepard_bins(0).coranking_per_octave(0);
    let lib = eval.views(&lows, Some(&ex.labels), &["tnc:k=5".parse().unwrap()], &request).unwrap();
    let lib = serde_json::to_value(&lib).unwrap();
    assert_eq!(v["knn_high"], lib["knn_high"]);
    assert_eq!(v["projections"], lib["projections"]);
    // A report from scipy's cosine matrix: the library's bytes.
    let dir = tempfile::tempdir().unwrap();
    let ld = fixture(&["generic", "ld.npy"]);
    let mut d: Array2<f64> = ndarray_npy::read_npy(fixture(&["generic", "cosine", "dist.npy"])).unwrap();
    d.diag_mut().fill(0.0);
    let matrix = write_npy(dir.path(), "cos.npy", &d);
    let out = dir.path().join("r.html");
    let a = args(&[
        &"report",
        &"--high-distances",
        &matrix,
        &"--low",
        &ld,
        &"--k",
        &"5",
        &"--backend",
        &"cpu",
        &"--out",
        &out,
    ]);
    let r = run(&a, Limits::default(), Stdio::piped());
    assert!(r.out.status.success(), "{}", String::from_utf8_lossy(&r.out.stderr));
    let eval = Evaluator::new(faithful::read_distances(&matrix).unwrap(), cpu());
    let low = faithful::read_points(&ld).unwrap();
    let lib = eval.html_report(&[&low], None, &[], &ReportOptions::new().k(5)).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), lib.html);
    // A kNN graph: refused by the views, before any work.
    let graph = fixture(&["graphs", "knn10.npz"]);
    let given = "the original space was given as a kNN graph (10 neighbours per point)";
    refused(&args(&[&"views", &"--high-knn", &graph, &"--low", &ld]), &["views: needs every original distance", given]);
    refused(&args(&[&"report", &"--high-knn", &graph, &"--low", &ld, &"--out", &out]), &["views:", given]);
}
