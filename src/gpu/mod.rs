//! The GPU backend: the exact kernels of `shaders/*.wgsl` through wgpu (Vulkan, Metal, DX12, GL),
//! certified against proven f32 error bounds and refined in f64 on the host, so that every
//! output equals the CPU reference's bit for bit (docs/exactness.md).
//!
//! [`context::Gpu`] owns instance, adapter, device, limits, pipelines and readback; nothing
//! outside this module touches wgpu. Each kernel has a CPU twin in [`twin`] with the same
//! inputs and outputs.

mod adapters;
mod batch;
pub mod bound;
/// The certified domain, shared with the CPU's certified rows.
pub use crate::certify::domain;
pub mod context;
pub mod density;
pub mod dispatch;
pub mod distances;
pub mod distances_tiled;
pub mod exact_sqdist;
mod fast_rows;
pub mod knn_candidates;
pub mod pair_stats;
pub mod pass;
mod pool;
pub mod prepare;
mod quiet;
pub mod rank_counts;
mod shaders;
pub mod sqdist;
pub mod tally;
pub mod twin;

pub use adapters::AdapterInfo;
#[cfg(not(target_arch = "wasm32"))]
pub use adapters::gpu_adapters;
#[cfg(not(target_arch = "wasm32"))]
pub use context::adapters_report;
pub use context::{AdapterReport, Gpu, GpuRequest, Refine, adapters_report_async};
pub use distances_tiled::{KernelSet, Tiles};
pub use pair_stats::fast_pairwise_async;

/// A fresh transfer tally (for callers of the host-side kernel functions).
pub fn dispatch_tally() -> tally::Tally {
    tally::Tally::default()
}
pub use pass::{GpuStats, gpu_row_pass_async, gpu_row_pass_rows_async};
#[cfg(not(target_arch = "wasm32"))]
pub use pass::{gpu_row_pass, gpu_row_pass_rows};

/// Runs a future to completion on this thread (native only: the GPU work inside is driven by
/// `device.poll`, so the futures are ready when awaited).
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    pollster::block_on(f)
}

/// Why the GPU could not serve (defined with the crate's errors: it exists without the
/// `gpu` feature too).
pub use crate::error::GpuError;
