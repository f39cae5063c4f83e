//! `faithful knn`: the exact kNN graph, a product of its own for UMAP/t-SNE pipelines.

use std::path::PathBuf;

use faithful::{data, Error, Evaluator, FileProblem, Options, Result};
use ndarray::Array2;
use ndarray_npy::WriteNpyExt;

use crate::backend_args::BackendArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Points, n×D (.npy float64/float32 or headerless .csv).
    #[arg(long)]
    data: PathBuf,
    /// Neighbours per point (1 <= k < n).
    #[arg(long)]
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
    /// any work. Default: half the physical memory.
    #[arg(long, value_name = "BYTES", value_parser = crate::pair_args::parse_bytes)]
    memory_budget: Option<u64>,
    #[command(flatten)]
    backend: BackendArgs,
}

fn write_npy<T: ndarray_npy::WritableElement>(path: &PathBuf, a: &Array2<T>) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|e| Error::File { path: path.clone(), problem: FileProblem::Io(e) })?;
    a.write_npy(std::io::BufWriter::new(file)).map_err(|e| Error::File { path: path.clone(), problem: FileProblem::Npy(e.to_string()) })
}

pub fn run(args: Args) -> Result<()> {
    let points = data::read_points(&args.data)?;
    let n = points.n();
    let eval = Evaluator::new(points, args.backend.apply(Options { memory_budget: args.memory_budget, ..Options::default() }));
    let (nb, run) = eval.knn(args.k).map_err(|e| match e {
        Error::KOutOfRange { .. } => e.in_file(&args.data),
        other => other,
    })?;
    let k = nb.k;
    let idx = Array2::from_shape_fn((n, k), |(i, s)| i64::from(nb.idx[i * k + s]));
    let dist = Array2::from_shape_fn((n, k), |(i, s)| nb.dist[i * k + s]);
    if let Some(p) = &args.out {
        write_npy(p, &idx)?;
    }
    if let Some(p) = &args.distances {
        write_npy(p, &dist)?;
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
        println!("{body}");
    } else {
        println!("exact {k}-NN of {n} points: backend {} ({} numerics), {:.3} s", run.backend, run.numerics, run.timings.total_s);
        for i in 0..n.min(5) {
            println!("  {i}: {:?}", nb.row(i, k));
        }
        if args.out.is_none() {
            println!("(use --out PATH.npy to save the n×{k} indices, --distances for the distances)");
        }
    }
    Ok(())
}
