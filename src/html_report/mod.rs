//! `faithful report` (and `faithful_dr.report`): one self-contained HTML file with the scores,
//! the R_NX curves and every distortion view of each projection, drawn by the page's own view
//! code (web/views/*.js, inlined) from the evaluator's exact data (compressed and inlined). It
//! needs no network and no server: it opens from a file:// URL and sets
//! `<body data-status="done">` once drawn.
//!
//! Its size is bounded: the data goes in by priority (scores; coordinates and local T & C;
//! the other per-point values; the all-pairs tallies; the kNN lists and cross ranks) and
//! whatever would take the file past [`ReportOptions::max_bytes`] is left out, and the report
//! says so (a limit below the scores alone is an error); the all-pairs views (Shepard, co-ranking, stress and Spearman's ρ) are computed only
//! up to [`ReportOptions::all_pairs_max_n`] points. The same inputs give the same bytes (the
//! run's timings are not in it).

mod bundle;
mod pack;

use serde_json::{Map, Value, json};

use crate::data::{Labels, Points};
use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measures::Resolved;
use crate::spec::Spec;
use crate::views::{Views, ViewsRequest, check_k, setters};
use pack::{Arrays, base64, pack};

/// How [`Evaluator::html_report`] builds the report.
///
/// ```
/// use faithful::ReportOptions;
/// let o = ReportOptions::new().title("digits").k(15);
/// assert_eq!((o.k, o.all_pairs_max_n, o.max_bytes), (15, 10_000, 30_000_000));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReportOptions {
    /// The report's title (default: "faithful report: " and the original space's name).
    pub title: Option<String>,
    /// Neighbours per point of the lens, the reliability map and the local T & C (default 10).
    pub k: usize,
    /// Bins per axis of the Shepard diagram (default 64).
    pub shepard_bins: usize,
    /// Bins per octave of the co-ranking matrix (default 4).
    pub coranking_per_octave: usize,
    /// The all-pairs views (Shepard, co-ranking, stress, Spearman's ρ) only up to this many
    /// points (default 10 000: their passes grow as n², Spearman's pair order holds 16 bytes
    /// per pair).
    pub all_pairs_max_n: usize,
    /// The largest file (bytes, default 30 000 000, the whole page counted): data that would
    /// take it past this is left out, and the report says what; a limit the scores alone pass
    /// is [`Error::BadParam`](crate::Error::BadParam), naming the smallest report's size.
    pub max_bytes: u64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            title: None,
            k: 10,
            shepard_bins: 64,
            coranking_per_octave: 4,
            all_pairs_max_n: 10_000,
            max_bytes: 30_000_000,
        }
    }
}

impl ReportOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// The title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    setters! {
        /// Neighbours per point of the lens, reliability map and local T & C.
        k: usize;
        /// Bins per axis of the Shepard diagram (0: none).
        shepard_bins: usize;
        /// Bins per octave of the co-ranking matrix (0: none).
        coranking_per_octave: usize;
        /// The most points for which the all-pairs views are computed.
        all_pairs_max_n: usize;
        /// The largest file, in bytes.
        max_bytes: u64;
    }

    /// The views of a report of n points: the all-pairs ones only up to
    /// [`ReportOptions::all_pairs_max_n`] points.
    fn views_request(&self, n: usize) -> ViewsRequest {
        let all_pairs = n <= self.all_pairs_max_n;
        ViewsRequest::new()
            .k(self.k)
            .shepard_bins(if all_pairs { self.shepard_bins } else { 0 })
            .coranking_per_octave(if all_pairs { self.coranking_per_octave } else { 0 })
    }
}

/// A report: the HTML and what it holds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HtmlReport {
    /// The whole file.
    pub html: String,
    /// What was left out, and why (also stated in the report).
    pub left_out: Vec<String>,
    /// The embedded data: compressed bytes (before base64) and uncompressed bytes.
    pub data_bytes: usize,
    /// The data before compression.
    pub raw_bytes: usize,
    /// The inlined script and stylesheet.
    pub code_bytes: usize,
}

/// Bytes as "1.2 MB" / "850.3 kB" / "512 bytes" (to the nearest tenth; a limit of 1K reads
/// 1.0 kB, not 2).
fn size(bytes: usize) -> String {
    match bytes {
        1 => "1 byte".into(),
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The specs of a report: the given ones (default tnc, mrre, lcmc, and nh with labels, at the
/// views' k), with tnc at k (the views' local T & C); and, for the Shepard caption, stress and
/// Spearman's ρ when absent, as optional specs (left out where undefined).
fn report_specs(
    specs: &[Spec],
    n: usize,
    tnc_k: usize,
    labels: bool,
    all_pairs: bool,
) -> Result<(Vec<Spec>, Vec<Spec>)> {
    let mut out: Vec<Spec> = if specs.is_empty() {
        let mut ids = vec!["tnc", "mrre", "lcmc"];
        if labels {
            ids.push("nh");
        }
        ids.iter().map(|id| format!("{id}:k={tnc_k}").parse()).collect::<Result<_>>()?
    } else {
        specs.to_vec()
    };
    let resolved = |s: &Spec| -> Result<(String, usize)> {
        let mut r = Resolved::new(s)?;
        r.default_k(n);
        Ok((r.def.id.to_string(), r.k))
    };
    let have = out.iter().map(resolved).collect::<Result<Vec<_>>>()?;
    if !have.iter().any(|(id, k)| id == "tnc" && *k == tnc_k) {
        out.insert(0, format!("tnc:k={tnc_k}").parse()?);
    }
    let mut added = Vec::new();
    if all_pairs {
        for id in ["stress", "srho"] {
            if !have.iter().any(|(i, _)| i == id) {
                added.push(id.parse()?);
            }
        }
    }
    Ok((out, added))
}

/// The report's data: its header and arrays.
struct Data {
    arrays: Arrays,
    header: Map<String, Value>,
}

impl Evaluator {
    /// Evaluates `specs` (see [`ReportOptions`] for what is added) and the views' data on each
    /// projection, and writes them into one self-contained HTML report. The CLI's
    /// `faithful report` and Python's `faithful_dr.report` call this, so both write the same
    /// bytes for the same inputs.
    ///
    /// ```
    /// use faithful::{Evaluator, Points, ReportOptions};
    /// let high = Points::from_vec("high", 8, 2, (0..16).map(|v| (v * v % 7) as f64).collect())?;
    /// let low = Points::from_vec("low", 8, 1, (0..8).map(f64::from).collect())?;
    /// let r = Evaluator::builder(high).build().html_report(&[&low], None, &[], &ReportOptions::new().k(2))?;
    /// assert!(r.html.starts_with("<!doctype html>"));
    /// assert!(r.html.contains("data-status=\"loading\"") && r.left_out.is_empty());
    /// # Ok::<(), faithful::Error>(())
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn html_report(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
        opts: &ReportOptions,
    ) -> Result<HtmlReport> {
        let n = self.high().n();
        if n < 4 {
            return Err(Error::BadParam {
                id: "report".into(),
                param: "n".into(),
                value: n.to_string(),
                reason: "a report needs at least 4 points".into(),
            });
        }
        check_k("report", opts.k, n)?;
        let k = opts.k;
        let tnc_k = k.min(n.div_ceil(2) - 1).max(1);
        let all_pairs = n <= opts.all_pairs_max_n;
        let (specs, caption) = report_specs(specs, n, tnc_k, labels.is_some(), all_pairs)?;
        // A caption measure the report adds itself (stress, srho) is left out of a projection
        // where it is undefined (srho of a constant projection) and said so; one the user asked
        // for is a spec and fails there.
        let views = self.views(lows, labels, &specs, &opts.views_request(n).optional(caption))?;
        let mut left_out: Vec<String> = views
            .projections
            .iter()
            .flat_map(|p| {
                p.left_out.iter().map(move |l| {
                    format!("{} (the Shepard caption): undefined on {} because {}", l.id, p.name, l.reason)
                })
            })
            .collect();
        if !all_pairs {
            left_out.push(format!(
                "the all-pairs views (Shepard diagram, co-ranking matrix and R_NX, stress, Spearman's ρ): n = {n} is above {} points (their passes grow as n²; `--all-pairs-max-n` raises the limit)",
                opts.all_pairs_max_n
            ));
        }
        let title = opts.title.clone().unwrap_or_else(|| format!("faithful report: {}", self.high().name()));
        build(self.high(), lows, labels, &views, &title, tnc_k, opts.max_bytes, left_out)
    }
}

/// Which data go in: the levels of [`build`], most first.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Level {
    Everything,
    NoLists,
    NoOtherLocals,
    ScoresOnly,
}

fn build(
    high: &Points,
    lows: &[&Points],
    labels: Option<&Labels>,
    views: &Views,
    title: &str,
    tnc_k: usize,
    max_bytes: u64,
    left_out: Vec<String>,
) -> Result<HtmlReport> {
    let script = format!(
        "'use strict';\n{}\nstartReport();\n",
        bundle::bundle().expect("the view modules follow the bundle's rules (unit-tested)")
    );
    let css = format!("{}\n{}", REPORT_CSS, bundle::VIEWS_CSS);
    let code_bytes = script.len() + css.len();
    let limit = size(max_bytes as usize);
    let over = |what: &str| format!("{what}: with them the file would pass its limit of {limit} (--max-size)");
    let mut level = Level::Everything;
    loop {
        let Data { arrays, mut header } = data(high, lows, labels, views, title, tnc_k, level);
        let mut notes = left_out.clone();
        if level >= Level::NoLists && views.k > 0 {
            notes.push(over("the kNN lists and cross ranks (the neighbour lens and the reliability map)"));
        }
        if level >= Level::NoOtherLocals {
            notes.push(over("the per-point values of the measures other than tnc"));
        }
        if level >= Level::ScoresOnly {
            notes.push(over("the coordinates and local values (every view)"));
        }
        header.insert("left_out".into(), json!(notes));
        let (gz, raw) = pack(header, &arrays);
        let data64 = base64(&gz);
        // The whole page is measured (its code and text are most of a small report), not
        // estimated: a level is dropped only when the file at it would pass the limit.
        let html = page(title, high, lows, labels, views, &notes, &css, &script, &data64, gz.len(), raw, code_bytes);
        if html.len() as u64 <= max_bytes {
            return Ok(HtmlReport { html, left_out: notes, data_bytes: gz.len(), raw_bytes: raw, code_bytes });
        }
        level = match level {
            Level::Everything => Level::NoLists,
            Level::NoLists => Level::NoOtherLocals,
            Level::NoOtherLocals => Level::ScoresOnly,
            // Even the scores alone pass it: no file is written, rather than one over its limit.
            Level::ScoresOnly => {
                return Err(Error::BadParam {
                    id: "report".into(),
                    param: "max_size".into(),
                    value: max_bytes.to_string(),
                    reason: format!(
                        "the smallest report (its scores, without the views' data) is {} ({} bytes)",
                        size(html.len()),
                        html.len()
                    ),
                });
            }
        };
    }
}

/// The header and arrays of the report's data at `level`.
fn data(
    high: &Points,
    lows: &[&Points],
    labels: Option<&Labels>,
    views: &Views,
    title: &str,
    tnc_k: usize,
    level: Level,
) -> Data {
    let n = high.n();
    let mut a = Arrays::default();
    let mut evaluation = serde_json::to_value(&views.evaluation).expect("results serialise");
    // The run without its timings: the same inputs give the same file.
    if let Some(run) = evaluation.get_mut("run").and_then(Value::as_object_mut) {
        run.remove("timings");
        run.remove("gpu");
    }
    let mut locals = Vec::new();
    for (p, proj) in views.evaluation.projections.iter().enumerate() {
        for (s, score) in proj.scores.iter().enumerate() {
            let Some(local) = &score.local else { continue };
            for (key, values) in local {
                let core = score.id == "tnc"
                    && score.params.iter().any(|(k, v)| k == "k" && v.to_string() == tnc_k.to_string());
                let slot = &mut evaluation["projections"][p]["scores"][s]["local"][key.as_str()];
                *slot = Value::Null;
                let keep = if core { level < Level::ScoresOnly } else { level < Level::NoOtherLocals };
                if keep {
                    let name = a.add(&format!("p{p}.s{s}.{key}"), values.iter().copied());
                    locals.push(json!({ "projection": p, "score": s, "key": key, "array": name }));
                }
            }
        }
    }
    let with_points = level < Level::ScoresOnly;
    let labels_name = labels.filter(|_| with_points).map(|l| {
        if l.raw().iter().all(|&v| i32::try_from(v).is_ok()) {
            a.add("labels", l.raw().iter().map(|&v| v as i32))
        } else {
            a.add("labels", l.raw().iter().map(|&v| v as f64))
        }
    });
    let lists = level < Level::NoLists && views.k > 0;
    let knn_high = views.knn_high.as_ref().filter(|_| lists).map(|l| a.add("knn_high", l.iter().copied()));
    let mut projections = Vec::new();
    for (p, (low, v)) in lows.iter().zip(&views.projections).enumerate() {
        let mut o = Map::new();
        o.insert("name".into(), json!(v.name));
        if with_points {
            let col = |c: usize| (0..n).map(move |i| if c < low.dim() { low.row(i)[c] } else { 0.0 });
            o.insert("x".into(), json!(a.add(&format!("p{p}.x"), col(0))));
            o.insert("y".into(), json!(a.add(&format!("p{p}.y"), col(1))));
        } else {
            o.insert("x".into(), Value::Null);
            o.insert("y".into(), Value::Null);
        }
        o.insert("dim".into(), json!(low.dim()));
        let nb = v.neighbourhoods.as_ref().filter(|_| lists);
        for (key, values) in [
            ("knn_low", nb.map(|nb| &nb.knn_low)),
            ("rank_low_of_high", nb.map(|nb| &nb.rank_low_of_high)),
            ("rank_high_of_low", nb.map(|nb| &nb.rank_high_of_low)),
        ] {
            let name = values.map(|vals| a.add(&format!("p{p}.{key}"), vals.iter().copied()));
            o.insert(key.into(), json!(name));
        }
        let shepard = v.shepard.as_ref().filter(|_| with_points).map(|s| {
            let counts = a.add(&format!("p{p}.shepard"), s.counts.iter().map(|&c| c as f64));
            json!({ "bins": s.bins, "max_high": s.max_high, "max_low": s.max_low, "pairs": s.pairs, "counts": counts })
        });
        o.insert("shepard".into(), json!(shepard));
        let coranking = v.coranking.as_ref().filter(|_| with_points).map(|c| {
            let edges = a.add(&format!("p{p}.coranking.edges"), c.edges.iter().copied());
            let counts = a.add(&format!("p{p}.coranking.counts"), c.counts.iter().map(|&x| x as f64));
            let rnx = a.add(&format!("p{p}.coranking.rnx"), c.rnx.iter().copied());
            json!({ "edges": edges, "counts": counts, "rnx": rnx, "auc_rnx": c.auc_rnx })
        });
        o.insert("coranking".into(), json!(coranking));
        projections.push(Value::Object(o));
    }
    let mut header = Map::new();
    header.insert("format".into(), json!("faithful-report-1"));
    header.insert("title".into(), json!(title));
    header.insert("faithful_version".into(), json!(env!("CARGO_PKG_VERSION")));
    header.insert("n".into(), json!(n));
    header.insert("dim_high".into(), json!(high.dim()));
    header.insert("k".into(), json!(views.k));
    header.insert("evaluation".into(), evaluation);
    header.insert("locals".into(), json!(locals));
    header.insert("labels".into(), json!(labels_name));
    header.insert("knn_high".into(), json!(knn_high));
    header.insert("projections".into(), Value::Array(projections));
    Data { arrays: a, header }
}

/// The HTML file.
#[allow(clippy::too_many_arguments)]
fn page(
    title: &str,
    high: &Points,
    lows: &[&Points],
    labels: Option<&Labels>,
    views: &Views,
    left_out: &[String],
    css: &str,
    script: &str,
    data64: &str,
    gz: usize,
    raw: usize,
    code: usize,
) -> String {
    let run = &views.evaluation.run;
    let names: Vec<String> = lows.iter().map(|l| html_escape(l.name())).collect();
    let served = if run.backend == "gpu" {
        format!("GPU ({})", run.adapter.as_ref().map_or("wgpu".into(), |a| html_escape(&a.name)))
    } else {
        "CPU".into()
    };
    let labels_note = labels.map_or("no labels".to_string(), |l| format!("{} classes", l.classes()));
    let mut out = String::with_capacity(data64.len() + script.len() + css.len() + 8_000);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!("<meta name=\"generator\" content=\"faithful {}\">\n", env!("CARGO_PKG_VERSION")));
    out.push_str(&format!("<title>{}</title>\n<style>\n{css}\n</style>\n</head>\n", html_escape(title)));
    out.push_str("<body data-status=\"loading\">\n<header class=\"fr-top\">\n");
    out.push_str(&format!("<h1>{}</h1>\n", html_escape(title)));
    out.push_str(&format!(
        "<p class=\"fr-sub\">{} points · {}-D original space ({}) · projections: {} · {} · k = {} · faithful {} · {}, {} numerics</p>\n",
        high.n(),
        high.dim(),
        html_escape(high.name()),
        names.join(", "),
        labels_note,
        views.k,
        env!("CARGO_PKG_VERSION"),
        served,
        html_escape(&run.numerics),
    ));
    out.push_str(&format!(
        "<p class=\"fr-size\">One self-contained file (no network, no server): data {} compressed from {}, code {}.</p>\n",
        size(gz),
        size(raw),
        size(code)
    ));
    if !left_out.is_empty() {
        out.push_str("<div class=\"fr-left-out\"><b>Left out of this report:</b><ul>");
        for l in left_out {
            out.push_str(&format!("<li>{}</li>", html_escape(l)));
        }
        out.push_str("</ul></div>\n");
    }
    out.push_str(
        "</header>\n<main class=\"fr-main\">\n<div id=\"fr-error\" class=\"fr-error\" role=\"alert\" hidden></div>\n",
    );
    out.push_str("<section class=\"fv-card\"><div class=\"fv-head\"><h3>Scores</h3></div><div id=\"fr-scores\" class=\"fr-table\"></div></section>\n");
    out.push_str("<div id=\"fr-views\"></div>\n");
    out.push_str(
        "<details class=\"fv-card\"><summary>Summary JSON</summary><pre id=\"view-json\"></pre></details>\n</main>\n",
    );
    out.push_str("<noscript><p class=\"fr-error\">This report draws its views with JavaScript.</p></noscript>\n");
    out.push_str("<script id=\"faithful-data\" type=\"application/octet-stream\">");
    out.push_str(data64);
    out.push_str("</script>\n<script>\n(() => {\n");
    out.push_str(script);
    out.push_str("})();\n</script>\n</body>\n</html>\n");
    out
}

const REPORT_CSS: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f3f5f9; color: #1d2433; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.fr-top { max-width: 1240px; margin: 0 auto; padding: 20px 24px 4px; }
.fr-top h1 { font-size: 21px; margin: 0 0 4px; }
.fr-sub, .fr-size { margin: 2px 0; color: #5b6275; font-size: 13px; }
.fr-left-out { margin: 10px 0 0; padding: 8px 12px; background: #fff7e6; border: 1px solid #f0d9a8; border-radius: 8px; font-size: 13px; }
.fr-left-out ul { margin: 4px 0 0 18px; padding: 0; }
.fr-main { max-width: 1240px; margin: 0 auto; padding: 12px 24px 32px; }
.fr-error { padding: 10px 12px; background: #fdecec; border: 1px solid #f2b8b8; border-radius: 8px; color: #8a1f1f; margin-bottom: 12px; }
.fr-table { overflow-x: auto; }
.fr-scores { border-collapse: collapse; font-size: 13px; min-width: 420px; }
.fr-scores th, .fr-scores td { padding: 3px 12px; border-bottom: 1px solid #eef0f5; text-align: left; }
.fr-scores .num { text-align: right; font-variant-numeric: tabular-nums; }
.fr-scores tr.group td { background: #f6f7fb; font-weight: 600; }
.fr-scores td.key { padding-left: 22px; }
.fr-scores .muted, .fr-missing { color: #6b7285; font-weight: 400; }
.fr-curve { height: 300px; max-width: 900px; }
.fr-curve canvas { width: 100%; height: 100%; display: block; }
.fr-legend { display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12.5px; margin-top: 6px; }
.fr-legend i { display: inline-block; width: 18px; border-top: 2px solid; margin-right: 6px; vertical-align: middle; }
details.fv-card summary { cursor: pointer; font-weight: 600; }
pre#view-json { white-space: pre-wrap; word-break: break-all; font-size: 11px; max-height: 240px; overflow: auto; }
"#;
