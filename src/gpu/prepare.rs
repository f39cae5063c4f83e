//! A prepared space on the device. The preparation itself (centre, scale, round, bound the
//! norms) is [`crate::certify::prepare`], shared with the CPU's certified rows.

pub use crate::certify::prepare::*;

/// A prepared space resident on the device.
pub struct Space {
    pub prep: Prepared,
    pub(super) pts: wgpu::Buffer,
    pub(super) norms: wgpu::Buffer,
}
