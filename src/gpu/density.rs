//! Host side of the Fast-posture densities (`density.wgsl`): for each bandwidth σ, the
//! Gaussian density of every point from f32 device row sums, normalised in f64 (KL divergence,
//! DTM). Not certified: only `--numerics fast` uses them, and the run report says so.

use bytemuck::{Pod, Zeroable};

use super::bound::{Params, strided_trips};
use super::context::Gpu;
use super::fast_rows::{FastKernel, fast_rows};
use super::prepare::Space;
use super::prepare::prepare;
use super::shaders::{Kernel, MAX_SIGMAS, WG};
use super::tally::Tally;
use super::{GpuError, twin};
use crate::data::Points;
use crate::sum::pairwise_sum;

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct DensityParams {
    pub inv_max: f32,
    pub sigmas: u32,
    pub pad: [u32; 2],
    pub neg_sigma: [f32; MAX_SIGMAS],
}

/// Trips `density.wgsl` makes in invocation `tid` of a row, with `sigmas` bandwidths: the
/// strided sweep over all n points with its inner loop over σ, the MAX_SIGMAS-slot store loop, and for
/// the first `sigmas` threads the WG-trip reduction.
pub fn density_trips(n: usize, sigmas: usize, tid: usize) -> u64 {
    u64::from(strided_trips(n, tid, WG)) * (1 + sigmas as u64)
        + MAX_SIGMAS as u64
        + if tid < sigmas { WG as u64 } else { 0 }
}

/// Normalised densities for each σ, from the device's f32 row sums, and how many rows the
/// completeness witness found short (recomputed on the CPU twin). `max` is the space's largest
/// pair distance (original units, > 0).
pub async fn fast_densities_async(
    gpu: &Gpu,
    points: &Points,
    max: f64,
    sigmas: &[f64],
    tally: &mut Tally,
) -> Result<(Vec<Vec<f64>>, u64), GpuError> {
    let n = points.n();
    let space: Space = gpu.upload(prepare(points), tally)?;
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(sigmas.len());
    let mut incomplete = 0;
    for chunk in sigmas.chunks(MAX_SIGMAS) {
        let mut q = DensityParams {
            inv_max: (1.0 / (max * space.prep.scale)) as f32,
            sigmas: chunk.len() as u32,
            pad: [0; 2],
            neg_sigma: [1.0; MAX_SIGMAS],
        };
        for (s, &sigma) in chunk.iter().enumerate() {
            q.neg_sigma[s] = -sigma as f32;
        }
        let m = chunk.len();
        let params = Params::new(n, points.dim());
        let sig: Vec<f32> = chunk.iter().map(|&s| s as f32).collect();
        let kernel = FastKernel {
            kernel: Kernel::Density,
            uniform: bytemuck::bytes_of(&q),
            values: m,
            trips: |_, tid| density_trips(n, m, tid),
            twin_row: |i| twin::density_row(&space.prep, q.inv_max, &sig, i),
        };
        let (raw, short) = fast_rows(gpu, &[(&space, &params)], kernel, tally).await?;
        incomplete += short;
        for s in 0..m {
            let v: Vec<f64> = (0..n).map(|i| f64::from(raw[i * m + s])).collect();
            let total = pairwise_sum(&v);
            out.push(v.iter().map(|&x| x / total).collect());
        }
    }
    Ok((out, incomplete))
}

/// [`fast_densities_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn fast_densities(
    gpu: &Gpu,
    points: &Points,
    max: f64,
    sigmas: &[f64],
    tally: &mut Tally,
) -> Result<(Vec<Vec<f64>>, u64), GpuError> {
    super::block_on(fast_densities_async(gpu, points, max, sigmas, tally))
}
