//! The kernel suite: each kernel on the CPU reference or on a GPU adapter, timed, with its work
//! count and what its parity against the CPU reference is judged on.
//!
//! | kernel | CPU | GPU |
//! |---|---|---|
//! | `distances` | `reference::distance_row` over a block of rows | `gpu::sqdist::bounded_sqdist` on the same block |
//! | `knn` | `Evaluator::knn` | the same on the adapter |
//! | `ranks` | `resources::row_pass` with `Needs::cross_with_dists(k)` (ranks and distances) and the original kNN given | `gpu::gpu_row_pass`, the same |
//! | `pairs` | stress + pr through the evaluator | the same (served by whatever the evaluator picks) |
//! | `evaluation` | tnc + mrre + lcmc through the evaluator | the same on the adapter |

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, OnceLock};
use web_time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::Blobs;
use crate::error::Result;
use crate::gpu::{Gpu, GpuRequest, GpuStats, KernelSet, gpu_row_pass_async, sqdist::bounded_sqdist_tally_async};
use crate::reference::distance_row;
use crate::resources::{Needs, Neighbours, ProjectionResources, row_pass};
use crate::{BackendChoice, Evaluator, Numerics, Options, Points, Spec};

/// One kernel of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
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

impl Kernel {
    pub const ALL: [Kernel; 5] = [Kernel::Distances, Kernel::Knn, Kernel::Ranks, Kernel::Pairs, Kernel::Evaluation];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Distances => "distances",
            Kernel::Knn => "knn",
            Kernel::Ranks => "ranks",
            Kernel::Pairs => "pairs",
            Kernel::Evaluation => "evaluation",
        }
    }
}

/// Most point pairs in one `distances` block (the GPU returns two f32 per pair).
pub const DISTANCE_BLOCK_PAIRS: usize = 1 << 24;

/// Rows of the `distances` block for n points.
pub fn distance_rows(n: usize) -> usize {
    (DISTANCE_BLOCK_PAIRS / n).clamp(1, n)
}

/// The work of one run: logical point pairs, and the distance evaluations done per dimension
/// (each costs 3·dim flops: a subtraction, a multiplication and an addition per coordinate).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Work {
    pub pairs: f64,
    pub flops: f64,
}

/// The work of `kernel` on n points in D (original) and d = 2 (projection) dimensions, the same
/// on the CPU and the GPU (`_gpu`): since issue 30 the GPU computes each space's distances once
/// per row block, as the CPU does per row (`gpu::pass`: the kNN and both directions' rank counts
/// read the same resident s̃; the kNN kernel's two passes re-read it without coordinate work).
pub fn work(kernel: Kernel, _gpu: bool, n: usize, dim: usize, low_dim: usize) -> Work {
    let (nf, df, lf) = (n as f64, dim as f64, low_dim as f64);
    let sq = nf * nf;
    let flops = |evals: f64, d: f64| evals * 3.0 * d;
    match kernel {
        Kernel::Distances => {
            let pairs = (distance_rows(n) * n) as f64;
            Work { pairs, flops: flops(pairs, df) }
        }
        Kernel::Knn => Work { pairs: sq, flops: flops(sq, df) },
        // One distance row per point in each space (the GPU: kNN of the projection and the ranks
        // in both spaces from the same resident rows).
        Kernel::Ranks => Work { pairs: sq, flops: flops(sq, df) + flops(sq, lf) },
        // The pair pass computes whole distance rows in both spaces (n² each).
        Kernel::Pairs => Work { pairs: nf * (nf - 1.0) / 2.0, flops: flops(sq, df) + flops(sq, lf) },
        Kernel::Evaluation => Work { pairs: sq, flops: flops(sq, df) + flops(sq, lf) },
    }
}

/// The CPU reference or one GPU adapter; the adapter is started by the first run (cold) and
/// kept for the next ones (warm).
// A handful exist per bench run: the larger GPU variant costs nothing worth boxing.
#[allow(clippy::large_enum_variant)]
pub enum Backend {
    Cpu,
    Gpu { request: GpuRequest, device: Option<Arc<Gpu>> },
}

impl Backend {
    /// A GPU backend for the adapter whose name contains `adapter` (not started yet).
    pub fn gpu(adapter: Option<String>) -> Self {
        Self::gpu_with(adapter, KernelSet::default())
    }
    /// [`Backend::gpu`] with the given squared-distance kernel set.
    pub fn gpu_with(adapter: Option<String>, kernels: KernelSet) -> Self {
        Backend::Gpu { request: GpuRequest { adapter, kernels, ..Default::default() }, device: None }
    }
    pub fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu { .. })
    }
    /// The started device, if any.
    pub fn device(&self) -> Option<&Arc<Gpu>> {
        match self {
            Backend::Gpu { device, .. } => device.as_ref(),
            Backend::Cpu => None,
        }
    }
}

/// How a run's output is judged against the CPU reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A digest of every output bit; equal digests mean identical outputs.
    Digest(u64),
    /// Judged on its own: the GPU distances, each within its proven bound of the f64 reference.
    Verdict(bool),
    /// Nothing to judge (the CPU distance rows are the reference itself).
    Reference,
}

/// One timed run.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Wall time of the kernel (device start and pipeline compilation included on a cold GPU run;
    /// data generation and the parity check excluded).
    pub seconds: f64,
    pub check: Check,
    /// Which backend served the output ("cpu", "gpu", or what the evaluator reported).
    pub served: String,
    /// Device start-up, seconds, when this run started the device.
    pub device_start_s: Option<f64>,
    /// Kernel time on the device from timestamp queries, when the adapter has them.
    pub device_kernel_s: Option<f64>,
    /// Where a GPU run's time went: per-kernel device times, submits, waits, readbacks, host
    /// refinement (the GPU stats of the run report).
    pub gpu: Option<GpuStats>,
}

/// The device kernel time of GPU stats, when timestamp queries measured it.
fn device_time(stats: Option<&GpuStats>) -> Option<f64> {
    stats.map(|g| g.transfers.kernel_gpu_s).filter(|&s| s > 0.0)
}

/// The GPU stats of a run report.
fn run_stats(run: &crate::RunReport) -> Option<GpuStats> {
    run.gpu.as_ref().map(|g| g.stats.clone())
}

/// One data set with what the kernels share: the original space's kNN for `ranks`.
pub struct Case<'a> {
    pub data: &'a Blobs,
    pub k: usize,
    high_knn: OnceLock<Neighbours>,
}

impl<'a> Case<'a> {
    pub fn new(data: &'a Blobs, k: usize) -> Self {
        Case { data, k, high_knn: OnceLock::new() }
    }
    /// The original space's exact kNN (built once, untimed, on the CPU).
    pub fn high_knn(&self) -> &Neighbours {
        self.high_knn.get_or_init(|| {
            row_pass(&self.data.high, None, &[], Needs { knn_high: self.k, ..Needs::default() }, 32)
                .high
                .expect("kNN built")
        })
    }
}

fn digest(parts: &[&dyn Fn(&mut DefaultHasher)]) -> u64 {
    let mut h = DefaultHasher::new();
    for p in parts {
        p(&mut h);
    }
    h.finish()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn neighbours_digest(nb: &Neighbours) -> u64 {
    digest(&[&|h| nb.idx.hash(h), &|h| bits(&nb.dist).hash(h)])
}

fn resources_digest(r: &ProjectionResources) -> u64 {
    let knn = r.knn.as_ref().map(neighbours_digest);
    let c = r.cross.as_ref();
    digest(&[&|h| knn.hash(h), &|h| {
        c.map(|c| (&c.rank_high_of_low, &c.rank_low_of_high, bits(&c.dist_high_of_low), bits(&c.dist_low_of_high)))
            .hash(h)
    }])
}

fn scores_digest(scores: &[crate::Score]) -> u64 {
    digest(&[&|h| {
        for s in scores {
            s.id.hash(h);
            for (k, v) in &s.values {
                (k, v.to_bits()).hash(h);
            }
        }
    }])
}

fn options(backend: &Backend) -> Options {
    let (choice, gpu) = match backend {
        Backend::Cpu => (BackendChoice::Cpu, GpuRequest::default()),
        Backend::Gpu { request, .. } => (BackendChoice::Gpu, request.clone()),
    };
    Options { backend: choice, numerics: Numerics::Exact, gpu, ..Options::default() }
}

/// The GPU of `backend`, started now (and kept) if it is not yet: returns it and the start time.
async fn device(backend: &mut Backend) -> Result<(Arc<Gpu>, Option<f64>)> {
    let Backend::Gpu { request, device } = backend else { unreachable!("a GPU backend") };
    if let Some(g) = device {
        return Ok((g.clone(), None));
    }
    let g = Arc::new(Gpu::new_async(request).await?);
    *device = Some(g.clone());
    let s = g.start_s;
    Ok((g, Some(s)))
}

/// An evaluator on `backend` over a copy of `high` (the copy is made before the clock starts).
async fn evaluator(backend: &mut Backend, high: Points) -> Result<(Evaluator, Option<f64>)> {
    let opts = options(backend);
    if backend.is_gpu() {
        let (g, start) = device(backend).await?;
        Ok((Evaluator::with_gpu(high, opts, g), start))
    } else {
        Ok((Evaluator::new(high, opts), None))
    }
}

fn served_from(run: &crate::RunReport, output: &str) -> String {
    let b = run.served.iter().find(|s| s.output == output).map_or(run.backend.as_str(), |s| s.backend.as_str());
    match &run.fallback_reason {
        Some(r) if run.backend_requested == "gpu" => format!("{b} (fallback: {r})"),
        _ => b.to_string(),
    }
}

/// Runs `kernel` once on `backend`; the first GPU run also starts the device (inside the clock).
#[cfg(not(target_arch = "wasm32"))]
pub fn run(kernel: Kernel, backend: &mut Backend, case: &Case) -> Result<Outcome> {
    crate::gpu::block_on(run_async(kernel, backend, case))
}

/// [`run`] for async callers (the browser, where GPU readback must be awaited).
pub async fn run_async(kernel: Kernel, backend: &mut Backend, case: &Case<'_>) -> Result<Outcome> {
    let (high, low, k) = (&case.data.high, &case.data.low, case.k);
    if kernel == Kernel::Ranks {
        case.high_knn();
    }
    let copy = matches!(kernel, Kernel::Knn | Kernel::Pairs | Kernel::Evaluation).then(|| high.clone());
    let t0 = Instant::now();
    let gpu_name = if backend.is_gpu() { "gpu" } else { "cpu" };
    let mut stats: Option<GpuStats> = None;
    let (check, served, start, t1) = match kernel {
        Kernel::Distances => {
            let rows = distance_rows(high.n());
            if backend.is_gpu() {
                let (g, start) = device(backend).await?;
                let mut tally = crate::gpu::dispatch_tally();
                let (prep, s, e) = bounded_sqdist_tally_async(&g, high, 0..rows, &mut tally).await?;
                let t1 = Instant::now();
                stats = Some(GpuStats { transfers: tally, ..GpuStats::for_gpu(&g) });
                (Check::Verdict(within_bound(high, &prep, &s, &e)), gpu_name.to_string(), start, t1)
            } else {
                (0..rows).into_par_iter().for_each_init(
                    || vec![0.0; high.n()],
                    |d, i| {
                        distance_row(high, i, d);
                        std::hint::black_box(&d);
                    },
                );
                (Check::Reference, gpu_name.to_string(), None, Instant::now())
            }
        }
        Kernel::Knn => {
            let (eval, start) = evaluator(backend, copy.expect("copied")).await?;
            let (nb, run) = eval.knn_async(k).await?;
            let t1 = Instant::now();
            stats = run_stats(&run);
            (Check::Digest(neighbours_digest(&nb)), served_from(&run, "knn_high"), start, t1)
        }
        Kernel::Ranks => {
            let needs = Needs::cross_with_dists(k);
            let cached = Some(case.high_knn());
            if backend.is_gpu() {
                let (g, start) = device(backend).await?;
                let (pass, s) = gpu_row_pass_async(&g, high, cached, &[low], needs, Numerics::Exact).await?;
                let t1 = Instant::now();
                stats = Some(s);
                (Check::Digest(resources_digest(&pass.lows[0])), gpu_name.to_string(), start, t1)
            } else {
                let pass = row_pass(high, cached, &[low], needs, 32);
                let t1 = Instant::now();
                (Check::Digest(resources_digest(&pass.lows[0])), gpu_name.to_string(), None, t1)
            }
        }
        Kernel::Pairs | Kernel::Evaluation => {
            let specs: Vec<Spec> = if kernel == Kernel::Pairs {
                vec![Spec::new("stress"), Spec::new("pr")]
            } else {
                ["tnc", "mrre", "lcmc"].iter().map(|id| format!("{id}:k={k}").parse()).collect::<Result<_>>()?
            };
            let (eval, start) = evaluator(backend, copy.expect("copied")).await?;
            let ev = eval.measure_many_async(&[low], None, &specs).await?;
            let t1 = Instant::now();
            stats = run_stats(&ev.run);
            let output = if kernel == Kernel::Pairs { "pairwise" } else { "cross_ranks" };
            (Check::Digest(scores_digest(&ev.projections[0].scores)), served_from(&ev.run, output), start, t1)
        }
    };
    Ok(Outcome {
        seconds: (t1 - t0).as_secs_f64(),
        check,
        served,
        device_start_s: start,
        device_kernel_s: device_time(stats.as_ref()),
        gpu: stats,
    })
}

/// Whether every GPU distance value s̃ (of the prepared space `prep`) lies within its bound ε of
/// the f64 reference: |s̃ − s_ref| ≤ ε with s_ref the reference's distance in the device's
/// units (`Prepared::reference_value`: (d·scale)² Euclidean, 2d·scale² under cosine and
/// correlation, whose unit rows the device holds, d·scale under cityblock and chebyshev), the
/// certificate the exact kernels rely on. Rows are recomputed on the CPU one at a time (O(n)
/// memory).
pub fn within_bound(points: &Points, prep: &crate::gpu::prepare::Prepared, s: &[f32], e: &[f32]) -> bool {
    let n = points.n();
    (0..s.len() / n).into_par_iter().all(|i| {
        let mut d = vec![0.0; n];
        distance_row(points, i, &mut d);
        (0..n).all(|j| (f64::from(s[i * n + j]) - prep.reference_value(d[j])).abs() <= f64::from(e[i * n + j]))
    })
}

/// Parity of a run against the reference's check: "reference" for the CPU, else "identical"
/// or "differs".
pub fn parity(cpu: bool, check: Check, reference: Option<Check>) -> &'static str {
    if cpu {
        return "reference";
    }
    match (check, reference) {
        (Check::Verdict(true), _) => "identical",
        (Check::Digest(a), Some(Check::Digest(b))) if a == b => "identical",
        _ => "differs",
    }
}
