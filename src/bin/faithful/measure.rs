//! `faithful measure`.

use faithful::evaluate::default_specs;
use faithful::{Evaluator, LowIndex, Options, Points, Result, Spec};

use crate::arg_errors::{whole, whole_usize};
use crate::backend_args::BackendArgs;
use crate::output;
use crate::pair_args::{PairArgs, progress_bar};
use crate::space_args::InputArgs;
use crate::table;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// A measure: ID[:P=V[,P=V]...], e.g. tnc:k=20; repeat for several.
    /// Default: tnc, mrre, lcmc, and nh when labels are given.
    #[arg(long = "spec", value_name = "SPEC")]
    specs: Vec<String>,
    /// Also report per-point values.
    #[arg(long)]
    local: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Worker threads, at most 1024 (default, or 0: all cores, as ripgrep's --threads 0).
    /// Results are identical for any count.
    #[arg(long, allow_hyphen_values = true, value_parser = whole_usize(0, usize::MAX))]
    threads: Option<usize>,
    /// Rows per task. Results are identical for any size.
    #[arg(long, default_value_t = 32, allow_hyphen_values = true, value_parser = whole(1, u64::MAX))]
    block_rows: u64,
    /// The exact spatial index for projections of dimension ≤ 3 (k-d tree): auto uses it
    /// where it serves, never computes full distance rows. Results are identical either way;
    /// run.plan.low_index says which served.
    #[arg(long, value_enum, default_value_t = LowIndexArg::Auto)]
    low_index: LowIndexArg,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    pairs: PairArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LowIndexArg {
    Auto,
    Never,
}

pub fn run(args: Args, cancel: faithful::Cancel) -> Result<()> {
    if let Some(t) = args.threads {
        faithful::evaluate::check_threads(t)?;
    }
    let (high, lows, labels) = args.input.read()?;
    let specs = if args.specs.is_empty() {
        default_specs(labels.is_some())
    } else {
        args.specs.iter().map(|s| s.parse::<Spec>()).collect::<Result<Vec<_>>>()?
    };
    let opts = args.backend.apply({
        let mut o = Options::default();
        o.threads = args.threads;
        o.block_rows = args.block_rows as usize;
        o.local = args.local;
        o.low_index = match args.low_index {
            LowIndexArg::Auto => LowIndex::Auto,
            LowIndexArg::Never => LowIndex::Never,
        };
        o
    });
    let mut opts = args.pairs.apply(opts);
    opts.cancel = Some(cancel);
    let bar = progress_bar();
    opts.progress = bar.as_ref().map(|(_, f)| f.clone());
    let eval = Evaluator::new(high, opts);
    let lows: Vec<&Points> = lows.iter().collect();
    let result = eval.measure_many(&lows, labels.as_ref(), &specs);
    if let Some((b, _)) = bar {
        b.finish_and_clear();
    }
    let result = result?;
    if args.json {
        output::print(&(serde_json::to_string(&result).expect("results serialise") + "\n"))
    } else {
        output::print(&table::results_table(eval.high().name(), &result))
    }
}
