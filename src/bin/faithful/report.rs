//! `faithful report`: one self-contained HTML file (scores, R_NX curves, CheckViz, reliability
//! map, neighbour lens, Shepard and co-ranking heatmaps, two projections linked), written
//! atomically (output.rs).

use std::path::PathBuf;

use faithful::{Evaluator, Points, ReportOptions, Result, Spec};

use crate::arg_errors::whole_usize;
use crate::output;
use crate::pair_args::{parse_bytes, show_progress};
use crate::run_args::RunArgs;
use crate::space_args::InputArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// A measure for the scores table: ID[:P=V[,P=V]...]; repeat for several. Default: tnc,
    /// mrre, lcmc (and nh with labels) at --k; tnc at --k (the views' local T & C) and, up to
    /// --all-pairs-max-n points, stress and srho (the Shepard caption) are always added.
    #[arg(long = "spec", value_name = "SPEC")]
    specs: Vec<String>,
    /// The HTML file to write (atomically: a temporary file beside it, renamed).
    #[arg(long, value_name = "PATH")]
    out: PathBuf,
    /// The report's title. Default: "faithful report: " and the original space's name.
    #[arg(long)]
    title: Option<String>,
    /// Neighbours per point of the lens, the reliability map and the local T & C.
    #[arg(long, default_value_t = 10, allow_hyphen_values = true, value_parser = whole_usize(1, usize::MAX))]
    k: usize,
    /// Bins per axis of the Shepard diagram, at most 1024.
    #[arg(long, default_value_t = 64, allow_hyphen_values = true, value_parser = whole_usize(1, 1024))]
    shepard_bins: usize,
    /// Bins per octave of K in the co-ranking matrix, at most 16.
    #[arg(long, default_value_t = 4, allow_hyphen_values = true, value_parser = whole_usize(1, 16))]
    coranking_per_octave: usize,
    /// The all-pairs views (Shepard, co-ranking, stress, Spearman's ρ) up to this many points.
    #[arg(long, default_value_t = 10_000, allow_hyphen_values = true, value_parser = whole_usize(0, usize::MAX))]
    all_pairs_max_n: usize,
    /// The largest file, e.g. 30M (K/M/G powers of 1024; default 30 000 000 bytes): data that
    /// would pass it is left out, and the report says what; below the scores alone (about
    /// 100 kB), an error.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = parse_bytes)]
    max_size: Option<u64>,
    #[command(flatten)]
    run: RunArgs,
}

pub fn run(args: Args, cancel: faithful::Cancel) -> Result<()> {
    let mut opts = args.run.options(cancel)?;
    // The output is checked before any work: a long run must not end in an unwritable path.
    output::check_not_an_input("report", "out", &args.out, &args.input.files())?;
    output::check_writable(&args.out)?;
    let (high, lows, labels) = args.input.read()?;
    let specs = args.specs.iter().map(|s| s.parse::<Spec>()).collect::<Result<Vec<_>>>()?;
    let mut ro = ReportOptions::new()
        .k(args.k)
        .shepard_bins(args.shepard_bins)
        .coranking_per_octave(args.coranking_per_octave)
        .all_pairs_max_n(args.all_pairs_max_n);
    if let Some(t) = &args.title {
        ro = ro.title(t.clone());
    }
    if let Some(m) = args.max_size {
        ro = ro.max_bytes(m);
    }
    let bar = show_progress(&mut opts);
    let eval = Evaluator::new(high, opts);
    let lows: Vec<&Points> = lows.iter().collect();
    let report = eval.html_report(&lows, labels.as_ref(), &specs, &ro);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let report = report?;
    output::write_file(&args.out, |w| w.write_all(report.html.as_bytes()))?;
    let mut note = format!(
        "faithful: wrote {} ({} bytes: data {} compressed from {}, code {})\n",
        faithful::quote::one_line(&args.out.display().to_string()),
        report.html.len(),
        report.data_bytes,
        report.raw_bytes,
        report.code_bytes
    );
    for l in &report.left_out {
        note.push_str(&format!("faithful: left out: {}\n", faithful::quote::one_line(l)));
    }
    output::eprint(&note)
}
