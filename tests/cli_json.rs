//! The command line's output contract: `measure --json` (one JSON object, numbers that
//! round-trip to the library's exact f64s), the table output, and `measures`.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::Rng;
use common::files::{self, measure_args, write_csv, write_npy_rows};
use faithful::evaluate::default_specs;
use faithful::measures::{REGISTRY, ZADU_PENDING};
use faithful::{Evaluation, Evaluator, Labels, Options, Points, Spec};
use serde_json::Value;
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn random_rows(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    files::random_rows(n, d, seed, -1.0, 1.0)
}

struct Run {
    stdout: String,
    stderr: String,
}

/// Runs the binary and requires success with an empty stderr.
#[track_caller]
fn run_ok(args: &[OsString]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_faithful")).args(args).output().expect("binary runs");
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert!(out.status.success(), "faithful {args:?} failed ({:?}):\n{stderr}", out.status.code());
    assert!(stderr.is_empty(), "unexpected stderr for {args:?}:\n{stderr}");
    Run { stdout, stderr }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// Checks stdout is exactly one JSON object and a trailing newline; returns it parsed twice:
/// with serde_json, and with [`raw`] (keys in order, numbers as printed).
#[track_caller]
fn parse_json(stdout: &str) -> (Value, raw::J) {
    assert!(stdout.ends_with('\n'), "stdout must end with a newline");
    let body = &stdout[..stdout.len() - 1];
    assert!(!body.contains('\n'), "stdout must be one line of JSON");
    assert!(
        body.starts_with('{') && body.ends_with('}'),
        "stdout must be a JSON object: {}",
        &body[..body.len().min(200)]
    );
    let v: Value = serde_json::from_str(body).expect("stdout parses as JSON");
    assert!(v.is_object());
    let r = raw::parse(body);
    (v, r)
}

/// The evaluation the library gives for the same inputs.
fn library(high: &Points, lows: &[&Points], labels: Option<&Labels>, specs: &[Spec], local: bool) -> Evaluation {
    let eval = Evaluator::new(high.clone(), {
        let mut o = Options::default();
        o.local = local;
        o
    });
    eval.measure_many(lows, labels, specs).expect("library evaluates")
}

/// Every score value (and local value) in the CLI's JSON is, bit for bit, the library's.
#[track_caller]
fn assert_same_bits(json: &raw::J, lib: &Evaluation) {
    let projections = json.get("projections").arr();
    assert_eq!(projections.len(), lib.projections.len());
    let mut checked = 0usize;
    for (pj, pl) in projections.iter().zip(&lib.projections) {
        assert_eq!(pj.get("name").str(), pl.name);
        let scores = pj.get("scores").arr();
        assert_eq!(scores.len(), pl.scores.len());
        for (sj, sl) in scores.iter().zip(&pl.scores) {
            assert_eq!(sj.get("id").str(), sl.id);
            let values = sj.get("values").obj();
            let keys: Vec<&str> = values.iter().map(|(k, _)| k.as_str()).collect();
            let lib_keys: Vec<&str> = sl.values.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, lib_keys, "value keys (in order) of {}", sl.id);
            for ((key, vj), (_, vl)) in values.iter().zip(&sl.values) {
                let printed = vj.num();
                assert_eq!(
                    printed.to_bits(),
                    vl.to_bits(),
                    "{} {}.{key}: printed {printed:?}, library {vl:?}",
                    pl.name,
                    sl.id
                );
                checked += 1;
            }
            match (&sl.local, sj.try_get("local")) {
                (None, None) => {}
                (Some(ll), Some(lj)) => {
                    let lj = lj.obj();
                    assert_eq!(lj.len(), ll.len());
                    for ((kj, arr), (kl, vals)) in lj.iter().zip(ll) {
                        assert_eq!(kj, kl);
                        let arr = arr.arr();
                        assert_eq!(arr.len(), vals.len());
                        for (i, (a, b)) in arr.iter().zip(vals).enumerate() {
                            assert_eq!(a.num().to_bits(), b.to_bits(), "{} {kj}[{i}]", pl.name);
                            checked += 1;
                        }
                    }
                }
                (l, j) => panic!("local mismatch for {}: library {}, json {}", sl.id, l.is_some(), j.is_some()),
            }
            // With local values, what each means, as the library says.
            match sj.try_get("local_kinds") {
                None => assert!(sl.local.is_none(), "json lacks the local kinds of {}", sl.id),
                Some(kinds) => {
                    let got: Vec<(&str, &str)> = kinds.obj().iter().map(|(k, v)| (k.as_str(), v.str())).collect();
                    let want: Vec<(&str, &str)> = sl.local_kinds.iter().map(|(k, v)| (k.as_str(), v.name())).collect();
                    assert_eq!(got, want, "local kinds of {}", sl.id);
                    assert_eq!(
                        want.len(),
                        sl.local.as_ref().map_or(0, Vec::len),
                        "a kind for every local of {}",
                        sl.id
                    );
                }
            }
            // Curves (coranking's) appear exactly when the library has them, bit for bit.
            match sj.try_get("curves") {
                None => assert!(sl.curves.is_empty(), "json lacks the curves of {}", sl.id),
                Some(cj) => {
                    let cj = cj.obj();
                    assert_eq!(cj.len(), sl.curves.len());
                    for ((kj, arr), (kl, vals)) in cj.iter().zip(&sl.curves) {
                        assert_eq!(kj, kl);
                        let arr = arr.arr();
                        assert_eq!(arr.len(), vals.len());
                        for (i, (a, b)) in arr.iter().zip(vals).enumerate() {
                            assert_eq!(a.num().to_bits(), b.to_bits(), "{} {}.curves.{kj}[{i}]", pl.name, sl.id);
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 0);
}

/// A small JSON parser that keeps object keys in order and numbers as printed, so numbers
/// are parsed with Rust's correctly rounded `str::parse::<f64>` (serde_json's default float
/// parsing is not guaranteed to round-trip).
mod raw {
    #[derive(Debug, Clone)]
    #[allow(dead_code)] // payloads are read through Debug only
    pub enum J {
        Null,
        Bool(bool),
        Num(String),
        Str(String),
        Arr(Vec<J>),
        Obj(Vec<(String, J)>),
    }

    impl J {
        pub fn try_get(&self, key: &str) -> Option<&J> {
            self.obj().iter().find(|(k, _)| k == key).map(|(_, v)| v)
        }
        #[track_caller]
        pub fn get(&self, key: &str) -> &J {
            self.try_get(key).unwrap_or_else(|| panic!("no key {key:?}"))
        }
        #[track_caller]
        pub fn obj(&self) -> &[(String, J)] {
            match self {
                J::Obj(o) => o,
                other => panic!("not an object: {other:?}"),
            }
        }
        #[track_caller]
        pub fn arr(&self) -> &[J] {
            match self {
                J::Arr(a) => a,
                other => panic!("not an array: {other:?}"),
            }
        }
        #[track_caller]
        pub fn str(&self) -> &str {
            match self {
                J::Str(s) => s,
                other => panic!("not a string: {other:?}"),
            }
        }
        #[track_caller]
        pub fn num(&self) -> f64 {
            match self {
                J::Num(s) => s.parse().unwrap_or_else(|_| panic!("bad number {s:?}")),
                other => panic!("not a number: {other:?}"),
            }
        }
    }

    pub fn parse(text: &str) -> J {
        let mut p = P { b: text.as_bytes(), i: 0 };
        let v = p.value();
        p.ws();
        assert_eq!(p.i, p.b.len(), "trailing characters after the JSON value");
        v
    }

    struct P<'a> {
        b: &'a [u8],
        i: usize,
    }

    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.b.len() && b" \t\r\n".contains(&self.b[self.i]) {
                self.i += 1;
            }
        }
        fn peek(&mut self) -> u8 {
            self.ws();
            self.b[self.i]
        }
        fn eat(&mut self, c: u8) {
            assert_eq!(self.peek() as char, c as char, "at byte {}", self.i);
            self.i += 1;
        }
        fn lit(&mut self, s: &str, v: J) -> J {
            assert!(self.b[self.i..].starts_with(s.as_bytes()), "at byte {}", self.i);
            self.i += s.len();
            v
        }
        fn value(&mut self) -> J {
            match self.peek() {
                b'{' => {
                    self.i += 1;
                    let mut o = Vec::new();
                    if self.peek() == b'}' {
                        self.i += 1;
                        return J::Obj(o);
                    }
                    loop {
                        let k = self.string();
                        self.eat(b':');
                        o.push((k, self.value()));
                        match self.peek() {
                            b',' => self.i += 1,
                            _ => {
                                self.eat(b'}');
                                return J::Obj(o);
                            }
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut a = Vec::new();
                    if self.peek() == b']' {
                        self.i += 1;
                        return J::Arr(a);
                    }
                    loop {
                        a.push(self.value());
                        match self.peek() {
                            b',' => self.i += 1,
                            _ => {
                                self.eat(b']');
                                return J::Arr(a);
                            }
                        }
                    }
                }
                b'"' => J::Str(self.string()),
                b't' => self.lit("true", J::Bool(true)),
                b'f' => self.lit("false", J::Bool(false)),
                b'n' => self.lit("null", J::Null),
                _ => {
                    let start = self.i;
                    while self.i < self.b.len() && b"+-.eE0123456789".contains(&self.b[self.i]) {
                        self.i += 1;
                    }
                    assert!(self.i > start, "unexpected byte at {}", start);
                    J::Num(String::from_utf8(self.b[start..self.i].to_vec()).unwrap())
                }
            }
        }
        fn string(&mut self) -> String {
            self.eat(b'"');
            let mut out = Vec::new();
            loop {
                let c = self.b[self.i];
                self.i += 1;
                match c {
                    b'"' => return String::from_utf8(out).unwrap(),
                    b'\\' => {
                        let e = self.b[self.i];
                        self.i += 1;
                        match e {
                            b'n' => out.push(b'\n'),
                            b't' => out.push(b'\t'),
                            b'r' => out.push(b'\r'),
                            b'b' => out.push(8),
                            b'f' => out.push(12),
                            b'u' => {
                                let hex = std::str::from_utf8(&self.b[self.i..self.i + 4]).unwrap();
                                self.i += 4;
                                let ch = char::from_u32(u32::from_str_radix(hex, 16).unwrap()).unwrap_or('\u{fffd}');
                                out.extend(ch.to_string().as_bytes());
                            }
                            other => out.push(other),
                        }
                    }
                    other => out.push(other),
                }
            }
        }
    }
}

/// A temp dir with 60 random 5-D points and two 2-D projections (CSV).
struct Files {
    _dir: TempDir,
    high: PathBuf,
    low: PathBuf,
    low2: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    let high_rows = random_rows(60, 5, 1);
    let high = write_csv(dir.path(), "high.csv", &high_rows);
    // A noisy linear projection (so scores are not trivial) and a random one.
    let mut rng = Rng(7);
    let proj: Vec<Vec<f64>> = high_rows
        .iter()
        .map(|r| vec![r[0] + 0.5 * r[1] + 0.1 * rng.uniform(), r[2] - r[3] + 0.1 * rng.uniform()])
        .collect();
    let low = write_csv(dir.path(), "proj.csv", &proj);
    let low2 = write_csv(dir.path(), "random.csv", &random_rows(60, 2, 3));
    Files { _dir: dir, high, low, low2 }
}

fn read(p: &Path) -> Points {
    faithful::data::read_points(p).unwrap()
}

fn specs(s: &[&str]) -> Vec<Spec> {
    s.iter().map(|s| s.parse().unwrap()).collect()
}

const DEFAULT_KEYS: &[(&str, &[&str])] = &[
    ("tnc", &["trustworthiness", "continuity"]),
    ("mrre", &["mrre_false", "mrre_missing"]),
    ("lcmc", &["lcmc"]),
    ("nh", &["neighborhood_hit"]),
];

// ---------------------------------------------------------------------------------------------
// The bundled example
// ---------------------------------------------------------------------------------------------

#[test]
fn json_bundled_example_contract() {
    let run = run_ok(&os(&["measure", "--json"]));
    assert!(run.stderr.is_empty());
    let (v, r) = parse_json(&run.stdout);

    let projections = v["projections"].as_array().expect("projections array");
    assert!(projections.len() >= 2);
    let names: Vec<&str> = projections.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..2], &["pca", "random_projection"]);
    for p in projections {
        let scores = p["scores"].as_array().expect("scores array");
        let ids: Vec<&str> = scores.iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["tnc", "mrre", "lcmc", "nh"], "default specs with the bundled labels");
        for (s, (id, keys)) in scores.iter().zip(DEFAULT_KEYS) {
            let obj = s.as_object().unwrap();
            assert!(!obj.contains_key("local"), "no local key without --local");
            let mut fields: Vec<&str> = obj.keys().map(String::as_str).collect();
            fields.sort_unstable();
            assert_eq!(fields, ["id", "params", "values"]);
            assert_eq!(s["id"], *id);
            assert_eq!(s["params"], serde_json::json!({"k": 20}));
            let values = s["values"].as_object().unwrap();
            assert_eq!(values.len(), keys.len());
            for k in *keys {
                let x = values[*k].as_f64().unwrap_or_else(|| panic!("{id}.{k} is not a number"));
                assert!(x.is_finite() && (-1.0..=1.0).contains(&x), "{id}.{k} = {x}");
            }
        }
    }
    // Raw order of the value keys is ZADU's.
    for p in r.get("projections").arr() {
        for (s, (_, keys)) in p.get("scores").arr().iter().zip(DEFAULT_KEYS) {
            let got: Vec<&str> = s.get("values").obj().iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(&got, keys);
        }
    }

    let run_obj = v["run"].as_object().expect("run object");
    for key in ["backend", "numerics", "timings", "plan"] {
        assert!(run_obj.contains_key(key), "run lacks {key}");
    }
    assert!(v["run"]["backend"].is_string());
    assert!(v["run"]["numerics"].is_string());
    assert_eq!(v["run"]["n"], 1797);
    assert_eq!(v["run"]["dim_high"], 64);
    assert_eq!(v["run"]["dims_low"], serde_json::json!([2, 2]));
    for t in ["validate_s", "resources_s", "measures_s", "total_s"] {
        let x = v["run"]["timings"][t].as_f64().unwrap_or_else(|| panic!("timings.{t}"));
        assert!(x >= 0.0 && x.is_finite());
    }
    let plan = v["run"]["plan"].as_object().expect("plan object");
    for key in ["needs", "block_rows", "blocks"] {
        assert!(plan.contains_key(key), "plan lacks {key}");
    }
    assert_eq!(v["run"]["plan"]["block_rows"], 32);

    // Same bits as the library on the same example.
    let ex = faithful::example::digits();
    let lows: Vec<&Points> = ex.projections.iter().collect();
    let lib = library(&ex.high, &lows, Some(&ex.labels), &default_specs(true), false);
    assert_same_bits(&r, &lib);
}

#[test]
fn json_bundled_example_local() {
    let run = run_ok(&os(&["measure", "--json", "--local"]));
    let (v, r) = parse_json(&run.stdout);
    let local_keys: &[(&str, &[&str])] = &[
        ("tnc", &["local_trustworthiness", "local_continuity"]),
        ("mrre", &["local_mrre_false", "local_mrre_missing"]),
        ("lcmc", &["local_lcmc"]),
        ("nh", &["local_neighborhood_hit"]),
    ];
    for p in v["projections"].as_array().unwrap() {
        let scores = p["scores"].as_array().unwrap();
        assert_eq!(scores.len(), local_keys.len());
        for (s, (id, keys)) in scores.iter().zip(local_keys) {
            assert_eq!(s["id"], *id);
            let local = s["local"].as_object().unwrap_or_else(|| panic!("{id} has no local"));
            assert_eq!(local.len(), keys.len());
            for k in *keys {
                let arr = local[*k].as_array().unwrap_or_else(|| panic!("{id} lacks {k}"));
                assert_eq!(arr.len(), 1797, "{id}.{k}");
                assert!(arr.iter().all(|x| x.as_f64().is_some_and(f64::is_finite)), "{id}.{k} has a non-number");
            }
        }
    }
    for p in r.get("projections").arr() {
        for (s, (_, keys)) in p.get("scores").arr().iter().zip(local_keys) {
            let got: Vec<&str> = s.get("local").obj().iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(&got, keys);
        }
    }
    let ex = faithful::example::digits();
    let lows: Vec<&Points> = ex.projections.iter().collect();
    let lib = library(&ex.high, &lows, Some(&ex.labels), &default_specs(true), true);
    assert_same_bits(&r, &lib);
}

#[test]
fn table_bundled_example() {
    let run = run_ok(&os(&["measure"]));
    let out = &run.stdout;
    for name in ["digits", "pca", "random_projection"] {
        assert!(out.contains(name), "table lacks {name}:\n{out}");
    }
    for (id, keys) in DEFAULT_KEYS {
        assert!(out.contains(id), "table lacks {id}");
        for k in *keys {
            assert!(out.contains(k), "table lacks {k}");
        }
    }
    assert!(out.contains("1797 points"));
    assert!(!out.trim_start().starts_with('{'), "table output is not JSON");
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

#[test]
fn json_specs_on_files() {
    let f = files();
    let run = run_ok(&measure_args(&f.high, &[&f.low], &["--json", "--spec", "tnc:k=10", "--spec", "nd"]));
    let (v, r) = parse_json(&run.stdout);
    let projections = v["projections"].as_array().unwrap();
    assert_eq!(projections.len(), 1);
    assert_eq!(projections[0]["name"], "proj.csv");
    let scores = projections[0]["scores"].as_array().unwrap();
    let ids: Vec<&str> = scores.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["tnc", "nd"]);
    assert_eq!(scores[0]["params"], serde_json::json!({"k": 10}));
    assert_eq!(scores[1]["params"], serde_json::json!({"k": 20}));
    assert!(scores[0]["values"]["trustworthiness"].is_number());
    assert!(scores[0]["values"]["continuity"].is_number());
    assert!(scores[1]["values"]["neighbor_dissimilarity"].is_number());
    assert!(scores.iter().all(|s| s.get("local").is_none()));
    assert_eq!(v["run"]["n"], 60);
    assert_eq!(v["run"]["dim_high"], 5);

    let lib = library(&read(&f.high), &[&read(&f.low)], None, &specs(&["tnc:k=10", "nd"]), false);
    assert_same_bits(&r, &lib);
}

#[test]
fn json_numbers_round_trip_every_measure() {
    let f = files();
    let dir = tempfile::tempdir().unwrap();
    let labels_path = dir.path().join("labels.csv");
    let labels: Vec<i64> = (0..60).map(|i| (i * 7 % 3) as i64).collect();
    std::fs::write(&labels_path, labels.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let all = [
        "tnc:k=7",
        "mrre:k=5",
        "lcmc:k=9",
        "nh:k=4",
        "ca_tnc:k=6",
        "nd:k=8",
        "proc:k=5",
        "topo:k=6",
        "coranking:k_max=30",
    ];
    for local in [false, true] {
        let mut extra = vec!["--json", "--labels", labels_path.to_str().unwrap()];
        for s in &all {
            extra.extend(["--spec", s]);
        }
        if local {
            extra.push("--local");
        }
        let run = run_ok(&measure_args(&f.high, &[&f.low, &f.low2], &extra));
        let (v, r) = parse_json(&run.stdout);
        let ids: Vec<&str> =
            v["projections"][0]["scores"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["tnc", "mrre", "lcmc", "nh", "ca_tnc", "nd", "proc", "topo", "coranking"]);
        let curves = v["projections"][0]["scores"][8]["curves"].as_object().expect("coranking has curves");
        // (serde_json's map is sorted by key; assert_same_bits checks the order on the raw text.)
        let lens: Vec<(&str, usize)> = curves.iter().map(|(k, a)| (k.as_str(), a.as_array().unwrap().len())).collect();
        assert_eq!(
            lens,
            [
                ("continuity", 29),
                ("lcmc", 30),
                ("mrre_false", 30),
                ("mrre_missing", 30),
                ("qnx", 30),
                ("rnx", 30),
                ("trustworthiness", 29)
            ]
        );
        let lib = library(
            &read(&f.high),
            &[&read(&f.low), &read(&f.low2)],
            Some(&faithful::data::read_labels(&labels_path).unwrap()),
            &specs(&all),
            local,
        );
        assert_same_bits(&r, &lib);
    }
}

#[test]
fn json_npy_and_csv_give_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    let high_rows = random_rows(50, 4, 21);
    let low_rows = random_rows(50, 2, 22);
    let hc = write_csv(dir.path(), "h.csv", &high_rows);
    let lc = write_csv(dir.path(), "l.csv", &low_rows);
    let hn = write_npy_rows(dir.path(), "h.npy", &high_rows);
    let ln = write_npy_rows(dir.path(), "l.npy", &low_rows);
    let a = run_ok(&measure_args(&hc, &[&lc], &["--json", "--spec", "tnc:k=5", "--local"]));
    let b = run_ok(&measure_args(&hn, &[&ln], &["--json", "--spec", "tnc:k=5", "--local"]));
    let (va, ra) = parse_json(&a.stdout);
    let (vb, rb) = parse_json(&b.stdout);
    assert_eq!(va["projections"][0]["scores"], vb["projections"][0]["scores"]);
    let lib = library(&read(&hn), &[&read(&ln).with_name("l.csv")], None, &specs(&["tnc:k=5"]), true);
    assert_same_bits(&ra, &lib);
    let lib = library(&read(&hc), &[&read(&lc).with_name("l.npy")], None, &specs(&["tnc:k=5"]), true);
    assert_same_bits(&rb, &lib);
}

#[test]
fn json_several_projections_in_order() {
    let f = files();
    let dir = tempfile::tempdir().unwrap();
    let third = write_npy_rows(dir.path(), "third.npy", &random_rows(60, 3, 9));
    let lows: [&Path; 4] = [&f.low2, &third, &f.low, &f.low2];
    let run = run_ok(&measure_args(&f.high, &lows, &["--json", "--spec", "lcmc:k=5", "--spec", "tnc:k=3"]));
    let (v, r) = parse_json(&run.stdout);
    let names: Vec<&str> = v["projections"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["random.csv", "third.npy", "proj.csv", "random.csv"]);
    assert_eq!(v["run"]["dims_low"], serde_json::json!([2, 3, 2, 2]));
    // The same file twice gives the same scores.
    assert_eq!(v["projections"][0]["scores"], v["projections"][3]["scores"]);
    assert_ne!(v["projections"][0]["scores"], v["projections"][2]["scores"]);

    let points: Vec<Points> = lows.iter().map(|p| read(p)).collect();
    let refs: Vec<&Points> = points.iter().collect();
    let lib = library(&read(&f.high), &refs, None, &specs(&["lcmc:k=5", "tnc:k=3"]), false);
    assert_same_bits(&r, &lib);
    // Each projection alone gives the same bits as in the batch.
    for (i, p) in points.iter().enumerate() {
        let alone = library(&read(&f.high), &[p], None, &specs(&["lcmc:k=5", "tnc:k=3"]), false);
        assert_eq!(alone.projections[0].scores, lib.projections[i].scores);
    }
}

#[test]
fn json_results_do_not_depend_on_threads_or_blocks() {
    let f = files();
    let base = measure_args(&f.high, &[&f.low], &["--json", "--local", "--spec", "tnc:k=9", "--spec", "mrre:k=4"]);
    let reference = parse_json(&run_ok(&base).stdout).0;
    for extra in [["--threads", "1"], ["--threads", "3"], ["--block-rows", "1"], ["--block-rows", "1000"]] {
        let mut args = base.clone();
        args.extend(extra.iter().map(OsString::from));
        let v = parse_json(&run_ok(&args).stdout).0;
        assert_eq!(v["projections"], reference["projections"], "{extra:?}");
    }
}

/// `--low-index auto` (the projection's k-d tree) and `--low-index never` (full rows) print the
/// same bits, on a generic projection and on a tie-heavy lattice with duplicates, and the run
/// report says which path served.
#[test]
fn json_low_index_paths_give_the_same_bits_and_say_which_served() {
    let f = files();
    let dir = tempfile::tempdir().unwrap();
    let lattice: Vec<Vec<f64>> = (0..60).map(|i| vec![(i % 5) as f64, ((i / 3) % 4) as f64]).collect();
    let lattice = write_csv(dir.path(), "lattice.csv", &lattice);
    for low in [&f.low, &lattice] {
        let specs = ["--spec", "tnc:k=5", "--spec", "mrre:k=5", "--spec", "lcmc:k=5"];
        let run = |path: &str| {
            let mut extra = vec!["--json", "--local", "--low-index", path];
            extra.extend(specs);
            parse_json(&run_ok(&measure_args(&f.high, &[low], &extra)).stdout).0
        };
        let (auto, never) = (run("auto"), run("never"));
        assert_eq!(auto["projections"], never["projections"], "{low:?}");
        assert_eq!(auto["run"]["plan"]["low_index"][0]["path"], "kd_tree", "{low:?}: {}", auto["run"]["plan"]);
        assert_eq!(never["run"]["plan"]["low_index"][0]["path"], "rows", "{low:?}");
        assert_eq!(auto["run"]["work"]["low_rows_indexed"], 60, "{low:?}");
    }
}

#[test]
fn json_error_leaves_stdout_empty() {
    let f = files();
    let out = Command::new(env!("CARGO_BIN_EXE_faithful"))
        .args(measure_args(&f.high, &[&f.low], &["--json", "--spec", "tnc:k=30"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("faithful: error: ") && stderr.lines().count() == 1, "{stderr}");
}

#[test]
fn table_on_files_mentions_projections_and_keys() {
    let f = files();
    let spec_list = ["tnc:k=5", "mrre:k=5", "lcmc:k=5", "nd:k=5", "proc:k=5", "topo:k=5"];
    let mut extra = Vec::new();
    for s in &spec_list {
        extra.extend(["--spec", *s]);
    }
    let run = run_ok(&measure_args(&f.high, &[&f.low, &f.low2], &extra));
    let out = &run.stdout;
    assert!(out.contains("high.csv"), "{out}");
    assert!(out.contains("60 points"), "{out}");
    for name in ["proj.csv", "random.csv"] {
        assert!(out.contains(&format!("projection: {name}")), "table lacks {name}:\n{out}");
    }
    let keys = [
        "trustworthiness",
        "continuity",
        "mrre_false",
        "mrre_missing",
        "lcmc",
        "neighbor_dissimilarity",
        "procrustes",
        "topographic_product",
    ];
    for k in keys {
        // Once per projection.
        assert!(out.matches(k).count() >= 2, "table lacks {k} for both projections:\n{out}");
    }
    // Each value printed in the table is the library's, to the 12 decimals shown.
    let lib = library(&read(&f.high), &[&read(&f.low), &read(&f.low2)], None, &specs(&spec_list), false);
    for p in &lib.projections {
        for s in &p.scores {
            for (k, val) in &s.values {
                let shown = format!("{val:.12}");
                assert!(
                    out.lines().any(|l| l.contains(k.as_str()) && l.trim_end().ends_with(&shown)),
                    "{} {k}={shown} not in table:\n{out}",
                    p.name
                );
            }
        }
    }
}

#[test]
fn table_shows_coranking_scalars_and_sampled_k() {
    let f = files();
    let run = run_ok(&measure_args(&f.high, &[&f.low], &["--spec", "coranking"]));
    let lib = library(&read(&f.high), &[&read(&f.low)], None, &specs(&["coranking"]), false);
    let score = &lib.projections[0].scores[0];
    for (k, val) in &score.values {
        let shown = format!("{val:.12}");
        assert!(run.stdout.lines().any(|l| l.contains(k.as_str()) && l.trim_end().ends_with(&shown)), "{k}={shown}");
    }
    // n = 60: K = 1, 2, 5, 10, 20, 50 and the last (58; T and C end at 29).
    let rnx = score.curve("rnx").unwrap();
    let line = run.stdout.lines().find(|l| l.contains(" rnx ")).expect("an rnx line");
    for k in [1, 2, 5, 10, 20, 50, 58] {
        assert!(line.contains(&format!("K={k} {:.4}", rnx[k - 1])), "K={k} in {line}");
    }
    let t = run.stdout.lines().find(|l| l.contains(" trustworthiness ")).expect("a T line");
    assert!(t.trim_end().ends_with(&format!("K=29 {:.4}", score.curve("trustworthiness").unwrap()[28])), "{t}");
}

#[test]
fn table_with_local_mentions_local_keys() {
    let f = files();
    let run = run_ok(&measure_args(&f.high, &[&f.low], &["--local", "--spec", "tnc:k=5", "--spec", "lcmc:k=5"]));
    for k in ["local_trustworthiness", "local_continuity", "local_lcmc", "median"] {
        assert!(run.stdout.contains(k), "table lacks {k}:\n{}", run.stdout);
    }
}

/// The table reads local values by their kind: a sum by its total and parts (not a 0–1 range),
/// counts as whole numbers, a log ratio with the points that have none.
#[test]
fn table_reads_local_values_by_their_kind() {
    let f = files();
    let specs = ["--local", "--spec", "sammon", "--spec", "knn_overlap:k=5", "--spec", "density_preservation:k=5"];
    let run = run_ok(&measure_args(&f.high, &[&f.low], &specs));
    let line =
        |key: &str| run.stdout.lines().find(|l| l.contains(key)).unwrap_or_else(|| panic!("no {key}:\n{}", run.stdout));
    assert!(line("local_sammon_stress").contains("[sum] total"), "{}", line("local_sammon_stress"));
    assert!(line("true_neighbours").contains("[count] total"), "{}", line("true_neighbours"));
    assert!(line("local_knn_overlap").contains("[mean] min"), "{}", line("local_knn_overlap"));
    assert!(line("local_density_preservation").contains("[log_ratio]"), "{}", line("local_density_preservation"));
}

// ---------------------------------------------------------------------------------------------
// `faithful measures`
// ---------------------------------------------------------------------------------------------

/// `faithful measures --json`: one entry per measure with its parameters, keys, local outputs
/// and their kinds, as the registry declares them (the page and issue 27/28's views read it).
#[test]
fn measures_json_lists_every_measure_with_its_local_kinds() {
    let run = run_ok(&os(&["measures", "--json"]));
    let list: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON array");
    let list = list.as_array().expect("an array");
    assert_eq!(list.len(), REGISTRY.len());
    let kinds = ["mean", "sum", "share", "partial_mean", "count", "score", "log_ratio"];
    for (m, d) in list.iter().zip(REGISTRY) {
        assert_eq!(m["id"], d.id);
        assert_eq!(m["zadu_id"], d.zadu_id);
        assert_eq!(m["labels"], d.min_classes > 0, "{}", d.id);
        assert_eq!(m["description"], d.about);
        let keys: Vec<&str> = m["keys"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, d.keys, "{}", d.id);
        let local = m["local"].as_array().unwrap_or_else(|| panic!("{}: local is an array", d.id));
        assert_eq!(local.len(), d.local.len(), "{}", d.id);
        for (l, want) in local.iter().zip(d.local) {
            assert_eq!(l["key"], want.key);
            assert_eq!(l["kind"], want.kind.name());
            assert!(kinds.contains(&l["kind"].as_str().unwrap()), "{}: kind {}", d.id, l["kind"]);
        }
        let params = m["params"].as_array().unwrap();
        assert_eq!(params.len(), d.params.len(), "{}", d.id);
        for (p, want) in params.iter().zip(d.params) {
            assert_eq!(p["name"], want.name);
            assert_eq!(p["default"], want.default);
            assert_eq!(p["required"], want.default.is_empty());
        }
    }
    // The existing locals are labelled: T&C's average to the value, snc's are scores.
    let tnc = list.iter().find(|m| m["id"] == "tnc").unwrap();
    assert_eq!(tnc["local"][0]["kind"], "mean");
    let snc = list.iter().find(|m| m["id"] == "snc").unwrap();
    assert_eq!(snc["local"][0]["kind"], "score");
}

#[test]
fn measures_lists_every_registry_id() {
    let run = run_ok(&os(&["measures"]));
    let out = &run.stdout;
    let first_words: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    for d in REGISTRY {
        assert!(first_words.contains(&d.id), "measures lacks id {}:\n{out}", d.id);
        for k in d.keys.iter().copied().chain(d.local_keys()) {
            assert!(out.contains(k), "measures lacks key {k} of {}", d.id);
        }
        for l in d.local {
            assert!(out.contains(&format!("{} ({})", l.key, l.kind.name())), "measures lacks the kind of {}", l.key);
        }
        for p in d.params {
            assert!(
                out.contains(&format!("{}={}", p.name, p.default)),
                "measures lacks {}={} of {}",
                p.name,
                p.default,
                d.id
            );
        }
    }
    let pending = out.lines().find(|l| l.starts_with("not yet implemented")).expect("pending line");
    for (alias, _) in ZADU_PENDING {
        assert!(pending.contains(alias), "pending line lacks {alias}");
    }
}

#[test]
fn every_listed_measure_runs() {
    // Every registry id is accepted by `measure` (with labels for those that need them).
    let f = files();
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.csv");
    std::fs::write(&labels, (0..60).map(|i| format!("{}\n", i % 2)).collect::<String>()).unwrap();
    let mut extra = vec!["--json", "--labels", labels.to_str().unwrap()];
    // k=5 for the k-based measures, 1 for a parameter without a default; the others with
    // their defaults.
    let spec_strings: Vec<String> = REGISTRY
        .iter()
        .map(|d| {
            let mut given: Vec<String> =
                d.params.iter().filter(|p| p.default.is_empty()).map(|p| format!("{}=1", p.name)).collect();
            if d.params.iter().any(|p| p.name == "k") {
                given.insert(0, "k=5".into());
            }
            if given.is_empty() { d.id.to_string() } else { format!("{}:{}", d.id, given.join(",")) }
        })
        .collect();
    for s in &spec_strings {
        extra.extend(["--spec", s.as_str()]);
    }
    let run = run_ok(&measure_args(&f.high, &[&f.low], &extra));
    let (v, _) = parse_json(&run.stdout);
    let ids: Vec<&str> =
        v["projections"][0]["scores"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    let want: Vec<&str> = REGISTRY.iter().map(|d| d.id).collect();
    assert_eq!(ids, want);
}
