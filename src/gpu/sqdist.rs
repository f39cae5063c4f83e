//! Host side of `sqdist.wgsl`: f32 squared distances and their bounds for a block of rows.

use super::bound::Params;
use super::context::Gpu;
use super::dispatch::Tally;
use super::prepare::{prepare, Prepared};
use super::shaders::Kernel;
use super::GpuError;
use crate::data::Points;

/// For rows `rows` of `points`: the prepared space, and s̃(i, j), ε(i, j) for every j
/// (row-major, `rows.len()` × n). For tests and benchmarks: it is n per row, not O(k).
pub async fn bounded_sqdist_async(gpu: &Gpu, points: &Points, rows: std::ops::Range<usize>) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    bounded_sqdist_tally_async(gpu, points, rows, &mut Tally::default()).await
}

/// [`bounded_sqdist_async`], adding its transfers and device time to `tally`.
pub async fn bounded_sqdist_tally_async(gpu: &Gpu, points: &Points, rows: std::ops::Range<usize>, tally: &mut Tally) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    let n = points.n();
    let space = gpu.upload(prepare(points), tally)?;
    let mut params = Params::new(n, points.dim());
    let per = (gpu.max_rows() as usize).min((gpu.max_output_bytes() / (n as u64 * 4)).max(1) as usize);
    let (mut s, mut e) = (Vec::with_capacity(rows.len() * n), Vec::with_capacity(rows.len() * n));
    for row0 in rows.clone().step_by(per) {
        let count = per.min(rows.end - row0);
        params.row0 = row0 as u32;
        let bytes = (count * n * 4) as u64;
        let out = gpu.run(Kernel::SqDist, &params, &space, &[], &[bytes, bytes], count as u32, tally).await?;
        s.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&out[0]));
        e.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&out[1]));
    }
    Ok((space.prep, s, e))
}

/// [`bounded_sqdist_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn bounded_sqdist(gpu: &Gpu, points: &Points, rows: std::ops::Range<usize>) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    super::block_on(bounded_sqdist_async(gpu, points, rows))
}
