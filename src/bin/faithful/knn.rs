//! `faithful knn`: the exact kNN graph (or, with `--numerics fast` on a GPU, its f32 order,
//! labelled so), a product of its own for UMAP/t-SNE pipelines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use faithful::{Error, Evaluator, Options, Result, data};

use crate::arg_errors::whole_usize;
use crate::backend_args::BackendArgs;
use crate::output;
use crate::space_args::{HighInputArgs, MetricArgs, read_high};

#[derive(clap::Args)]
pub struct Args {
    /// Points, n×D (.npy float64/float32 or headerless .csv).
    #[arg(long, group = "high_input", required_unless_present = "high_distances")]
    data: Option<PathBuf>,
    #[command(flatten)]
    metric: MetricArgs,
    /// The points as their n×n distance matrix (.npy), instead of --data.
    #[arg(long, value_name = "PATH", group = "high_input", conflicts_with = "metric")]
    high_distances: Option<PathBuf>,
    /// Neighbours per point (1 <= k < n).
    #[arg(long, allow_hyphen_values = true, value_parser = whole_usize(1, usize::MAX))]
    k: usize,
    /// Write the n×k int64 neighbour indices here (.npy).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write the n×k float64 distances here (.npy).
    #[arg(long)]
    distances: Option<PathBuf>,
    /// Print one JSON object: n, k, indices, distances and the run report.
    #[arg(long)]
    json: bool,
    /// The most memory the neighbour lists may take (n·k·12 bytes), e.g. 2G; checked before
    /// any work. Default: half the physical memory, at most what the process's limits leave.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::pair_args::parse_bytes)]
    memory_budget: Option<u64>,
    #[command(flatten)]
    backend: BackendArgs,
}

pub fn run(args: Args) -> Result<()> {
    // One file for both would keep only the distances, written second: refused before any work.
    if let (Some(a), Some(b)) = (&args.out, &args.distances)
        && output::same_target(a, b)
    {
        return Err(Error::BadParam {
            id: "knn".into(),
            param: "--distances".into(),
            value: b.display().to_string(),
            reason: "is the --out file too (the indices would be overwritten); give two paths".into(),
        });
    }
    let inputs = HighInputArgs { high_distances: args.high_distances.clone(), ..Default::default() };
    // Outputs are checked before any work: never an input overwritten, never an unwritable path
    // found after the search.
    let mut files: Vec<(&str, &Path)> = args.data.iter().map(|p| ("data", p.as_path())).collect();
    files.extend(inputs.files());
    for (flag, out) in [("out", &args.out), ("distances", &args.distances)] {
        if let Some(out) = out {
            output::check_not_an_input("knn", flag, out, &files)?;
            output::check_writable(out)?;
        }
    }
    let (points, path) = read_high(args.data.as_deref(), &inputs, &args.metric)?.expect("clap requires an input");
    let n = points.n();
    let eval = Evaluator::new(
        points,
        args.backend.apply({
            let mut o = Options::default();
            o.memory_budget = args.memory_budget;
            o
        }),
    );
    let (nb, run) = eval.knn(args.k).map_err(|e| match e {
        Error::KOutOfRange { .. } => e.in_file(&path),
        other => other,
    })?;
    let k = nb.k;
    if let Some(p) = &args.out {
        output::write_file(p, |w| data::write_npy(w, n, k, nb.idx.iter().map(|&j| i64::from(j))))?;
    }
    if let Some(p) = &args.distances {
        output::write_file(p, |w| data::write_npy(w, n, k, nb.dist.iter().copied()))?;
    }
    if args.json {
        let rows = |f: &dyn Fn(usize) -> serde_json::Value| (0..n).map(f).collect::<Vec<_>>();
        let body = serde_json::json!({
            "n": n,
            "k": k,
            "indices": rows(&|i| serde_json::json!(nb.row(i, k))),
            "distances": rows(&|i| serde_json::json!(nb.dist_row(i, k))),
            "run": run,
        });
        output::print(&format!("{body}\n"))
    } else {
        // The header says what the lists are: "exact" only for the reference's lists.
        let what = if run.numerics == "fast" { "fast (the GPU's f32 order, not certified exact)" } else { "exact" };
        let mut text = format!(
            "{what} {k}-NN of {n} points: backend {} ({} numerics), {:.3} s\n",
            run.backend, run.numerics, run.timings.total_s
        );
        for i in 0..n.min(5) {
            let _ = writeln!(text, "  {i}: {:?}", nb.row(i, k));
        }
        if args.out.is_none() {
            let _ = writeln!(text, "(use --out PATH.npy to save the n×{k} indices, --distances for the distances)");
        }
        output::print(&text)
    }
}
