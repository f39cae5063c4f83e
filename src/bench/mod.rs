//! The benchmark suite behind `faithful bench` and `benches/*.rs`: seeded data, the kernels on
//! each backend with their work counts and parity digests, machine facts and known device peaks.
//! Nothing here is used by the measures.

pub mod data;
pub mod kernels;
pub mod machine;
pub mod peaks;

pub use data::{blobs, Blobs};
pub use kernels::{Backend, Kernel, Outcome};
