//! `faithful bench`: the kernel suite (distances, kNN, ranks, pair statistics, a whole
//! evaluation) on the CPU reference and every GPU adapter, cold and warm, each GPU result checked
//! against the CPU reference; a table on stdout and a JSON receipt.

use std::io::IsTerminal;
use std::path::PathBuf;

use faithful::bench::kernels::{self, Backend, Case, Check, Kernel, Outcome};
use faithful::bench::{blobs, machine, peaks};
use faithful::gpu::{GpuError, KernelSet, Refine, adapters_report};
use faithful::{Error, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use faithful::bench::receipt::{AdapterEntry, Receipt, Row, Settings};

use crate::arg_errors::whole;

/// Which backends to benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    All,
    Cpu,
    Gpu,
}

/// `--kernels`: the command line's names for the library's [`Kernel`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelArg {
    /// Distance rows of a block of points (GPU: f32 with proven bounds).
    Distances,
    /// The exact kNN graph of the original space.
    Knn,
    /// The projection's kNN and the cross-space ranks (original kNN given).
    Ranks,
    /// Pair statistics: stress and Pearson's r over all pairs.
    Pairs,
    /// A whole tnc + mrre + lcmc evaluation.
    Evaluation,
}

/// `--kernel-sets`: the command line's names for [`KernelSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelSetArg {
    /// `distances_tiled.wgsl`: tiles of rows and points staged in workgroup memory.
    Tiled,
    /// `distances.wgsl`: one invocation per (row, point).
    Classic,
}

/// `--gpu-refine`: the command line's names for [`Refine`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RefineArg {
    /// `reference::distance_pair` on the host.
    Host,
    /// `exact_sqdist.wgsl` on the device, the roots on the host.
    Device,
}

impl From<RefineArg> for Refine {
    fn from(r: RefineArg) -> Refine {
        match r {
            RefineArg::Host => Refine::Host,
            RefineArg::Device => Refine::Device,
        }
    }
}

impl From<KernelSetArg> for KernelSet {
    fn from(k: KernelSetArg) -> KernelSet {
        match k {
            KernelSetArg::Tiled => KernelSet::Tiled,
            KernelSetArg::Classic => KernelSet::Classic,
        }
    }
}

impl From<KernelArg> for Kernel {
    fn from(k: KernelArg) -> Kernel {
        match k {
            KernelArg::Distances => Kernel::Distances,
            KernelArg::Knn => Kernel::Knn,
            KernelArg::Ranks => Kernel::Ranks,
            KernelArg::Pairs => Kernel::Pairs,
            KernelArg::Evaluation => Kernel::Evaluation,
        }
    }
}

/// The most points a row may have: neighbour indices are 32-bit.
const MAX_N: u64 = u32::MAX as u64;
/// The most dimensions: the GPU's certified domain ends at D = 2^22 (docs/exactness.md).
const MAX_DIM: u64 = (1 << 22) - 1;
/// The most warm runs per row.
const MAX_REPEAT: u64 = 10_000;
/// The most kernel runs one bench may make (rows × backends × (repeat + 1)).
const MAX_RUNS: u64 = 1_000_000;

#[derive(clap::Args)]
pub struct Args {
    /// Numbers of points, comma-separated (3 to 2^32 − 1).
    #[arg(long, value_delimiter = ',', default_value = "1000,2000", allow_hyphen_values = true, value_parser = whole(3, MAX_N))]
    sizes: Vec<u64>,
    /// Dimensions of the original space, comma-separated (2 to 2^22 − 1; the projection is its
    /// first 2 coordinates).
    #[arg(long, value_delimiter = ',', default_value = "20", allow_hyphen_values = true, value_parser = whole(2, MAX_DIM))]
    dims: Vec<u64>,
    /// Neighbours for knn and ranks (1 <= k < n) and the evaluation (k < n/2, tnc's rule).
    #[arg(long, default_value_t = 20, allow_hyphen_values = true, value_parser = whole(1, MAX_N))]
    k: u64,
    /// all: the CPU and every GPU adapter; cpu; gpu (every adapter, or exit 3 when there is none).
    #[arg(long, value_enum, default_value_t = Which::All)]
    backend: Which,
    /// Only adapters whose name contains this (case-insensitive).
    #[arg(long, value_name = "SUBSTR")]
    adapter: Option<String>,
    /// Kernels to run, comma-separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    kernels: Vec<KernelArg>,
    /// Warm runs per row (1 to 10000); the warm time is their median.
    #[arg(long, default_value_t = 3, allow_hyphen_values = true, value_parser = whole(1, MAX_REPEAT))]
    repeat: u64,
    /// Seed of the blobs data.
    #[arg(long, default_value_t = 42, allow_hyphen_values = true, value_parser = whole(0, u64::MAX))]
    seed: u64,
    /// The most memory one row may plan for (its data, neighbour lists, scratch), e.g. 2G;
    /// checked for every size and dimension before anything is allocated. Default: the
    /// smaller of half the physical memory and the process's limits.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::pair_args::parse_bytes)]
    memory_budget: Option<u64>,
    /// GPU squared-distance kernel sets to run, comma-separated: tiled (the default), classic
    /// (the one-invocation-per-pair kernel), or both side by side.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "tiled")]
    kernel_sets: Vec<KernelSetArg>,
    /// GPU memory for the row blocks' resident distances (two blocks in flight, each with both
    /// spaces), e.g. 8G; larger blocks fill a large GPU. Default 2G; each buffer stays within
    /// the adapter's binding limit.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = crate::pair_args::parse_bytes)]
    gpu_resident: Option<u64>,
    /// GPU points per tile: stream the pass as row blocks × point tiles of this many points
    /// (at least 2k + 2) instead of whole rows. By default a pass streams only when whole rows
    /// would give blocks of fewer than 1 024 rows and two tiles of at least 16 384 points fit
    /// (n above 262 144 with the default 1 GiB buffer).
    #[arg(long, value_name = "POINTS", allow_hyphen_values = true, value_parser = whole(1, u64::from(u32::MAX)))]
    gpu_point_tile: Option<u64>,
    /// Where the GPU's undecided pairs get their f64 distances: host (the default) or device
    /// (their sums of squares in emulated binary64 on the GPU, `exact_sqdist`; Euclidean
    /// spaces of the row plan, else the host, with the reason in the receipt).
    #[arg(long, value_enum, default_value = "host")]
    gpu_refine: RefineArg,
    /// Write the JSON receipt here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    #[command(flatten)]
    metric: crate::space_args::MetricArgs,
}

/// The adapters to run: by name filter, one per name (`GpuRequest::adapter` selects by name, so
/// a second adapter of the same name could not be started; it is listed with the reason).
fn adapters(args: &Args) -> Vec<AdapterEntry> {
    let want = args.adapter.as_ref().map(|s| s.to_lowercase());
    let mut seen: Vec<String> = Vec::new();
    // The listing's verdict, by position (one enumeration order): an adapter whose device
    // cannot be created is skipped with the reason, not benchmarked into error rows.
    let usable = faithful::gpu_adapters();
    adapters_report()
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let unusable = usable
                .get(i)
                .filter(|u| (&u.name, &u.backend) == (&a.name, &a.backend))
                .and_then(|u| u.unusable.clone());
            let skipped = if want.as_ref().is_some_and(|w| !a.name.to_lowercase().contains(w)) {
                Some(format!("name does not contain '{}'", args.adapter.as_deref().unwrap_or_default()))
            } else if let Some(why) = unusable {
                Some(format!("not usable: {why}"))
            } else if seen.contains(&a.name) {
                Some("same name as an adapter listed before it (adapters are chosen by name; run with WGPU_BACKEND=<api> to bench this one)".to_string())
            } else {
                seen.push(a.name.clone());
                None
            };
            AdapterEntry { known_peak_tflops: peaks::peak_tflops(&a.name), benchmarked: skipped.is_none(), skipped, report: a }
        })
        .collect()
}

fn progress(total: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:>36} [{bar:40}] {pos}/{len} ({elapsed})")
            .expect("template")
            .progress_chars("=> "),
    );
    Some(bar)
}

/// Cold run, then `repeat` warm runs on the same backend.
fn runs(
    kernel: Kernel,
    backend: &mut Backend,
    case: &Case,
    repeat: u64,
    bar: Option<&ProgressBar>,
) -> Result<Vec<Outcome>> {
    let mut out = Vec::new();
    for _ in 0..=repeat {
        out.push(kernels::run(kernel, backend, case)?);
        if let Some(b) = bar {
            b.inc(1);
        }
    }
    Ok(out)
}

pub fn run(args: Args) -> Result<()> {
    let metric = args.metric.metric()?;
    let kernel_list: Vec<Kernel> =
        if args.kernels.is_empty() { Kernel::ALL.to_vec() } else { args.kernels.iter().map(|&k| k.into()).collect() };
    let machine = machine::Machine::detect();
    let adapters = if args.backend == Which::Cpu { Vec::new() } else { adapters(&args) };
    let gpus: Vec<&AdapterEntry> = adapters.iter().filter(|a| a.benchmarked).collect();
    if args.backend == Which::Gpu && gpus.is_empty() {
        let what = args.adapter.as_ref().map_or(String::new(), |a| format!(" whose name contains '{a}'"));
        return Err(GpuError::NoAdapter(format!("wgpu found no adapter{what} (see `faithful backends`)")).into());
    }
    check_sizes(&args, &kernel_list, threads())?;
    // The receipt's path is checked before the work, not after it.
    if let Some(path) = &args.json {
        crate::output::check_writable(path)?;
    }
    let cpu_label = machine.cpu_model.clone().unwrap_or_else(|| "cpu".into());
    // (label, adapter name for the request, peak, kernel set) per backend; the CPU first, so
    // it is the reference; each adapter once per kernel set.
    let mut targets: Vec<(String, Option<String>, Option<f64>, KernelSet)> = Vec::new();
    if args.backend != Which::Gpu {
        targets.push((cpu_label.clone(), None, None, KernelSet::default()));
    }
    for a in &gpus {
        for &set in &args.kernel_sets {
            targets.push((a.report.name.clone(), Some(a.report.name.clone()), a.known_peak_tflops, set.into()));
        }
    }
    let steps = [args.sizes.len(), args.dims.len(), kernel_list.len(), targets.len()]
        .into_iter()
        .try_fold(args.repeat + 1, |acc, f| acc.checked_mul(f as u64))
        .filter(|&s| s <= MAX_RUNS)
        .ok_or_else(|| Error::BadParam {
            id: "bench".into(),
            param: "--repeat".into(),
            value: args.repeat.to_string(),
            reason: format!(
                "{} sizes × {} dims × {} kernels × {} backends × (repeat + 1) runs is above the limit of {MAX_RUNS} runs",
                args.sizes.len(),
                args.dims.len(),
                kernel_list.len(),
                targets.len()
            ),
        })?;
    let bar = progress(steps);
    let k = args.k as usize;
    let mut rows = Vec::new();
    for &n in &args.sizes {
        for &dim in &args.dims {
            let mut data = blobs(n as usize, dim as usize, args.seed);
            if let Some(m) = metric {
                data.high = data.high.with_metric(m)?;
            }
            // The GPU serves the certified metrics (euclidean, sqeuclidean, cosine, correlation,
            // cityblock, chebyshev); the others (minkowski of another p) are the CPU's, and
            // their GPU rows say why.
            let gpu_skip = faithful::gpu::domain::metric_unsupported(&data.high);
            let case = Case::new(&data, k);
            for &kernel in &kernel_list {
                let mut reference: Option<Check> = None;
                if args.backend == Which::Gpu && kernel != Kernel::Distances {
                    reference = Some(kernels::run(kernel, &mut Backend::Cpu, &case)?.check);
                }
                for (label, adapter, peak, set) in &targets {
                    let gpu = adapter.is_some();
                    if let Some(b) = &bar {
                        b.set_message(format!("{} {} n={n} D={dim}", if gpu { "gpu" } else { "cpu" }, kernel.name()));
                    }
                    if let (true, Some(why)) = (gpu, &gpu_skip) {
                        let mut row = Row::new("gpu", label, None, kernel, n as usize, dim as usize, data.low.dim(), k);
                        row.parity = "skipped".into();
                        row.error = Some(format!("{why}; the CPU reference serves it"));
                        if let Some(b) = &bar {
                            b.inc(args.repeat + 1);
                        }
                        rows.push(row);
                        continue;
                    }
                    let mut backend = if gpu { Backend::gpu_with(adapter.clone(), *set) } else { Backend::Cpu };
                    if let Backend::Gpu { request, .. } = &mut backend {
                        request.resident_bytes = args.gpu_resident;
                        request.point_tile = args.gpu_point_tile.map(|w| w as u32);
                        request.refine = args.gpu_refine.into();
                    }
                    let rss_reset = machine::reset_peak_rss();
                    let result = runs(kernel, &mut backend, &case, args.repeat, bar.as_ref());
                    let peak_rss = machine::peak_rss_bytes();
                    let api = backend.device().map(|g| g.report.backend.clone());
                    drop(backend);
                    let mut row = Row::new(
                        if gpu { "gpu" } else { "cpu" },
                        label,
                        api,
                        kernel,
                        n as usize,
                        dim as usize,
                        data.low.dim(),
                        k,
                    );
                    row.peak_rss_bytes = peak_rss;
                    row.peak_rss_per_row = rss_reset;
                    row.peak_tflops = *peak;
                    if gpu {
                        row.kernel_set = Some(set.name());
                    }
                    match result {
                        Ok(outs) => {
                            row.record(&outs, gpu, &mut reference, kernel, data.low.dim());
                        }
                        Err(e) => {
                            row.parity = "error".into();
                            row.error = Some(e.to_string());
                            if let Some(b) = &bar {
                                b.inc(args.repeat + 1);
                            }
                        }
                    }
                    rows.push(row);
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let settings = Settings {
        command: std::env::args().collect::<Vec<_>>().join(" "),
        sizes: args.sizes.iter().map(|&n| n as usize).collect(),
        dims: args.dims.iter().map(|&d| d as usize).collect(),
        low_dim: 2,
        k,
        repeat: args.repeat as usize,
        seed: args.seed,
        kernels: kernel_list.iter().map(|k| k.name()).collect(),
        distance_block_pairs: kernels::DISTANCE_BLOCK_PAIRS,
        metric: metric.unwrap_or(faithful::Metric::Euclidean).to_string(),
    };
    let receipt = Receipt::new(machine, adapters, settings, rows);
    // The receipt first: a receipt that cannot be written fails the run before the table
    // claims it.
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&receipt).expect("receipt serialises") + "\n";
        crate::output::write_file(path, |w| w.write_all(text.as_bytes()))?;
    }
    crate::output::print(&receipt.table())?;
    let note = failure_note(&receipt.rows);
    if let Some(note) = note {
        crate::output::eprint(&format!("faithful bench: {note}\n"))?;
    }
    Ok(())
}

/// The note after a bench whose rows failed (the bench itself succeeded), naming the backend
/// whose rows failed: a CPU row's error is never blamed on "GPU results".
fn failure_note(rows: &[Row]) -> Option<&'static str> {
    let bad =
        |backend: &str| rows.iter().any(|r| r.backend == backend && (r.parity == "differs" || r.parity == "error"));
    match (bad("cpu"), bad("gpu")) {
        (false, false) => None,
        (true, false) => Some("some CPU rows failed (see the parity column and the receipt's error field)"),
        (false, true) => Some("some GPU results differ from the CPU reference or failed (see the parity column)"),
        (true, true) => Some("some CPU rows failed and some GPU results differ or failed (see the parity column)"),
    }
}

/// Rayon's worker threads (each holds a row's scratch).
fn threads() -> u64 {
    rayon::current_num_threads() as u64
}

/// Bytes one bench row of n points in `dim` dimensions may hold, over-estimated: the data (the
/// blobs, their copies for the kernels), both spaces' neighbour lists and cross ranks, each
/// worker's distance rows, the distance block; `None` when it overflows.
fn row_bytes(n: u64, dim: u64, k: u64, threads: u64) -> Option<u64> {
    let data = n.checked_mul(dim.checked_add(2)?)?.checked_mul(4 * 8)?;
    // Neighbours (index and distance, 12 bytes) in both spaces, cross ranks (24 bytes), twice.
    let lists = n.checked_mul(k)?.checked_mul(2 * (12 + 12 + 24))?;
    let scratch = n.checked_mul(threads)?.checked_mul(40)?;
    // The distance block holds min(n², DISTANCE_BLOCK_PAIRS) pairs (`kernels::distance_rows`
    // rows of n), not the cap: a small size must not be refused for a block it never fills.
    let block = n.saturating_mul(n).min(kernels::DISTANCE_BLOCK_PAIRS as u64) * 16;
    data.checked_add(lists)?.checked_add(scratch)?.checked_add(block)
}

/// Every size against k and every (size, dimension) row against the memory budget, before
/// anything is allocated.
fn check_sizes(args: &Args, kernels: &[Kernel], threads: u64) -> Result<()> {
    let budget = args.memory_budget.unwrap_or_else(faithful::resources::default_memory_budget);
    // The GPU's tiles and blocks as asked: below what a pass can use they would be raised
    // quietly, and the receipt would time another plan than the one asked for.
    let bad = |param: &str, value: u64, reason: String| Error::BadParam {
        id: "bench".into(),
        param: param.into(),
        value: value.to_string(),
        reason,
    };
    if let Some(t) = args.gpu_point_tile
        && t < 2 * args.k + 2
    {
        return Err(bad(
            "--gpu-point-tile",
            t,
            format!("out of range: need at least 2k + 2 = {} (k={})", 2 * args.k + 2, args.k),
        ));
    }
    if args.gpu_resident == Some(0) {
        return Err(bad("--gpu-resident", 0, "must be more than 0 bytes (the row blocks' resident distances)".into()));
    }
    // The evaluation runs tnc, whose normalisation needs k < n/2 (every other kernel k < n).
    let evaluation = kernels.contains(&Kernel::Evaluation);
    for &n in &args.sizes {
        let k_out = |rule: &str, more: &str| Error::BadParam {
            id: "bench".into(),
            param: "--k".into(),
            value: args.k.to_string(),
            reason: format!("out of range: need {rule} (n={n}){more}"),
        };
        if args.k >= n {
            return Err(k_out("1 <= k < n", ""));
        }
        if evaluation && 2 * args.k >= n {
            return Err(k_out(
                "1 <= k < n/2",
                " for the evaluation kernel (tnc); --kernels without evaluation allows k < n",
            ));
        }
        for &dim in &args.dims {
            let what = format!("a row of {n} points in {dim} dimensions (k={})", args.k);
            match row_bytes(n, dim, args.k, threads) {
                Some(bytes) if bytes <= budget => {}
                Some(bytes) => {
                    let (id, param, value) = ("bench".into(), "--sizes".into(), n.to_string());
                    return Err(Error::ParamMemory { id, param, value, what, bytes, budget });
                }
                None => {
                    return Err(Error::BadParam {
                        id: "bench".into(),
                        param: "--sizes".into(),
                        value: n.to_string(),
                        reason: format!("{what} needs more than 2^64 bytes"),
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: &'static str, parity: &str) -> Row {
        let mut r = Row::new(backend, "x", None, Kernel::Knn, 10, 2, 2, 3);
        r.parity = parity.into();
        r
    }

    #[test]
    fn a_failed_cpu_row_is_not_blamed_on_the_gpu() {
        assert_eq!(failure_note(&[row("cpu", "reference"), row("gpu", "identical")]), None);
        let cpu = failure_note(&[row("cpu", "error")]).unwrap();
        assert!(cpu.contains("CPU rows failed") && !cpu.contains("GPU"), "{cpu}");
        let gpu = failure_note(&[row("cpu", "reference"), row("gpu", "differs")]).unwrap();
        assert!(gpu.starts_with("some GPU results differ"), "{gpu}");
        let both = failure_note(&[row("cpu", "error"), row("gpu", "error")]).unwrap();
        assert!(both.contains("CPU rows failed") && both.contains("GPU results"), "{both}");
    }

    #[test]
    fn row_bytes_never_overflows() {
        assert_eq!(row_bytes(u64::MAX, u64::MAX, u64::MAX, 2), None);
        assert_eq!(row_bytes(MAX_N, MAX_DIM, MAX_N, 1024), None);
        assert!(row_bytes(1000, 20, 20, 2).is_some_and(|b| b > 1000 * 22 * 8));
        // A small size counts the block it fills (n² pairs), not the block's cap.
        assert!(row_bytes(100, 20, 5, 2).is_some_and(|b| b < 1 << 20));
        let big = row_bytes(100_000, 20, 5, 2).unwrap();
        assert!(big > (kernels::DISTANCE_BLOCK_PAIRS as u64) * 16, "{big}");
    }
}
