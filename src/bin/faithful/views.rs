//! `faithful views`: the exact data behind the distortion views (kNN lists and cross ranks, the
//! binned Shepard diagram, the co-ranking matrix), with the scores of the specs.

use std::fmt::Write as _;

use faithful::{Evaluator, Points, Result, Spec, ViewsRequest};

use crate::arg_errors::whole_usize;
use crate::output;
use crate::pair_args::show_progress;
use crate::run_args::RunArgs;
use crate::space_args::InputArgs;

/// The parts of a views request shared by `views` and `report`.
#[derive(clap::Args, Debug, Clone)]
pub struct ViewArgs {
    /// Neighbours per point of the lens and the reliability map (0: leave them out).
    #[arg(long, default_value_t = 10, allow_hyphen_values = true, value_parser = whole_usize(0, usize::MAX))]
    pub k: usize,
    /// Bins per axis of the Shepard diagram, at most 1024 (0: leave it out).
    #[arg(long, default_value_t = 64, allow_hyphen_values = true, value_parser = whole_usize(0, 1024))]
    pub shepard_bins: usize,
    /// Bins per octave of K in the co-ranking matrix, at most 16 (0: leave it out).
    #[arg(long, default_value_t = 4, allow_hyphen_values = true, value_parser = whole_usize(0, 16))]
    pub coranking_per_octave: usize,
}

impl ViewArgs {
    pub fn request(&self) -> ViewsRequest {
        ViewsRequest::new().k(self.k).shepard_bins(self.shepard_bins).coranking_per_octave(self.coranking_per_octave)
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// A measure to score as well: ID[:P=V[,P=V]...]; repeat for several. Default: tnc at --k.
    #[arg(long = "spec", value_name = "SPEC")]
    specs: Vec<String>,
    #[command(flatten)]
    views: ViewArgs,
    /// Print one JSON object: `measure --json --local`'s, with `k`, `knn_high` and each
    /// projection's `views` (neighbourhoods, shepard, coranking).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    run: RunArgs,
}

/// The specs as given, or tnc at k (the views' local trustworthiness and continuity).
pub fn specs_or_tnc(specs: &[String], k: usize) -> Result<Vec<Spec>> {
    if specs.is_empty() {
        return Ok(if k > 0 { vec![format!("tnc:k={k}").parse()?] } else { Vec::new() });
    }
    specs.iter().map(|s| s.parse::<Spec>()).collect()
}

pub fn run(args: Args, cancel: faithful::Cancel) -> Result<()> {
    let mut opts = args.run.options(cancel)?;
    let (high, lows, labels) = args.input.read()?;
    let specs = specs_or_tnc(&args.specs, args.views.k)?;
    opts.local = true;
    let bar = show_progress(&mut opts);
    let eval = Evaluator::new(high, opts);
    let lows: Vec<&Points> = lows.iter().collect();
    let result = eval.views(&lows, labels.as_ref(), &specs, &args.views.request());
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let views = result?;
    if args.json {
        return output::print_with(|w| {
            serde_json::to_writer(&mut *w, &views).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        });
    }
    let n = eval.high().n();
    let mut text =
        format!("views of {} ({n} points), k = {}\n", faithful::quote::one_line(eval.high().name()), views.k);
    for p in &views.projections {
        let _ = write!(text, "{}:", faithful::quote::one_line(&p.name));
        if let Some(nb) = &p.neighbourhoods {
            let beyond = |r: &[u32]| r.iter().filter(|&&r| r as usize > nb.k).count();
            let _ = write!(
                text,
                " {} missing and {} false neighbours of {} kNN pairs;",
                beyond(&nb.rank_low_of_high),
                beyond(&nb.rank_high_of_low),
                n * nb.k
            );
        }
        if let Some(s) = &p.shepard {
            let _ = write!(text, " Shepard {}×{} bins over {} pairs;", s.bins, s.bins, s.pairs);
        }
        if let Some(c) = &p.coranking {
            let _ = write!(text, " co-ranking {}×{} log bins, AUC of R_NX {:.4};", c.bins(), c.bins(), c.auc_rnx);
        }
        text.pop();
        text.push('\n');
    }
    text.push_str("(--json prints every list and count; `faithful report` draws them)\n");
    output::print(&text)
}
