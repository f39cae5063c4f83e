//! `faithful shard`, `faithful fold` and `faithful plan`: row-block shards for array jobs with
//! no framework (issue 16). Each task writes one block's partial; `fold` joins them into the
//! same results, bit for bit, as `faithful measure --local`.

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};

use faithful::gpu::GpuRequest;
use faithful::shard::{Partial, plan_each};
use faithful::{Error, Evaluator, Options, Points, Result, Spec, data};

use crate::arg_errors::{whole, whole_usize};
use crate::backend_args::BackendArg;
use crate::output;
use crate::space_args::{HighInputArgs, MetricArgs, input_files, read_high};
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
    #[arg(long, allow_hyphen_values = true, value_parser = parse_rows)]
    rows: Range<usize>,
    /// A measure: ID[:P=V[,P=V]...]; repeat for several (tnc, mrre, lcmc, nh, ca_tnc).
    #[arg(long = "spec", value_name = "SPEC", required = true)]
    specs: Vec<String>,
    /// Where to write the partial (JSON; by convention part-NNN.fpart).
    #[arg(long)]
    out: PathBuf,
    /// Worker threads, at most 1024 (default, or 0: all cores). The partial does not depend on it.
    #[arg(long, allow_hyphen_values = true, value_parser = whole_usize(0, usize::MAX))]
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
    /// The most memory the partials and their fold may take, e.g. 2G; a partial that would
    /// take more is refused before it is read whole. Default: the smaller of half the physical
    /// memory and the process's limits.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::pair_args::parse_bytes)]
    memory_budget: Option<u64>,
}

#[derive(clap::Args)]
pub struct PlanArgs {
    /// Points (2 to 2^32, the most a run holds).
    #[arg(long, allow_hyphen_values = true, value_parser = whole_usize(2, usize::MAX))]
    n: usize,
    /// Rows per block at most (blocks of up to 128 rows are never split).
    #[arg(long, allow_hyphen_values = true, value_parser = whole(1, u64::MAX))]
    max_rows: u64,
}

fn parse_rows(text: &str) -> std::result::Result<Range<usize>, String> {
    let expected = "expected A:B, rows A to B − 1 (a line of faithful plan)";
    let (a, b) = text.split_once(':').ok_or(expected)?;
    let num = whole_usize(0, usize::MAX);
    let (a, b) = (num(a).map_err(|_| expected)?, num(b).map_err(|_| expected)?);
    Ok(a..b)
}

pub fn shard(args: ShardArgs) -> Result<()> {
    if let Some(t) = args.threads {
        faithful::evaluate::check_threads(t)?;
    }
    let inputs = HighInputArgs { high_distances: args.high_distances.clone(), ..Default::default() };
    // The output is checked before any work: a block's work must not end in an unwritable
    // path, nor overwrite an input.
    let lows = std::slice::from_ref(&args.low);
    let files = input_files(args.high.as_deref(), &inputs, lows, args.labels.as_deref());
    output::check_not_an_input("shard", "out", &args.out, &files)?;
    output::check_writable(&args.out)?;
    crate::space_args::rows_agree(args.high.as_deref(), &inputs, lows, args.labels.as_deref())?;
    let (high, _) = read_high(args.high.as_deref(), &inputs, &args.metric)?.expect("clap requires an input");
    let low: Points = crate::space_args::read_low(&args.low, high.n())?;
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

/// Bytes per number a fold may hold: the partial's value (8 bytes) while its list grows (the
/// old list and the new one of twice its length are held at once: 3 × 8 at the last growth),
/// its copy in the folded result, and the table's sorted copy of one local key for its
/// summary.
const FOLD_BYTES_PER_VALUE: u64 = 5 * 8;

pub fn fold(args: FoldArgs) -> Result<()> {
    let budget = args.memory_budget.unwrap_or_else(faithful::resources::default_memory_budget);
    let mut values = budget / FOLD_BYTES_PER_VALUE;
    let parts = args.parts.iter().map(|p| read_partial(p, &mut values)).collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = args.parts.iter().map(|p| faithful::quote::escaped(&p.display().to_string())).collect();
    let result = faithful::shard::fold_named(&parts, &names)?;
    drop(parts);
    if args.json {
        // Streamed: the folded local values are never one string in memory.
        output::print_with(|w| {
            serde_json::to_writer(&mut *w, &result).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    } else {
        output::print(&table::results_table("(folded from partials)", &result))
    }
}

/// The most points a run can hold: neighbour indices are 32-bit.
const MAX_POINTS: u64 = 1 << 32;

/// Streams the plan's blocks to stdout as they are made (memory O(log n), whatever their
/// number; `| head` stops it quietly).
pub fn plan_blocks(args: PlanArgs) -> Result<()> {
    if args.n as u64 > MAX_POINTS {
        return Err(Error::BadParam {
            id: "plan".into(),
            param: "--n".into(),
            value: args.n.to_string(),
            reason: "above 2^32 points, the most a run holds (neighbour indices are 32-bit)".into(),
        });
    }
    let max_rows = usize::try_from(args.max_rows).unwrap_or(usize::MAX);
    output::print_with(|w| plan_each(args.n, max_rows, &mut |b| writeln!(w, "{}:{}", b.start, b.end)))
}

/// Reads one partial: a regular file only (never a FIFO or device that could block), never
/// past the size it had when opened, its first bytes checked before the rest is read and its
/// numbers counted against `values` (what the memory budget still allows) before they are
/// held ([`Partial::from_reader`]).
fn read_partial(path: &Path, values: &mut u64) -> Result<Partial> {
    let what = faithful::quote::escaped(&path.display().to_string());
    let bad = |reason: String| Error::BadPartial { what: what.clone(), reason };
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read it ({e})")))?;
    if !meta.is_file() {
        return Err(bad("not a regular file".into()));
    }
    Partial::from_reader(|| std::fs::File::open(path).map(|f| f.take(meta.len())), &what, values)
}
