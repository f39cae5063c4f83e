//! `faithful shard`, `faithful fold` and `faithful plan`: row-block shards for array jobs with
//! no framework (issue 16). Each task writes one block's partial; `fold` joins them into the
//! same results, bit for bit, as `faithful measure --local`.

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use faithful::gpu::GpuRequest;
use faithful::shard::{Partial, plan};
use faithful::{Error, Evaluator, Options, Points, Result, Spec, data};

use crate::backend_args::BackendArg;
use crate::output;
use crate::space_args::{HighInputArgs, MetricArgs, read_high};
use crate::table;

#[derive(clap::Args)]
pub struct ShardArgs {
    /// Original space, n×D (.npy float64/float32 or headerless .csv).
    #[arg(long, group = "high_input", required_unless_present = "high_distances")]
    high: Option<PathBuf>,
    #[command(flatten)]
    metric: MetricArgs,
    /// The original space as its n×n distance matrix (.npy), instead of --high.
    #[arg(long, value_name = "PATH", group = "high_input", conflicts_with = "metric")]
    high_distances: Option<PathBuf>,
    /// The projection, n×d.
    #[arg(long)]
    low: PathBuf,
    /// One integer label per point (.npy or .csv).
    #[arg(long)]
    labels: Option<PathBuf>,
    /// The block A:B (rows A to B − 1), one line of `faithful plan`.
    #[arg(long, value_parser = parse_rows)]
    rows: Range<usize>,
    /// A measure: ID[:P=V[,P=V]...]; repeat for several (tnc, mrre, lcmc, nh, ca_tnc).
    #[arg(long = "spec", value_name = "SPEC", required = true)]
    specs: Vec<String>,
    /// Where to write the partial (JSON; by convention part-NNN.fpart).
    #[arg(long)]
    out: PathBuf,
    /// Worker threads, at most 1024 (default, or 0: all cores). The partial does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Which backend builds the block's neighbours and ranks: auto (GPU for a hardware adapter
    /// and a block of rows × n pairs large enough), cpu, gpu (a wgpu adapter, or exit 3). A
    /// shard is always exact; its scores do not depend on the backend, which the partial names.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Use the first GPU adapter whose name contains this (see `faithful backends`).
    #[arg(long, value_name = "SUBSTR")]
    adapter: Option<String>,
}

#[derive(clap::Args)]
pub struct FoldArgs {
    /// The partials of every block, in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct PlanArgs {
    /// Points.
    #[arg(long)]
    n: usize,
    /// Rows per block at most (blocks of up to 128 rows are never split).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_rows: u64,
}

fn parse_rows(text: &str) -> std::result::Result<Range<usize>, String> {
    let (a, b) = text.split_once(':').ok_or("rows are written A:B")?;
    let num = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("{s:?} is not a row number"));
    Ok(num(a)?..num(b)?)
}

pub fn shard(args: ShardArgs) -> Result<()> {
    if let Some(t) = args.threads {
        faithful::evaluate::check_threads(t)?;
    }
    let inputs = HighInputArgs { high_distances: args.high_distances.clone(), ..Default::default() };
    let (high, _) = read_high(args.high.as_deref(), &inputs, &args.metric)?.expect("clap requires an input");
    let low: Points = data::read_points(&args.low)?;
    let labels = args.labels.as_ref().map(data::read_labels).transpose()?;
    if let (Some(l), Some(path)) = (&labels, &args.labels) {
        l.check_len(high.n()).map_err(|e| e.in_file(path))?;
    }
    let specs = args.specs.iter().map(|s| s.parse::<Spec>()).collect::<Result<Vec<_>>>()?;
    let mut opts = Options::default();
    opts.threads = args.threads;
    opts.backend = args.backend.into();
    opts.gpu = GpuRequest { adapter: args.adapter.clone(), ..opts.gpu };
    let part = Evaluator::new(high, opts).map_rows(&low, labels.as_ref(), args.rows, &specs)?;
    output::write_file(&args.out, |w| w.write_all(part.to_json().as_bytes()))
}

pub fn fold(args: FoldArgs) -> Result<()> {
    let parts = args.parts.iter().map(|p| read_partial(p)).collect::<Result<Vec<_>>>()?;
    let result = faithful::fold(&parts)?;
    if args.json {
        output::print(&(serde_json::to_string(&result).expect("results serialise") + "\n"))
    } else {
        output::print(&table::results_table("(folded from partials)", &result))
    }
}

pub fn plan_blocks(args: PlanArgs) -> Result<()> {
    if args.n < 2 {
        return Err(Error::TooFewPoints { name: "--n".into(), n: args.n });
    }
    let lines: String =
        plan(args.n, args.max_rows as usize).iter().map(|b| format!("{}:{}\n", b.start, b.end)).collect();
    output::print(&lines)
}

/// Reads one partial: a regular file only (never a FIFO or device that could block), read to
/// its size, JSON of the current version.
fn read_partial(path: &Path) -> Result<Partial> {
    let what = path.display().to_string();
    let bad = |reason: String| Error::BadPartial { what: faithful::quote::escaped(&what), reason };
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it ({e})")))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(meta.len()).read_to_string(&mut text))
        .map_err(|e| bad(format!("cannot read it as text ({e})")))?;
    Partial::from_json(&text, &faithful::quote::escaped(&what))
}
