//! `faithful measure`.

use std::path::PathBuf;

use faithful::evaluate::default_specs;
use faithful::{Error, Evaluator, LowIndex, Options, Points, Result, Spec, data, example};

use crate::arg_errors::{whole, whole_usize};
use crate::backend_args::BackendArgs;
use crate::output;
use crate::pair_args::{PairArgs, progress_bar};
use crate::space_args::{HighInputArgs, MetricArgs, read_high};
use crate::table;

#[derive(clap::Args)]
pub struct Args {
    /// Original space, n×D (.npy float64/float32 or headerless .csv).
    #[arg(long, requires = "low", group = "high_input")]
    high: Option<PathBuf>,
    /// A projection, n×d; repeat for several.
    #[arg(long, requires = "high_input")]
    low: Vec<PathBuf>,
    #[command(flatten)]
    metric: MetricArgs,
    #[command(flatten)]
    inputs: HighInputArgs,
    /// One integer label per point (.npy or .csv).
    #[arg(long)]
    labels: Option<PathBuf>,
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
    let (high, lows, labels) = match read_high(args.high.as_deref(), &args.inputs, &args.metric)? {
        Some((high, _)) => {
            let lows = args.low.iter().map(data::read_points).collect::<Result<Vec<Points>>>()?;
            let labels = args.labels.as_ref().map(data::read_labels).transpose()?;
            if let Some(l) = &labels {
                l.check_len(high.n()).map_err(|e| e.in_file(args.labels.clone().unwrap_or_default()))?;
            }
            (high, lows, labels)
        }
        None => {
            if args.labels.is_some() {
                return Err(Error::LabelsWithoutData);
            }
            let ex = example::digits();
            (ex.high, ex.projections, Some(ex.labels))
        }
    };
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

/// The original space, projections and labels from the files, or the bundled digits example
/// (its PCA and random projections, with labels) when no files are given.
pub fn inputs(
    high: Option<&PathBuf>,
    low: &[PathBuf],
    labels: Option<&PathBuf>,
) -> Result<(Points, Vec<Points>, Option<faithful::Labels>)> {
    match high {
        Some(path) => {
            let high = data::read_points(path)?;
            let lows = low.iter().map(data::read_points).collect::<Result<Vec<Points>>>()?;
            let read = labels.map(data::read_labels).transpose()?;
            if let Some(l) = &read {
                l.check_len(high.n()).map_err(|e| e.in_file(labels.cloned().unwrap_or_default()))?;
            }
            Ok((high, lows, read))
        }
        None => {
            if labels.is_some() {
                return Err(Error::LabelsWithoutData);
            }
            let ex = example::digits();
            Ok((ex.high, ex.projections, Some(ex.labels)))
        }
    }
}
