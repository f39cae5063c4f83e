//! The f32 certification (docs/exactness.md, "The GPU path: certify, then refine"): the proven
//! bound ε of a pair's f32 distance ([`bound`]), the domain where it holds ([`domain`]) and the
//! host preparation of a space ([`prepare`]). The GPU kernels and the CPU's certified rows
//! (`resources::certified_rows`) both decide comparisons with it; nothing here touches wgpu.

pub mod bound;
pub mod domain;
pub mod prepare;
