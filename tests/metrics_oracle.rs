//! The original space under every metric against scipy's dense oracle
//! (`tests/fixtures/metrics/generate_metrics.py`: `cdist(X, X, metric)` and its stable argsort,
//! on generic and tie-heavy data): every distance bit for bit, whole neighbour lists and ranks,
//! T&C, MRRE, LCMC and the co-ranking curves within 1e-12; and the same bits when the original
//! space is given as scipy's distance matrix or as the kNN graph its order makes.

use std::path::PathBuf;

use faithful::reference::distance_row;
use faithful::resources::{Needs, row_pass};
use faithful::{DistanceMatrix, Evaluator, KnnGraph, Metric, Points, Score, Spec, read_points};
use ndarray::Array2;

const METRICS: &[(&str, &str)] = &[
    ("euclidean", "euclidean"),
    ("sqeuclidean", "sqeuclidean"),
    ("cosine", "cosine"),
    ("correlation", "correlation"),
    ("cityblock", "cityblock"),
    ("chebyshev", "chebyshev"),
    ("minkowski_p1", "minkowski:p=1"),
    ("minkowski_p3", "minkowski:p=3"),
    ("minkowski_p1.5", "minkowski:p=1.5"),
];
const DATASETS: &[&str] = &["generic", "ties", "wide"];
const KS: &[usize] = &[1, 5, 17];

fn dir(parts: &[&str]) -> PathBuf {
    parts.iter().fold(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/metrics"), |p, s| p.join(s))
}

struct Case {
    tag: String,
    high: Points,
    low: Points,
    /// scipy's distances, row-major.
    dist: Vec<f64>,
    /// The stable argsort, self excluded: n × (n − 1).
    order: Array2<i32>,
    scores: serde_json::Value,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for ds in DATASETS {
        let hd = read_points(dir(&[ds, "hd.npy"])).unwrap();
        let low = read_points(dir(&[ds, "ld.npy"])).unwrap();
        for (tag, metric) in METRICS {
            let m: Metric = metric.parse().unwrap();
            let dist = read_points(dir(&[ds, tag, "dist.npy"])).unwrap().as_slice().to_vec();
            let order: Array2<i32> = ndarray_npy::read_npy(dir(&[ds, tag, "order.npy"])).unwrap();
            let text = std::fs::read_to_string(dir(&[ds, tag, "scores.json"])).unwrap();
            out.push(Case {
                tag: format!("{ds}/{tag}"),
                high: hd.clone().with_metric(m).unwrap(),
                low: low.clone(),
                dist,
                order,
                scores: serde_json::from_str(&text).unwrap(),
            });
        }
    }
    out
}

/// `R[i][j]`: 1 + j's position in i's order.
fn ranks(order: &Array2<i32>) -> Vec<Vec<u32>> {
    let n = order.nrows();
    let mut r = vec![vec![0u32; n]; n];
    for i in 0..n {
        for (p, &j) in order.row(i).iter().enumerate() {
            r[i][j as usize] = p as u32 + 1;
        }
    }
    r
}

fn spec(s: &str) -> Spec {
    s.parse().unwrap()
}

fn close(tag: &str, key: &str, got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-12, "{tag}: {key} = {got}, scipy's oracle {want}");
}

#[test]
fn every_distance_is_scipys_cdist_bit_for_bit() {
    for c in cases() {
        let n = c.high.n();
        let mut row = vec![0.0; n];
        for i in 0..n {
            distance_row(&c.high, i, &mut row);
            for j in 0..n {
                let (got, want) = (row[j], c.dist[i * n + j]);
                assert_eq!(got.to_bits(), want.to_bits(), "{}: d({i}, {j}) = {got:e}, scipy {want:e}", c.tag);
                let pair = faithful::reference::distance_pair(&c.high, i, j);
                assert_eq!(pair.to_bits(), want.to_bits(), "{}: distance_pair({i}, {j})", c.tag);
            }
        }
    }
}

#[test]
fn neighbour_lists_and_ranks_are_the_stable_argsorts() {
    for c in cases() {
        let n = c.high.n();
        let want_ranks = ranks(&c.order);
        // The whole order: k = n − 1.
        let (nb, run) = Evaluator::builder(c.high.clone()).build().knn(n - 1).unwrap();
        assert_eq!(run.spaces.high.metric, c.high.metric());
        for i in 0..n {
            let want: Vec<u32> = c.order.row(i).iter().map(|&j| j as u32).collect();
            assert_eq!(nb.row(i, n - 1), &want[..], "{}: neighbour order of row {i}", c.tag);
        }
        // Cross ranks at every k of the scores, in two block plans.
        for &k in KS {
            for block in [1, 16] {
                let out = row_pass(&c.high, None, &[&c.low], Needs::cross_with_dists(k), block);
                let cr = out.lows[0].cross.as_ref().unwrap();
                let ky = out.lows[0].knn.as_ref().unwrap();
                for i in 0..n {
                    let want: Vec<u32> = ky.row(i, k).iter().map(|&j| want_ranks[i][j as usize]).collect();
                    assert_eq!(cr.rank_high_of_low(i, k), &want[..], "{} k={k}: ranks in X, row {i}", c.tag);
                }
            }
        }
    }
}

fn run_scores(high: Points, low: &Points, specs: &[Spec]) -> Vec<Score> {
    Evaluator::builder(high).build().measure(low, None, specs).unwrap()
}

#[test]
fn tnc_mrre_lcmc_and_coranking_match_the_oracle() {
    for c in cases() {
        let n = c.high.n();
        for &k in KS {
            let specs = [spec(&format!("tnc:k={k}")), spec(&format!("mrre:k={k}")), spec(&format!("lcmc:k={k}"))];
            let got = run_scores(c.high.clone(), &c.low, &specs);
            let want = &c.scores[format!("k={k}")];
            let tag = format!("{} k={k}", c.tag);
            for (key, score) in [
                ("trustworthiness", &got[0]),
                ("continuity", &got[0]),
                ("mrre_false", &got[1]),
                ("mrre_missing", &got[1]),
                ("lcmc", &got[2]),
            ] {
                close(&tag, key, score.value(key).unwrap(), want[key].as_f64().unwrap());
            }
        }
        let got = run_scores(c.high.clone(), &c.low, &[spec("coranking")]);
        for curve in ["qnx", "rnx"] {
            let want = c.scores[curve].as_array().unwrap();
            let have = got[0].curve(curve).unwrap();
            assert_eq!(have.len(), n - 2);
            for (kk, (g, w)) in have.iter().zip(want).enumerate() {
                close(&c.tag, &format!("{curve}[K={}]", kk + 1), *g, w.as_f64().unwrap());
            }
        }
    }
}

/// scipy's matrix given as the original space (its diagonal set to 0: cdist rounds cosine's
/// self-distances above 0), and the kNN graph its argsort makes, give the metric's bits.
#[test]
fn the_distance_matrix_and_the_graph_give_the_metrics_bits() {
    let specs: Vec<Spec> =
        ["tnc:k=5", "mrre:k=17", "lcmc:k=5", "coranking:k_max=30", "stress", "srho"].iter().map(|s| spec(s)).collect();
    for c in cases() {
        let n = c.high.n();
        let mut d = c.dist.clone();
        for i in 0..n {
            d[i * n + i] = 0.0;
        }
        let matrix = Points::from_distances("d", DistanceMatrix::from_vec("d", n, d).unwrap());
        let want = run_scores(c.high.clone(), &c.low, &specs);
        let got = run_scores(matrix, &c.low, &specs);
        assert_eq!(got, want, "{}: scores from the distance matrix", c.tag);

        let k = 17;
        let idx: Vec<i64> =
            (0..n).flat_map(|i| c.order.row(i).iter().take(k).map(|&j| j as i64).collect::<Vec<_>>()).collect();
        let dist: Vec<f64> = (0..n)
            .flat_map(|i| c.order.row(i).iter().take(k).map(|&j| c.dist[i * n + j as usize]).collect::<Vec<_>>())
            .collect();
        let graph = Points::from_knn_graph("g", KnnGraph::from_arrays("g", n, k, &idx, &dist).unwrap());
        let graph_specs = [spec("continuity:k=17"), spec("mrre_missing:k=5"), spec("lcmc:k=17")];
        let got = run_scores(graph, &c.low, &graph_specs);
        let full = run_scores(c.high.clone(), &c.low, &[spec("tnc:k=17"), spec("mrre:k=5"), spec("lcmc:k=17")]);
        let bits = |s: &Score, key: &str| s.value(key).unwrap().to_bits();
        assert_eq!(bits(&got[0], "continuity"), bits(&full[0], "continuity"), "{}: continuity from the graph", c.tag);
        assert_eq!(bits(&got[1], "mrre_missing"), bits(&full[1], "mrre_missing"), "{}: mrre_missing", c.tag);
        assert_eq!(bits(&got[2], "lcmc"), bits(&full[2], "lcmc"), "{}: lcmc from the graph", c.tag);
        // Co-ranking from the graph: Q_NX, R_NX, LCMC and their values up to the graph's k, the
        // full pass's bits; no rank-based curve.
        let spec_c = [spec("coranking:k_max=17")];
        let graph = Points::from_knn_graph("g", KnnGraph::from_arrays("g", n, k, &idx, &dist).unwrap());
        let g = Evaluator::builder(graph).local(true).build().measure(&c.low, None, &spec_c).unwrap();
        let f = Evaluator::builder(c.high.clone()).local(true).build().measure(&c.low, None, &spec_c).unwrap();
        assert_eq!(g[0].values, f[0].values, "{}: co-ranking values from the graph", c.tag);
        assert_eq!(g[0].local, f[0].local, "{}: local_auc_rnx from the graph", c.tag);
        for curve in ["qnx", "rnx", "lcmc"] {
            assert_eq!(g[0].curve(curve), f[0].curve(curve), "{}: {curve} from the graph", c.tag);
        }
        assert!(g[0].curve("trustworthiness").is_none() && f[0].curve("trustworthiness").is_some());
    }
}
