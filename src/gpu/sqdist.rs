//! Host side of `sqdist.wgsl`: f32 squared distances and their bounds for a block of rows.

use super::GpuError;
use super::context::Gpu;
use super::distances::{certified_params, distances_block, max_block_rows};
use super::prepare::{Prepared, prepare_checked};
use super::shaders::{Kernel, WG};
use super::tally::Tally;
use crate::data::Points;

/// For rows `rows` of `points`: the prepared space, and s̃(i, j), ε(i, j) for every j
/// (row-major, `rows.len()` × n). For tests and benchmarks: it is n per row, not O(k).
pub async fn bounded_sqdist_async(
    gpu: &Gpu,
    points: &Points,
    rows: std::ops::Range<usize>,
) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    bounded_sqdist_tally_async(gpu, points, rows, &mut Tally::default()).await
}

/// [`bounded_sqdist_async`], adding its transfers and device time to `tally`.
pub async fn bounded_sqdist_tally_async(
    gpu: &Gpu,
    points: &Points,
    rows: std::ops::Range<usize>,
    tally: &mut Tally,
) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    let n = points.n();
    let space = gpu.upload(prepare_checked(points)?, tally)?;
    let mut params = certified_params(gpu, &space.prep)?;
    let per = (gpu.max_rows() as usize).min(max_block_rows(gpu, n));
    let (mut s, mut e) = (Vec::with_capacity(rows.len() * n), Vec::with_capacity(rows.len() * n));
    for row0 in rows.clone().step_by(per) {
        let count = per.min(rows.end - row0);
        params.row0 = row0 as u32;
        let block = distances_block(gpu, &space, &params, row0, count, tally).await?;
        let bytes = (count * n * 4) as u64;
        let out = gpu
            .run(
                Kernel::SqDist,
                &params,
                &space,
                &[&block.buf],
                &[],
                &[bytes, bytes],
                (count as u32, n.div_ceil(WG) as u32),
                tally,
            )
            .await;
        gpu.give_back(block.buf);
        let out = out?;
        if let Some(r) = block.short.iter().position(|&b| b) {
            return Err(GpuError::Runtime {
                stage: "completeness witness",
                message: format!("the device did not finish row {}", row0 + r),
            });
        }
        s.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&out[0]));
        e.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&out[1]));
    }
    Ok((space.prep, s, e))
}

/// [`bounded_sqdist_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn bounded_sqdist(
    gpu: &Gpu,
    points: &Points,
    rows: std::ops::Range<usize>,
) -> Result<(Prepared, Vec<f32>, Vec<f32>), GpuError> {
    super::block_on(bounded_sqdist_async(gpu, points, rows))
}
