//! The row-block loop of the Fast-posture kernels (`density.wgsl`, `pair_stats.wgsl`): each
//! block's distance rows made resident, the kernel run over them, and every row whose
//! completeness witness came back short recomputed on the CPU twin.

use super::GpuError;
use super::bound::{Params, short_rows};
use super::context::Gpu;
use super::distances::{Block, block_rows, distances_block};
use super::prepare::Space;
use super::shaders::{Kernel, WG};
use super::tally::Tally;

/// What one Fast kernel computes per row.
pub(super) struct FastKernel<'a, T, R> {
    pub kernel: Kernel,
    /// The kernel's uniform input.
    pub uniform: &'a [u8],
    /// f32 values per row.
    pub values: usize,
    /// Trips invocation `tid` of row i makes when complete: `trips(i, tid)`.
    pub trips: T,
    /// The CPU twin's values of row i.
    pub twin_row: R,
}

/// `k`'s values of every row (row-major), the kernel reading the distance rows of `spaces` (in
/// order; the first also sets the kernel's params), and how many rows were recomputed on the
/// twin because a distance or kernel witness came back short.
pub(super) async fn fast_rows<T, R, V>(
    gpu: &Gpu,
    spaces: &[(&Space, &Params)],
    k: FastKernel<'_, T, R>,
    tally: &mut Tally,
) -> Result<(Vec<f32>, u64), GpuError>
where
    T: Fn(usize, usize) -> u64,
    R: Fn(usize) -> V,
    V: AsRef<[f32]>,
{
    let (space, first) = spaces[0];
    let (n, m) = (space.prep.n, k.values);
    let per = block_rows(gpu, n, (m * 4) as u64);
    let mut params = *first;
    let mut out: Vec<f32> = Vec::with_capacity(n * m);
    let mut incomplete = 0;
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let mut blocks: Vec<Block> = Vec::with_capacity(spaces.len());
        for &(s, p) in spaces {
            match distances_block(gpu, s, p, row0, rows, tally).await {
                Ok(b) => blocks.push(b),
                Err(e) => {
                    blocks.into_iter().for_each(|b| gpu.give_back(b.buf));
                    return Err(e);
                }
            }
        }
        let sizes = [(rows * m * 4) as u64, (rows * WG * 4) as u64];
        let resident: Vec<&wgpu::Buffer> = blocks.iter().map(|b| &b.buf).collect();
        let o = gpu.run(k.kernel, &params, space, &resident, &[k.uniform], &sizes, (rows as u32, 1), tally).await;
        let dist_short: Vec<bool> = (0..rows).map(|r| blocks.iter().any(|b| b.short[r])).collect();
        blocks.into_iter().for_each(|b| gpu.give_back(b.buf));
        let o = o?;
        let short = short_rows(&dist_short, bytemuck::cast_slice(&o[1]), row0, &k.trips);
        out.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&o[0]));
        for r in (0..rows).filter(|&r| short[r]) {
            let i = row0 + r;
            out[i * m..(i + 1) * m].copy_from_slice((k.twin_row)(i).as_ref());
            incomplete += 1;
        }
    }
    Ok((out, incomplete))
}
