//! Bad input gets a clear, typed, one-line error: on the command line (stderr, exit code 2,
//! never a panic, naming the file and the problem) and in the library (`faithful::Error`).

mod common;

use std::path::Path;
use std::process::Command;

use common::Rng;
use common::cli::expect_error;
use common::files::{self, case, csv_text, measure_args, raw_npy, write, write_csv, write_npy};
use faithful::{Error, Evaluator, FileProblem, Labels, Options, Points, Spec};
use ndarray::{Array1, Array2};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn random_rows(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    files::random_rows(n, d, seed, 0.0, 1.0)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

// ---------------------------------------------------------------------------------------------
// Non-finite and too-large values
// ---------------------------------------------------------------------------------------------

#[test]
fn csv_nan_names_file_row_and_column() {
    let c = case();
    let high = write(c.path(), "nan.csv", "1,2,3\n4,5,6\n7,nan,9\n1,1,1\n");
    let low = write_csv(c.path(), "l4.csv", &random_rows(4, 2, 3));
    expect_error(&measure_args(&high, &[&low], &[]), &[&s(&high), "non-finite", "NaN", "row 2", "column 1"]);
}

#[test]
fn csv_inf_in_projection_names_file() {
    let c = case();
    let mut rows = random_rows(10, 2, 4);
    rows[7][0] = f64::NEG_INFINITY;
    let low = write(c.path(), "inf.csv", csv_text(&rows));
    assert!(std::fs::read_to_string(&low).unwrap().contains("-inf"));
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "non-finite", "inf", "row 7", "column 0"]);
}

#[test]
fn npy_nan_names_file_row_and_column() {
    let c = case();
    let mut a = Array2::<f64>::zeros((10, 5));
    a.iter_mut().enumerate().for_each(|(i, v)| *v = i as f64);
    a[[3, 4]] = f64::NAN;
    let high = write_npy(c.path(), "nan.npy", &a);
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "non-finite", "NaN", "row 3", "column 4"]);
}

#[test]
fn npy_f32_inf_names_file_row_and_column() {
    let c = case();
    let mut a = Array2::<f32>::zeros((10, 2));
    a.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    a[[9, 1]] = f32::INFINITY;
    let low = write_npy(c.path(), "inf.npy", &a);
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "non-finite", "inf", "row 9", "column 1"]);
}

#[test]
fn csv_huge_value_is_too_large() {
    let c = case();
    let mut rows = random_rows(10, 5, 5);
    rows[2][3] = -1e200;
    let high = write_csv(c.path(), "huge.csv", &rows);
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "too large", "row 2", "column 3"]);
}

// ---------------------------------------------------------------------------------------------
// Shapes and sizes
// ---------------------------------------------------------------------------------------------

#[test]
fn row_count_mismatch_names_projection() {
    let c = case();
    let low = write_csv(c.path(), "short.csv", &random_rows(9, 2, 6));
    expect_error(&measure_args(&c.high, &[&low], &[]), &["short.csv", "9 rows", "original space has 10"]);
}

#[test]
fn row_count_mismatch_in_second_projection() {
    let c = case();
    let low = write_csv(c.path(), "long.csv", &random_rows(11, 2, 6));
    expect_error(&measure_args(&c.high, &[&c.low, &low], &[]), &["long.csv", "11 rows", "original space has 10"]);
}

#[test]
fn empty_file_has_no_points() {
    let c = case();
    let high = write(c.path(), "empty.csv", "");
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "no points"]);
}

#[test]
fn comment_only_file_has_no_points() {
    let c = case();
    let low = write(c.path(), "comments.csv", "# nothing here\n\n");
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "no points"]);
}

#[test]
fn empty_npy_has_no_points() {
    let c = case();
    let high = write_npy(c.path(), "empty.npy", &Array2::<f64>::zeros((0, 5)));
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "no points"]);
}

#[test]
fn npy_without_columns_has_no_features() {
    let c = case();
    let high = write_npy(c.path(), "nocols.npy", &Array2::<f64>::zeros((10, 0)));
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "at least one feature"]);
}

#[test]
fn one_point_is_too_few() {
    let c = case();
    let high = write(c.path(), "one.csv", "1,2,3\n");
    let low = write(c.path(), "one_low.csv", "1,2\n");
    expect_error(&measure_args(&high, &[&low], &[]), &[&s(&high), "at least 2 points", "got 1"]);
}

// ---------------------------------------------------------------------------------------------
// k out of range (n = 10)
// ---------------------------------------------------------------------------------------------

#[test]
fn tnc_k_zero() {
    let c = case();
    expect_error(&c.args(&["--spec", "tnc:k=0"]), &["tnc", "k=0", "out of range", "1 <= k < n/2", "n=10"]);
}

#[test]
fn tnc_k_half_n() {
    let c = case();
    expect_error(&c.args(&["--spec", "tnc:k=5"]), &["tnc", "k=5", "out of range", "k < n/2", "n=10"]);
}

#[test]
fn tnc_k_just_below_half_n_is_fine() {
    let c = case();
    let out = Command::new(env!("CARGO_BIN_EXE_faithful")).args(c.args(&["--spec", "tnc:k=4"])).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn mrre_k_n() {
    let c = case();
    expect_error(&c.args(&["--spec", "mrre:k=10"]), &["mrre", "k=10", "out of range", "k < n", "n=10"]);
}

#[test]
fn lcmc_k_negative() {
    let c = case();
    expect_error(&c.args(&["--spec", "lcmc:k=-1"]), &["lcmc", "k=-1", "out of range", "1 <= k < n", "n=10"]);
}

#[test]
fn default_k_too_large_for_small_data() {
    // Default k=20 with n=10.
    let c = case();
    expect_error(&c.args(&["--spec", "nd"]), &["nd", "k=20", "out of range", "n=10"]);
}

// ---------------------------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------------------------

#[test]
fn labels_of_wrong_length() {
    let c = case();
    let labels = write(c.path(), "labels.csv", "0\n1\n0\n1\n0\n1\n0\n1\n0\n");
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l, "--spec", "nh:k=3"]), &[&l, "9 entries", "10 points"]);
}

#[test]
fn labels_of_wrong_length_npy() {
    let c = case();
    let labels = write_npy(c.path(), "labels.npy", &Array1::<i64>::from(vec![0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2]));
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "11 entries", "10 points"]);
}

#[test]
fn nh_without_labels() {
    let c = case();
    expect_error(&c.args(&["--spec", "nh:k=3"]), &["nh", "needs labels", "--labels"]);
}

#[test]
fn ca_tnc_without_labels() {
    let c = case();
    expect_error(&c.args(&["--spec", "ca_tnc:k=3"]), &["ca_tnc", "needs labels"]);
}

#[test]
fn ca_tnc_with_a_single_class() {
    let c = case();
    let labels = write(c.path(), "labels.csv", "7\n".repeat(10));
    let l = s(&labels);
    expect_error(
        &c.args(&["--labels", &l, "--spec", "ca_tnc:k=3"]),
        &["ca_tnc", "at least 2 distinct classes", "have 1"],
    );
}

#[test]
fn labels_without_files() {
    let c = case();
    let labels = write(c.path(), "labels.csv", "0\n1\n");
    expect_error(&["measure".into(), "--labels".into(), labels.into()], &["--labels needs --high and --low"]);
}

#[test]
fn labels_not_integers_csv() {
    let c = case();
    let labels = write(c.path(), "labels.csv", "0\n1\n1.5\n0\n1\n0\n1\n0\n1\n0\n");
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "line 3", "1.5", "not an integer"]);
}

#[test]
fn labels_not_integers_npy() {
    let c = case();
    let labels = write_npy(
        c.path(),
        "labels.npy",
        &Array1::<f64>::from(vec![0.0, 1.0, 0.25, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]),
    );
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "0.25", "not an integer"]);
}

#[test]
fn labels_two_columns_csv() {
    let c = case();
    let labels = write(c.path(), "labels.csv", "0,1\n".repeat(10));
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "one value per line", "found 2"]);
}

// ---------------------------------------------------------------------------------------------
// Specs
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_spec_id() {
    let c = case();
    expect_error(&c.args(&["--spec", "foo:k=3"]), &["unknown measure id 'foo'", "tnc", "topo"]);
}

#[test]
fn snc_parameter_errors() {
    let c = case();
    expect_error(&c.args(&["--spec", "snc:iteration=0"]), &["snc", "iteration=0", "at least 1"]);
    // ZADU's '<k>-means' needs a whole k >= 1.
    expect_error(
        &c.args(&["--spec", "steadiness_cohesiveness:clustering_strategy=x-means"]),
        &["snc", "clustering_strategy=x-means", "'<k>-means'"],
    );
    expect_error(&c.args(&["--spec", "snc:clustering_strategy=0-means"]), &["snc", "0-means", "k >= 1"]);
    expect_error(&c.args(&["--spec", "snc:clustering_strategy=optics"]), &["snc", "dbscan, kmeans, or '<k>-means'"]);
}

#[test]
fn unknown_parameter() {
    let c = case();
    expect_error(&c.args(&["--spec", "tnc:sigma=1"]), &["tnc", "unknown parameter 'sigma'", "accepted: k"]);
}

#[test]
fn non_integer_k() {
    let c = case();
    expect_error(&c.args(&["--spec", "tnc:k=2.5"]), &["tnc", "k=2.5", "must be an integer"]);
    expect_error(&c.args(&["--spec", "tnc:k=5.0"]), &["tnc", "k=5.0", "must be an integer"]);
    expect_error(&c.args(&["--spec", "lcmc:k=three"]), &["lcmc", "k=three", "must be an integer"]);
}

#[test]
fn malformed_spec() {
    let c = case();
    expect_error(&c.args(&["--spec", "tnc:k"]), &["malformed spec 'tnc:k'", "NAME=VALUE"]);
    expect_error(&c.args(&["--spec", "tnc:k=3,k=4"]), &["malformed spec", "given twice"]);
    expect_error(&c.args(&["--spec", ":k=3"]), &["malformed spec", "id is empty"]);
}

#[test]
fn full_zadu_id_is_accepted_and_checked() {
    let c = case();
    expect_error(&c.args(&["--spec", "trustworthiness_continuity:k=7"]), &["tnc", "k=7", "out of range"]);
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

#[test]
fn missing_file() {
    let c = case();
    let missing = c.path().join("does_not_exist.csv");
    expect_error(&measure_args(&c.high, &[&missing], &[]), &[&s(&missing), "cannot read"]);
}

#[test]
fn missing_npy_file() {
    let c = case();
    let missing = c.path().join("nope.npy");
    expect_error(&measure_args(&missing, &[&c.low], &[]), &[&s(&missing), "cannot read"]);
}

#[test]
fn directory_instead_of_file() {
    let c = case();
    let dir = c.path().join("points.csv");
    std::fs::create_dir(&dir).unwrap();
    expect_error(&measure_args(&dir, &[&c.low], &[]), &[&s(&dir), "cannot read"]);
}

#[test]
fn directory_without_extension() {
    let c = case();
    expect_error(&measure_args(c.path(), &[&c.low], &[]), &[&s(c.path()), "unknown file extension"]);
}

#[test]
fn malformed_npy_random_bytes() {
    let c = case();
    let mut rng = Rng(9);
    let bytes: Vec<u8> = (0..200).map(|_| (rng.uniform() * 256.0) as u8).collect();
    let high = write(c.path(), "garbage.npy", bytes);
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "not a valid .npy"]);
}

#[test]
fn truncated_npy() {
    let c = case();
    let full = write_npy(c.path(), "full.npy", &Array2::<f64>::zeros((10, 5)));
    let bytes = std::fs::read(&full).unwrap();
    let high = write(c.path(), "truncated.npy", &bytes[..bytes.len() - 13]);
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high)]);
}

#[test]
fn npy_labels_of_random_bytes() {
    let c = case();
    let labels = write(c.path(), "labels.npy", b"\x93NUMPY but not really");
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "not a valid .npy"]);
}

#[test]
fn npy_points_one_dimensional() {
    let c = case();
    let high = write_npy(c.path(), "flat.npy", &Array1::<f64>::zeros(10));
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "expected a 2-D array, got 1-D"]);
}

#[test]
fn npy_points_one_dimensional_f32() {
    let c = case();
    let low = write_npy(c.path(), "flat32.npy", &Array1::<f32>::zeros(10));
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "expected a 2-D array, got 1-D"]);
}

#[test]
fn npy_labels_two_dimensional() {
    let c = case();
    let labels = write_npy(c.path(), "labels2d.npy", &Array2::<i64>::zeros((10, 1)));
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "expected a 1-D array, got 2-D"]);
}

#[test]
fn npy_integer_points_unsupported() {
    let c = case();
    let high = write_npy(c.path(), "ints.npy", &Array2::<i64>::zeros((10, 5)));
    expect_error(
        &measure_args(&high, &[&c.low], &[]),
        &[&s(&high), "unsupported .npy element type", "float64 or float32"],
    );
}

#[test]
fn npy_complex_points_unsupported() {
    let c = case();
    let high = write(c.path(), "complex.npy", raw_npy("<c16", "(10, 5)", &[0u8; 10 * 5 * 16]));
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "unsupported .npy element type", "c16"]);
}

#[test]
fn npy_string_labels_unsupported() {
    let c = case();
    let labels = write(c.path(), "strings.npy", raw_npy("<U3", "(10,)", &[0u8; 10 * 12]));
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "unsupported .npy element type", "U3"]);
}

#[test]
fn ragged_csv() {
    let c = case();
    let high = write(c.path(), "ragged.csv", "1,2\n3,4\n5\n6,7\n");
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "line 3", "has 1 values, earlier rows have 2"]);
}

#[test]
fn csv_with_header_line() {
    let c = case();
    let mut text = String::from("x,y\n");
    text.push_str(&csv_text(&random_rows(10, 2, 11)));
    let low = write(c.path(), "header.csv", text);
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "line 1", "'x' is not a number", "headerless"]);
}

#[test]
fn csv_not_utf8() {
    let c = case();
    let low = write(c.path(), "latin1.csv", b"1,2\n\xff\xfe,3\n");
    expect_error(&measure_args(&c.high, &[&low], &[]), &[&s(&low), "not UTF-8"]);
}

#[test]
fn unknown_extension() {
    let c = case();
    let high = write(c.path(), "points.json", "[[1,2],[3,4]]");
    expect_error(&measure_args(&high, &[&c.low], &[]), &[&s(&high), "unknown file extension", ".npy or .csv"]);
}

#[test]
fn unknown_extension_for_labels() {
    let c = case();
    let labels = write(c.path(), "labels.parquet", "0");
    let l = s(&labels);
    expect_error(&c.args(&["--labels", &l]), &[&l, "unknown file extension"]);
}

// ---------------------------------------------------------------------------------------------
// Undefined measures
// ---------------------------------------------------------------------------------------------

#[test]
fn topo_with_duplicate_points_is_undefined() {
    let c = case();
    let mut rows = random_rows(10, 5, 12);
    rows[6] = rows[2].clone();
    let high = write_csv(c.path(), "dups.csv", &rows);
    expect_error(&measure_args(&high, &[&c.low], &["--spec", "topo:k=3"]), &["topo", "undefined", "distance zero"]);
}

#[test]
fn topo_with_duplicates_only_in_projection_is_undefined() {
    let c = case();
    let mut rows = random_rows(10, 2, 13);
    rows[4] = rows[8].clone();
    let low = write_csv(c.path(), "dups_low.csv", &rows);
    expect_error(&measure_args(&c.high, &[&low], &["--spec", "topo:k=3"]), &["topo", "undefined"]);
}

#[test]
fn proc_with_zero_variance_neighbourhood_is_undefined() {
    let c = case();
    let mut rows = random_rows(12, 5, 14);
    for r in rows.iter_mut().take(5) {
        *r = vec![0.5; 5];
    }
    let high = write_csv(c.path(), "coincident.csv", &rows);
    let low = write_csv(c.path(), "low12.csv", &random_rows(12, 2, 15));
    expect_error(&measure_args(&high, &[&low], &["--spec", "proc:k=3"]), &["proc", "undefined", "zero variance"]);
    // One neighbour, centred, is all zero whatever the data: k=1 is out of range, not blamed
    // on coincident points.
    let generic = write_csv(c.path(), "generic12.csv", &random_rows(12, 5, 16));
    expect_error(&measure_args(&generic, &[&low], &["--spec", "proc:k=1"]), &["proc", "k=1", "2 <= k < n"]);
}

#[test]
fn proc_and_topo_are_fine_on_generic_data() {
    let c = case();
    let out = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(c.args(&["--spec", "proc:k=3", "--spec", "topo:k=3"]))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// Library: typed errors
// ---------------------------------------------------------------------------------------------

fn pts(name: &str, n: usize, d: usize, seed: u64) -> Points {
    Points::from_vec(name, n, d, random_rows(n, d, seed).concat()).unwrap()
}

fn spec(s: &str) -> Spec {
    s.parse().unwrap()
}

fn measure_err(high: Points, low: &Points, labels: Option<&Labels>, specs: &[&str]) -> Error {
    let specs: Vec<Spec> = specs.iter().map(|s| spec(s)).collect();
    Evaluator::new(high, Options::default()).measure(low, labels, &specs).unwrap_err()
}

#[test]
fn lib_nan_is_non_finite_with_position() {
    let mut v = vec![1.0; 4 * 3];
    v[2 * 3 + 1] = f64::NAN;
    let e = Points::from_vec("x", 4, 3, v).unwrap_err();
    assert!(
        matches!(e, Error::NonFinite { ref name, row: 2, col: 1, value } if name == "x" && value.is_nan()),
        "{e:?}"
    );
    assert!(e.to_string().contains("row 2, column 1"), "{e}");
}

#[test]
fn lib_infinity_is_non_finite_with_position() {
    let mut v = vec![1.0; 5 * 2];
    v[9] = f64::NEG_INFINITY;
    let e = Points::from_vec("x", 5, 2, v).unwrap_err();
    assert!(matches!(e, Error::NonFinite { row: 4, col: 1, value, .. } if value == f64::NEG_INFINITY), "{e:?}");
}

#[test]
fn lib_first_bad_value_is_reported() {
    let mut v = vec![1.0; 5 * 2];
    v[3] = 1e200;
    v[7] = f64::NAN;
    let e = Points::from_vec("x", 5, 2, v).unwrap_err();
    assert!(matches!(e, Error::TooLarge { row: 1, col: 1, value, .. } if value == 1e200), "{e:?}");
}

#[test]
fn lib_huge_value_is_too_large() {
    let mut v = vec![1.0; 3 * 2];
    v[4] = 1e200;
    let e = Points::from_vec("big", 3, 2, v).unwrap_err();
    assert!(
        matches!(e, Error::TooLarge { ref name, row: 2, col: 0, value } if name == "big" && value == 1e200),
        "{e:?}"
    );
    // Just below the limit is accepted.
    let mut v = vec![1.0; 3 * 2];
    v[4] = -9.9e149;
    assert!(Points::from_vec("ok", 3, 2, v).is_ok());
}

#[test]
fn lib_empty_and_too_few() {
    assert!(matches!(Points::from_vec("e", 0, 3, vec![]), Err(Error::Empty { ref name }) if name == "e"));
    assert!(matches!(Points::from_vec("one", 1, 3, vec![1.0, 2.0, 3.0]), Err(Error::TooFewPoints { n: 1, .. })));
    assert!(matches!(Points::from_vec("nocols", 4, 0, vec![]), Err(Error::NoFeatures { .. })));
    assert!(Points::from_vec("two", 2, 1, vec![1.0, 2.0]).is_ok());
}

#[test]
fn lib_row_mismatch() {
    let e = measure_err(pts("high", 10, 4, 1), &pts("low", 9, 2, 2), None, &["tnc:k=2"]);
    assert!(matches!(e, Error::RowMismatch { ref name, expected: 10, got: 9 } if name == "low"), "{e:?}");
}

#[test]
fn lib_label_length() {
    let labels = Labels::new(vec![0, 1, 0]);
    let e = measure_err(pts("high", 10, 4, 1), &pts("low", 10, 2, 2), Some(&labels), &["nh:k=2"]);
    assert!(matches!(e, Error::LabelLength { expected: 10, got: 3 }), "{e:?}");
}

#[test]
fn lib_labels_required_and_classes() {
    let e = measure_err(pts("high", 10, 4, 1), &pts("low", 10, 2, 2), None, &["nh:k=2"]);
    assert!(matches!(e, Error::LabelsRequired { ref id } if id == "nh"), "{e:?}");
    let one_class = Labels::new(vec![3; 10]);
    let e = measure_err(pts("high", 10, 4, 1), &pts("low", 10, 2, 2), Some(&one_class), &["ca_tnc:k=2"]);
    assert!(matches!(e, Error::TooFewClasses { ref id, need: 2, got: 1 } if id == "ca_tnc"), "{e:?}");
}

#[test]
fn lib_k_out_of_range() {
    let (h, l) = (pts("high", 10, 4, 1), pts("low", 10, 2, 2));
    let e = measure_err(h.clone(), &l, None, &["tnc:k=5"]);
    assert!(matches!(e, Error::KOutOfRange { ref id, k: 5, n: 10, .. } if id == "tnc"), "{e:?}");
    let e = measure_err(h.clone(), &l, None, &["mrre:k=10"]);
    assert!(matches!(e, Error::KOutOfRange { k: 10, n: 10, .. }), "{e:?}");
    let e = measure_err(h.clone(), &l, None, &["lcmc:k=-1"]);
    assert!(matches!(e, Error::KOutOfRange { k: -1, .. }), "{e:?}");
    let e = measure_err(h, &l, None, &["tnc:k=0"]);
    assert!(matches!(e, Error::KOutOfRange { k: 0, .. }), "{e:?}");
}

#[test]
fn lib_spec_errors() {
    let (h, l) = (pts("high", 10, 4, 1), pts("low", 10, 2, 2));
    let e = measure_err(h.clone(), &l, None, &["foo"]);
    assert!(matches!(e, Error::UnknownMeasure { ref id, .. } if id == "foo"), "{e:?}");
    let e = measure_err(h.clone(), &l, None, &["snc:random_state=-1"]);
    assert!(matches!(e, Error::BadParam { ref param, .. } if param == "random_state"), "{e:?}");
    let e = measure_err(h.clone(), &l, None, &["tnc:sigma=1"]);
    assert!(matches!(e, Error::UnknownParam { ref param, .. } if param == "sigma"), "{e:?}");
    let e = measure_err(h, &l, None, &["tnc:k=2.5"]);
    assert!(matches!(e, Error::BadParam { ref param, ref value, .. } if param == "k" && value == "2.5"), "{e:?}");
    assert!(matches!("tnc:k".parse::<Spec>(), Err(Error::BadSpec { .. })));
}

#[test]
fn lib_undefined_measures() {
    let mut rows = random_rows(10, 4, 1);
    rows[5] = rows[1].clone();
    let h = Points::from_vec("dups", 10, 4, rows.concat()).unwrap();
    let e = measure_err(h, &pts("low", 10, 2, 2), None, &["topo:k=2"]);
    assert!(matches!(e, Error::Undefined { ref id, .. } if id == "topo"), "{e:?}");

    let mut rows = random_rows(12, 4, 3);
    for r in rows.iter_mut().take(5) {
        *r = vec![0.25; 4];
    }
    let h = Points::from_vec("coincident", 12, 4, rows.concat()).unwrap();
    let e = measure_err(h, &pts("low", 12, 2, 2), None, &["proc:k=3"]);
    assert!(matches!(e, Error::Undefined { ref id, .. } if id == "proc"), "{e:?}");
}

#[test]
fn lib_read_errors_are_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let e = faithful::data::read_points(d.join("missing.csv")).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Io(_), .. }), "{e:?}");
    let e = faithful::data::read_points(write(d, "x.json", "")).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Extension, .. }), "{e:?}");
    let e = faithful::data::read_points(write(d, "r.csv", "1,2\n3\n")).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Csv { line: 2, .. }, .. }), "{e:?}");
    let e = faithful::data::read_points(write(d, "g.npy", "garbage")).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Npy(_), .. }), "{e:?}");
    let e = faithful::data::read_points(write_npy(d, "f.npy", &Array1::<f64>::zeros(4))).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Ndim { expected: 2, got: 1 }, .. }), "{e:?}");
    let e = faithful::data::read_points(write_npy(d, "i.npy", &Array2::<i32>::zeros((4, 2)))).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::NpyType(_), .. }), "{e:?}");
    let e = faithful::data::read_labels(write_npy(d, "l.npy", &Array2::<i64>::zeros((4, 2)))).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Ndim { expected: 1, got: 2 }, .. }), "{e:?}");
    // A label that is no integer is a bad value, not a bad .npy; a .npz that is no archive is
    // named as an .npz.
    let e = faithful::data::read_labels(write_npy(d, "h.npy", &Array1::from(vec![1.0, 2.5]))).unwrap_err();
    assert!(
        matches!(e, Error::File { problem: FileProblem::Element(ref w), .. } if w.contains("2.5 is not an integer")),
        "{e:?}"
    );
    assert!(!e.to_string().contains(".npy file"), "{e}");
    let e = faithful::data::read_knn_npz(write(d, "g.npz", "garbage")).unwrap_err();
    assert!(matches!(e, Error::File { problem: FileProblem::Npz(_), .. }), "{e:?}");
    assert!(e.to_string().contains("not a valid .npz file: not a .npz (zip) archive"), "{e}");

    // Validation errors inside a file keep their type, wrapped with the path.
    let p = write(d, "nan.csv", "1,2\n3,nan\n");
    let e = faithful::data::read_points(&p).unwrap_err();
    match &e {
        Error::File { path, problem: FileProblem::Data(inner) } => {
            assert_eq!(path, &p);
            assert!(matches!(**inner, Error::NonFinite { row: 1, col: 1, .. }), "{inner:?}");
        }
        other => panic!("want File/Data, got {other:?}"),
    }
    let e = faithful::data::read_points(write(d, "one.csv", "1,2\n")).unwrap_err();
    assert!(
        matches!(e, Error::File { problem: FileProblem::Data(ref inner), .. } if matches!(**inner, Error::TooFewPoints { n: 1, .. })),
        "{e:?}"
    );
}

#[test]
fn lib_errors_display_on_one_line() {
    // Every error message the CLI can print is a single line.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let errors = [
        faithful::data::read_points(d.join("missing.csv")).unwrap_err(),
        faithful::data::read_points(write(d, "g.npy", "garbage")).unwrap_err(),
        faithful::data::read_points(write(d, "c.npy", raw_npy("<c8", "(3, 2)", &[0u8; 48]))).unwrap_err(),
        Points::from_vec("x", 2, 1, vec![f64::NAN, 1.0]).unwrap_err(),
        measure_err(pts("high", 10, 4, 1), &pts("low", 10, 2, 2), None, &["foo"]),
    ];
    for e in errors {
        assert!(!e.to_string().contains('\n'), "multi-line: {e}");
    }
}

/// A reader that stops early (`faithful ... | head`) ends the process without a panic.
#[cfg(unix)]
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(["measure", "--local", "--json", "--spec", "nh:k=3", "--spec", "tnc:k=3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe is closed here, long before the megabyte of per-point values is written.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.status.success(), "a truncated output must not claim success");
    assert_eq!(out.status.signal(), Some(libc::SIGPIPE));
}
