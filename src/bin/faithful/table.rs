//! Human-readable tables.

use std::fmt::Write;

use faithful::Evaluation;
use faithful::LocalKind;
use faithful::measures::{ParamKind, REGISTRY, ZADU_PENDING};
use faithful::quote::escaped;

/// The results as aligned text, one block per projection. Names (of files, of projections in
/// a partial) are shown escaped: a newline or an escape sequence in one cannot forge lines or
/// drive the terminal.
pub fn results_table(high_name: &str, ev: &Evaluation) -> String {
    let mut s = String::new();
    let r = &ev.run;
    let _ = writeln!(s, "original space: {} ({} points × {} dims)", escaped(high_name), r.n, r.dim_high);
    for p in &ev.projections {
        let _ = writeln!(s, "\nprojection: {}", escaped(&p.name));
        let _ = writeln!(s, "  {:<10} {:<8} {:<26} {:>20}", "measure", "params", "key", "value");
        for sc in &p.scores {
            let params: Vec<String> = sc.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            for (key, v) in &sc.values {
                let _ = writeln!(s, "  {:<10} {:<8} {:<26} {:>20.12}", sc.id, params.join(","), key, v);
            }
            for (key, v) in sc.local.iter().flatten() {
                let kind = sc.local_kind(key);
                let _ = writeln!(s, "  {:<10} {:<8} {:<26} {}", sc.id, params.join(","), key, local_summary(v, kind));
            }
            for (key, v) in &sc.curves {
                let samples: Vec<String> =
                    sampled_k(v.len()).into_iter().map(|k| format!("K={k} {:.4}", v[k - 1])).collect();
                let _ = writeln!(s, "  {:<10} {:<8} {:<26} {}", sc.id, params.join(","), key, samples.join("  "));
            }
        }
    }
    let _ = writeln!(
        s,
        "\nbackend {} ({} numerics), {} threads, {:.3} s (resources {:.3} s, measures {:.3} s)",
        escaped(&r.backend),
        r.numerics,
        r.threads,
        r.timings.total_s,
        r.timings.resources_s,
        r.timings.measures_s
    );
    s
}

/// One line on a local output, as its kind reads: a `mean` or `score` by its range, a `sum` or
/// `share` by its total and largest parts (not on a score's 0–1 scale), a `count` as whole
/// numbers with its total, a `partial_mean` or `log_ratio` over the points that have a value.
fn local_summary(v: &[f64], kind: Option<LocalKind>) -> String {
    let mut sorted: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let missing = v.len() - sorted.len();
    if sorted.is_empty() {
        return format!("[{}] no point has a value", kind.map_or("?", LocalKind::name));
    }
    let (lo, mid, hi) = (sorted[0], sorted[sorted.len() / 2], sorted[sorted.len() - 1]);
    let total = faithful::sum::pairwise_sum(&sorted);
    let range = format!("min {lo:.4}  median {mid:.4}  max {hi:.4}");
    let without = if missing > 0 { format!("  ({missing} points without a value)") } else { String::new() };
    match kind {
        Some(LocalKind::Sum) => format!("[sum] total {total:.6}  largest part {hi:.4e}  median part {mid:.4e}"),
        Some(LocalKind::Share) => format!("[share] largest {:.2}%  median {:.4}%", hi * 100.0, mid * 100.0),
        Some(LocalKind::Count) => format!("[count] total {total:.0}  min {lo:.0}  median {mid:.0}  max {hi:.0}"),
        Some(k @ (LocalKind::PartialMean | LocalKind::LogRatio)) => format!("[{}] {range}{without}", k.name()),
        Some(k) => format!("[{}] {range}", k.name()),
        None => range,
    }
}

/// The K of a curve of `len` points that the table shows: 1, 2, 5, 10, 20, 50, ... and the last.
fn sampled_k(len: usize) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    let mut ks: Vec<usize> = std::iter::successors(Some(1usize), |&p| p.checked_mul(10))
        .take_while(|&p| p <= len)
        .flat_map(|p| [p, 2 * p, 5 * p])
        .filter(|&k| k < len)
        .collect();
    ks.push(len);
    ks
}

/// Every measure with its parameters and keys.
pub fn measures_table() -> String {
    let mut s = String::new();
    for d in REGISTRY {
        let params: Vec<String> = d
            .params
            .iter()
            .map(|p| match p.kind {
                ParamKind::Choice(c) => format!("{}={} ({})", p.name, p.default, c.join("|")),
                ParamKind::Clustering(c) => format!("{}={} ({}|<k>-means)", p.name, p.default, c.join("|")),
                _ if p.default.is_empty() => format!("{}=(required)", p.name),
                _ => format!("{}={}", p.name, p.default),
            })
            .collect();
        let labels = if d.min_classes > 0 { ", labels" } else { "" };
        let _ = writeln!(s, "{:<8} {}{}\n         keys: {}", d.id, params.join(" "), labels, d.keys.join(", "));
        if !d.local.is_empty() {
            let local: Vec<String> = d.local.iter().map(|l| format!("{} ({})", l.key, l.kind.name())).collect();
            let _ = writeln!(s, "         local: {}", local.join(", "));
        }
        let _ = writeln!(s, "         {}", d.about);
    }
    let pending: Vec<&str> = ZADU_PENDING.iter().map(|(a, _)| *a).collect();
    let pending =
        if pending.is_empty() { "none (every ZADU 0.5.4 measure is here)".to_string() } else { pending.join(", ") };
    let _ = writeln!(s, "\nnot yet implemented: {pending}");
    s
}
