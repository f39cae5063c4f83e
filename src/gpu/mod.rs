//! The GPU backend: the exact kernels of `shaders/*.wgsl` through wgpu (Vulkan, Metal, DX12, GL),
//! certified against proven f32 error bounds and refined in f64 on the host, so that every
//! output equals the CPU reference's bit for bit (docs/exactness.md).
//!
//! [`context::Gpu`] owns instance, adapter, device, limits, pipelines and readback; nothing
//! outside this module touches wgpu. Each kernel has a CPU twin in [`twin`] with the same
//! inputs and outputs.

pub mod bound;
pub mod context;
pub mod dispatch;
pub mod knn;
pub mod pair_stats;
pub mod pass;
pub mod prepare;
pub mod ranks;
pub mod sqdist;
mod shaders;
pub mod twin;

pub use context::{adapters_report, AdapterReport, Gpu, GpuRequest};
pub use pair_stats::fast_pairwise;

/// A fresh transfer tally (for callers of the host-side kernel functions).
pub fn dispatch_tally() -> dispatch::Tally {
    dispatch::Tally::default()
}
pub use pass::{gpu_row_pass, GpuStats};

/// Why the GPU could not serve.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error("the GPU device could not be created: {0}")]
    Device(String),
    #[error("GPU error during {stage}: {message}")]
    Runtime { stage: &'static str, message: String },
    #[error("the data does not fit the adapter's limits: {0}")]
    Limits(String),
}
