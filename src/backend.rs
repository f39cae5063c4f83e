//! Backend and numerics choice: the one place that decides whether the CPU reference or the
//! GPU serves a run, and says why. Measures never branch on the backend.

#[cfg(feature = "gpu")]
use std::sync::Arc;

use serde::Serialize;

use crate::error::GpuError;
#[cfg(feature = "gpu")]
use crate::gpu::{Gpu, GpuRequest};

/// Which backend the caller asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum BackendChoice {
    /// The GPU for a hardware adapter and a job large enough to pay for start-up, else the CPU.
    #[default]
    Auto,
    Cpu,
    /// A wgpu adapter, or an error with the reason.
    Gpu,
}

/// The numerics posture (docs/exactness.md §2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Numerics {
    /// Neighbours and ranks identical to the reference (certified f32, refined in f64).
    #[default]
    Exact,
    /// f32 on the device without refinement; the report counts the comparisons left to f32.
    Fast,
}

/// Work (pairs of points per space) below which `auto` stays on the CPU: device start-up and
/// pipeline compilation cost more than the CPU's whole run below it. From the H200 receipt
/// (`docs/bench/h200_2026-12-04/bench_crossover.txt`: evaluation, D = 50, k = 20, against the
/// same machine's 16 CPU cores): cold, as a one-shot run pays it, the GPU loses at n = 5 000
/// (0.194 s vs 0.034 s) and, narrowly, at n = 20 000 (0.327 s vs 0.303 s); lines in n² through
/// both cross at ≈ 4.7·10⁸ pairs (n ≈ 21 600), and 6·10⁸ (n ≈ 24 500) leaves the same margin
/// as before for that extrapolation. Warm, the GPU already wins at n = 5 000 (0.018 s vs
/// 0.033 s). (2026-11-30's receipt gave 2·10⁸, before the CPU reference's row pass got 2.5×
/// faster at n = 20 000.)
pub const AUTO_MIN_PAIRS: f64 = 6.0e8;

/// The backend that will serve, with the reason when it is not the one asked for.
pub enum Selected {
    Cpu {
        reason: Option<String>,
    },
    #[cfg(feature = "gpu")]
    Gpu(Arc<Gpu>),
}

/// Decides the backend for a job on `rows` of `n` points (all n for a whole run, a block for a
/// row shard: its work is rows × n pairs); `gpu_work` says whether the job has anything a GPU
/// serves (neighbours, ranks, or Fast pair reductions). `gpu` starts (or returns) the device.
/// `auto` probes the adapters only when a GPU could serve: a large job with GPU work.
#[cfg(feature = "gpu")]
pub async fn select<F: std::future::Future<Output = Result<Arc<Gpu>, GpuError>>>(
    choice: BackendChoice,
    rows: usize,
    n: usize,
    gpu_work: bool,
    gpu: impl FnOnce() -> F,
) -> Result<Selected, GpuError> {
    match choice {
        BackendChoice::Cpu => Ok(Selected::Cpu { reason: None }),
        BackendChoice::Gpu => gpu().await.map(Selected::Gpu),
        BackendChoice::Auto => {
            let pairs = rows as f64 * n as f64;
            if pairs < AUTO_MIN_PAIRS {
                let job = if rows == n {
                    format!("{n} points are")
                } else {
                    format!("a block of {rows} rows of {n} points is")
                };
                return Ok(Selected::Cpu {
                    reason: Some(format!("auto: {job} below the GPU threshold ({AUTO_MIN_PAIRS:e} pairs)")),
                });
            }
            if !gpu_work {
                return Ok(Selected::Cpu {
                    reason: Some("auto: the measures asked for have no work a GPU serves".into()),
                });
            }
            match gpu().await {
                Ok(g) if g.report.hardware => Ok(Selected::Gpu(g)),
                Ok(g) => Ok(Selected::Cpu {
                    reason: Some(format!("auto: adapter '{}' is not a hardware GPU", g.report.name)),
                }),
                Err(e) => Ok(Selected::Cpu { reason: Some(format!("auto: {e}")) }),
            }
        }
    }
}

/// Without the `gpu` feature: the CPU serves `cpu` and `auto`; `gpu` is an error.
#[cfg(not(feature = "gpu"))]
pub fn select(choice: BackendChoice) -> Result<Selected, GpuError> {
    match choice {
        BackendChoice::Cpu => Ok(Selected::Cpu { reason: None }),
        BackendChoice::Gpu => Err(GpuError::NotBuilt),
        BackendChoice::Auto => Ok(Selected::Cpu { reason: Some(format!("auto: {}", GpuError::NotBuilt)) }),
    }
}

/// Starts the GPU for `req`.
#[cfg(feature = "gpu")]
pub async fn start_gpu(req: &GpuRequest) -> Result<Arc<Gpu>, GpuError> {
    Gpu::new_async(req).await.map(Arc::new)
}
