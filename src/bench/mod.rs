//! The benchmark suite behind `faithful bench` and `benches/*.rs`: seeded data, the kernels on
//! each backend with their work counts and parity digests, machine facts and known device peaks.
//! Nothing here is used by the measures. The receipt is shared with the web page's benchmark tab
//! (`src/wasm_bench.rs`), which runs the same kernels through [`kernels::run_async`].

pub mod data;
pub mod kernels;
pub mod machine;
pub mod peaks;
pub mod receipt;

pub use data::{Blobs, blobs};
pub use kernels::{Backend, Kernel, Outcome};
