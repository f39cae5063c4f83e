//! Host side of the Fast-posture pair reductions (`pair_stats.wgsl`, `density.wgsl`): stress,
//! scale-normalised stress, Pearson, KL divergence and DTM from f32 device sums, merged and
//! normalised in f64. Not certified: only `--numerics fast` uses them, and the run report says
//! so; Exact pair statistics are always the CPU's f64.

use bytemuck::{Pod, Zeroable};

use super::bound::Params;
use super::context::Gpu;
use super::dispatch::{Space, Tally};
use super::prepare::prepare;
use super::shaders::Kernel;
use super::GpuError;
use crate::data::Points;
use crate::resources::{tree, Extent, PairSums};
use crate::sum::pairwise_sum;

/// Values per row written by `pair_stats.wgsl`.
pub const ROW_VALUES: usize = 14;
/// Most bandwidths one `density.wgsl` dispatch handles.
pub const MAX_SIGMAS: usize = 8;

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct PairParams {
    pub n: u32,
    pub dim_y: u32,
    pub y_to_x: f32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct DensityParams {
    pub inv_max: f32,
    pub sigmas: u32,
    pub pad: [u32; 2],
    pub neg_sigma: [f32; 8],
}

/// One row's f32 values (in the original space's scaled units) as f64 statistics in original units.
pub fn row_sums(v: &[f32], count: u64, scale: f64) -> PairSums {
    if count == 0 {
        return PairSums::default();
    }
    let lin = |x: f32| f64::from(x) / scale;
    let quad = |x: f32| f64::from(x) / (scale * scale);
    let c = count as f64;
    PairSums {
        count,
        sum_sq_diff: quad(v[5]),
        sum_xx: quad(v[2]),
        sum_yy: quad(v[3]),
        sum_xy: quad(v[4]),
        scaled_residual: quad(v[6]),
        mean_x: lin(v[0]) / c,
        mean_y: lin(v[1]) / c,
        m2_x: quad(v[7]),
        m2_y: quad(v[8]),
        co_moment: quad(v[9]),
        y_scale_exp: 0,
    }
}

fn rows_per_dispatch(gpu: &Gpu, bytes_per_row: u64) -> usize {
    (gpu.max_rows() as u64).min((gpu.max_output_bytes() / bytes_per_row).max(1)) as usize
}

/// Extents of both spaces and the pair sums, from the device's f32 sums.
pub async fn fast_pair_sums_async(gpu: &Gpu, high: &Points, low: &Points, tally: &mut Tally) -> Result<(Extent, Extent, PairSums), GpuError> {
    let n = high.n();
    let space = gpu.upload(prepare(high), tally)?;
    let py = prepare(low);
    let ratio = space.prep.scale / py.scale;
    if !(1e-30..=1e30).contains(&ratio) {
        return Err(GpuError::Limits("the two spaces' scales are too far apart for f32 pair sums".into()));
    }
    let q = PairParams { n: n as u32, dim_y: low.dim() as u32, y_to_x: ratio as f32, pad: 0 };
    let mut params = Params::new(n, high.dim());
    let per = rows_per_dispatch(gpu, (ROW_VALUES * 4) as u64);
    let mut rows_out: Vec<f32> = Vec::with_capacity(n * ROW_VALUES);
    for row0 in (0..n).step_by(per) {
        let rows = per.min(n - row0);
        params.row0 = row0 as u32;
        let out = gpu.run(Kernel::PairStats, &params, &space, &[], &[bytemuck::bytes_of(&q), bytemuck::cast_slice(&py.pts)], &[(rows * ROW_VALUES * 4) as u64], (rows as u32, 1), tally).await?;
        rows_out.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&out[0]));
    }
    Ok(merge_rows(&rows_out, n, space.prep.scale))
}

/// Merges the per-row values (the device's or the twin's) into extents and pair sums.
pub fn merge_rows(rows_out: &[f32], n: usize, scale: f64) -> (Extent, Extent, PairSums) {
    let per_row: Vec<PairSums> = (0..n).map(|i| row_sums(&rows_out[i * ROW_VALUES..(i + 1) * ROW_VALUES], (n - 1 - i) as u64, scale)).collect();
    let sums = tree(&per_row, PairSums::default(), &PairSums::merge);
    let ext = |max_at: usize, min_at: usize| {
        (0..n.saturating_sub(1)).fold(Extent { min: f64::INFINITY, max: f64::NEG_INFINITY }, |e, i| {
            let v = &rows_out[i * ROW_VALUES..];
            Extent { min: e.min.min(f64::from(v[min_at]) / scale), max: e.max.max(f64::from(v[max_at]) / scale) }
        })
    };
    (ext(10, 12), ext(11, 13), sums)
}

/// Normalised densities for each σ, from the device's f32 row sums. `max` is the space's largest
/// pair distance (original units, > 0).
pub async fn fast_densities_async(gpu: &Gpu, points: &Points, max: f64, sigmas: &[f64], tally: &mut Tally) -> Result<Vec<Vec<f64>>, GpuError> {
    let n = points.n();
    let space: Space = gpu.upload(prepare(points), tally)?;
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(sigmas.len());
    for chunk in sigmas.chunks(MAX_SIGMAS) {
        let mut q = DensityParams { inv_max: (1.0 / (max * space.prep.scale)) as f32, sigmas: chunk.len() as u32, pad: [0; 2], neg_sigma: [1.0; 8] };
        for (s, &sigma) in chunk.iter().enumerate() {
            q.neg_sigma[s] = -sigma as f32;
        }
        let m = chunk.len();
        let per = rows_per_dispatch(gpu, (m * 4) as u64);
        let mut params = Params::new(n, points.dim());
        let mut raw: Vec<f32> = Vec::with_capacity(n * m);
        for row0 in (0..n).step_by(per) {
            let rows = per.min(n - row0);
            params.row0 = row0 as u32;
            let o = gpu.run(Kernel::Density, &params, &space, &[], &[bytemuck::bytes_of(&q)], &[(rows * m * 4) as u64], (rows as u32, 1), tally).await?;
            raw.extend_from_slice(bytemuck::cast_slice::<u8, f32>(&o[0]));
        }
        for s in 0..m {
            let v: Vec<f64> = (0..n).map(|i| f64::from(raw[i * m + s])).collect();
            let total = pairwise_sum(&v);
            out.push(v.iter().map(|&x| x / total).collect());
        }
    }
    Ok(out)
}

/// Fills the pair sums, extents and densities of `out` (one per projection) from the GPU's Fast
/// reductions; the pair order (srho, nm_stress) stays the CPU's.
pub async fn fast_pairwise_async(gpu: &Gpu, high: &Points, lows: &[&Points], needs: &crate::resources::Needs, out: &mut [crate::resources::Pairwise]) -> Result<(), GpuError> {
    let mut tally = Tally::default();
    let mut high_dens: Option<Vec<Vec<f64>>> = None;
    for (o, low) in out.iter_mut().zip(lows) {
        let (hx, lx, sums) = fast_pair_sums_async(gpu, high, low, &mut tally).await?;
        o.high = Some(hx);
        o.low = Some(lx);
        if needs.pair_sums {
            o.sums = Some(sums);
        }
        if !needs.density_sigmas.is_empty() {
            if high_dens.is_none() && hx.max > 0.0 {
                high_dens = Some(fast_densities_async(gpu, high, hx.max, &needs.density_sigmas, &mut tally).await?);
            }
            let low_dens = if lx.max > 0.0 { Some(fast_densities_async(gpu, low, lx.max, &needs.density_sigmas, &mut tally).await?) } else { None };
            o.densities = needs
                .density_sigmas
                .iter()
                .enumerate()
                .map(|(s, &sigma)| crate::resources::DensityPair {
                    sigma,
                    high: high_dens.as_ref().map(|d| std::sync::Arc::new(d[s].clone())),
                    low: low_dens.as_ref().map(|d| d[s].clone()),
                })
                .collect();
        }
    }
    Ok(())
}

/// [`fast_pair_sums_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn fast_pair_sums(gpu: &Gpu, high: &Points, low: &Points, tally: &mut Tally) -> Result<(Extent, Extent, PairSums), GpuError> {
    super::block_on(fast_pair_sums_async(gpu, high, low, tally))
}

/// [`fast_densities_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn fast_densities(gpu: &Gpu, points: &Points, max: f64, sigmas: &[f64], tally: &mut Tally) -> Result<Vec<Vec<f64>>, GpuError> {
    super::block_on(fast_densities_async(gpu, points, max, sigmas, tally))
}
