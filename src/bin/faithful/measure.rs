//! `faithful measure`.

use faithful::evaluate::default_specs;
use faithful::{Evaluator, LowIndex, Points, Result, Spec};

use crate::output;
use crate::pair_args::show_progress;
use crate::run_args::RunArgs;
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
    /// The exact spatial index for projections of dimension ≤ 3 (k-d tree): auto uses it
    /// where it serves, never computes full distance rows. Results are identical either way;
    /// run.plan.low_index says which served.
    #[arg(long, value_enum, default_value_t = LowIndexArg::Auto)]
    low_index: LowIndexArg,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LowIndexArg {
    Auto,
    Never,
}

pub fn run(args: Args, cancel: faithful::Cancel) -> Result<()> {
    let mut opts = args.run.options(cancel)?;
    let (high, lows, labels) = args.input.read()?;
    let specs = if args.specs.is_empty() {
        default_specs(labels.is_some())
    } else {
        args.specs.iter().map(|s| s.parse::<Spec>()).collect::<Result<Vec<_>>>()?
    };
    opts.local = args.local;
    opts.low_index = match args.low_index {
        LowIndexArg::Auto => LowIndex::Auto,
        LowIndexArg::Never => LowIndex::Never,
    };
    let bar = show_progress(&mut opts);
    let eval = Evaluator::new(high, opts);
    let lows: Vec<&Points> = lows.iter().collect();
    let result = eval.measure_many(&lows, labels.as_ref(), &specs);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let result = result?;
    if args.json {
        output::print(&(serde_json::to_string(&result).expect("results serialise") + "\n"))
    } else {
        output::print(&table::results_table(eval.high().name(), &result))
    }
}
