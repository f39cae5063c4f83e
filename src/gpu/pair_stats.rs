//! Host side of the Fast-posture pair sums (`pair_stats.wgsl`): stress, scale-normalised
//! stress and Pearson from f32 device sums, merged in f64; and the Fast all-pairs driver, which
//! adds the densities of `density.rs` (KL divergence, DTM). Not certified: only `--numerics fast` uses them, and the run report says
//! so; Exact pair statistics are always the CPU's f64.

use bytemuck::{Pod, Zeroable};

use super::bound::{Params, strided_trips};
use super::context::Gpu;
use super::density::fast_densities_async;
use super::fast_rows::{FastKernel, fast_rows};
use super::prepare::prepare;
use super::shaders::{Kernel, ROW_VALUES, WG};
use super::tally::Tally;
use super::{GpuError, twin};
use crate::data::Points;
use crate::resources::{Extent, PairSums, tree};

#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct PairParams {
    pub n: u32,
    pub dim_y: u32,
    pub y_to_x: f32,
    pub pad: u32,
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

/// Trips `pair_stats.wgsl` makes in invocation `tid` of row i (m = n − 1 − i pairs j > i):
/// three strided sweeps over j, and for thread 0 the reductions: ten `total` calls of WG trips,
/// the extremes loop (WG − 1) and the loop over q in 2..10 (8).
pub fn pair_stats_trips(m: usize, tid: usize) -> u64 {
    let sweeps = 3 * u64::from(strided_trips(m, tid, WG));
    sweeps + if tid == 0 { (10 * WG + (WG - 1) + 8) as u64 } else { 0 }
}

/// Extents of both spaces and the pair sums, from the device's f32 sums, and how many rows the
/// completeness witness found short (recomputed on the CPU twin).
pub async fn fast_pair_sums_async(
    gpu: &Gpu,
    high: &Points,
    low: &Points,
    tally: &mut Tally,
) -> Result<(Extent, Extent, PairSums, u64), GpuError> {
    let n = high.n();
    let (px, py) = (prepare(high), prepare(low));
    let ratio = px.scale / py.scale;
    if !(1e-30..=1e30).contains(&ratio) {
        return Err(GpuError::Limits("the two spaces' scales are too far apart for f32 pair sums".into()));
    }
    let q = PairParams { n: n as u32, dim_y: low.dim() as u32, y_to_x: ratio as f32, pad: 0 };
    let (space_x, space_y) = (gpu.upload(px, tally)?, gpu.upload(py, tally)?);
    let (params, params_y) = (Params::new(n, high.dim()), Params::new(n, low.dim()));
    let kernel = FastKernel {
        kernel: Kernel::PairStats,
        uniform: bytemuck::bytes_of(&q),
        values: ROW_VALUES,
        trips: |i, tid| pair_stats_trips(n - 1 - i, tid),
        twin_row: |i| twin::pair_stats_row(&space_x.prep, &space_y.prep, q.y_to_x, i),
    };
    let spaces = [(&space_x, &params), (&space_y, &params_y)];
    let (rows_out, incomplete) = fast_rows(gpu, &spaces, kernel, tally).await?;
    let (hx, lx, sums) = merge_rows(&rows_out, n, space_x.prep.scale);
    Ok((hx, lx, sums, incomplete))
}

/// Merges the per-row values (the device's or the twin's) into extents and pair sums.
pub fn merge_rows(rows_out: &[f32], n: usize, scale: f64) -> (Extent, Extent, PairSums) {
    let per_row: Vec<PairSums> =
        (0..n).map(|i| row_sums(&rows_out[i * ROW_VALUES..(i + 1) * ROW_VALUES], (n - 1 - i) as u64, scale)).collect();
    let sums = tree(&per_row, PairSums::default(), &PairSums::merge);
    let ext = |max_at: usize, min_at: usize| {
        (0..n.saturating_sub(1)).fold(Extent { min: f64::INFINITY, max: f64::NEG_INFINITY }, |e, i| {
            let v = &rows_out[i * ROW_VALUES..];
            Extent { min: e.min.min(f64::from(v[min_at]) / scale), max: e.max.max(f64::from(v[max_at]) / scale) }
        })
    };
    (ext(10, 12), ext(11, 13), sums)
}

/// Fills the pair sums, extents and densities of `out` (one per projection) from the GPU's Fast
/// reductions; the pair order (srho, nm_stress) stays the CPU's. Returns how many rows the
/// completeness witnesses found short (recomputed on the CPU twin), for the run report.
pub async fn fast_pairwise_async(
    gpu: &Gpu,
    high: &Points,
    lows: &[&Points],
    needs: &crate::resources::Needs,
    out: &mut [crate::resources::Pairwise],
) -> Result<u64, GpuError> {
    // The Fast reductions compute Euclidean distances of coordinates, nothing else.
    if high.metric().kernel() != crate::data::Kernel::Euclidean || !high.has_coordinates() {
        return Err(GpuError::Domain(format!(
            "the Fast pair reductions compute Euclidean distances, and the original space's metric is {}",
            high.metric()
        )));
    }
    let mut tally = Tally::default();
    let mut high_dens: Option<Vec<Vec<f64>>> = None;
    let mut incomplete = 0;
    for (o, low) in out.iter_mut().zip(lows) {
        let (hx, lx, sums, short) = fast_pair_sums_async(gpu, high, low, &mut tally).await?;
        incomplete += short;
        o.high = Some(hx);
        o.low = Some(lx);
        if needs.pair_sums {
            o.sums = Some(sums);
        }
        if !needs.density_sigmas.is_empty() {
            if high_dens.is_none() && hx.max > 0.0 {
                let (d, short) = fast_densities_async(gpu, high, hx.max, &needs.density_sigmas, &mut tally).await?;
                incomplete += short;
                high_dens = Some(d);
            }
            let low_dens = if lx.max > 0.0 {
                let (d, short) = fast_densities_async(gpu, low, lx.max, &needs.density_sigmas, &mut tally).await?;
                incomplete += short;
                Some(d)
            } else {
                None
            };
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
    Ok(incomplete)
}

/// [`fast_pair_sums_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn fast_pair_sums(
    gpu: &Gpu,
    high: &Points,
    low: &Points,
    tally: &mut Tally,
) -> Result<(Extent, Extent, PairSums, u64), GpuError> {
    super::block_on(fast_pair_sums_async(gpu, high, low, tally))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::bound::short_rows;
    use crate::gpu::density::density_trips;

    /// One trip missing in any invocation of a row, or a short distances row, marks the row.
    #[test]
    fn short_rows_sees_one_missing_trip() {
        let (n, row0, rows) = (200, 3, 4);
        let want = |i: usize, tid: usize| pair_stats_trips(n - 1 - i, tid);
        let full: Vec<u32> = (0..rows).flat_map(|r| (0..WG).map(move |tid| want(row0 + r, tid) as u32)).collect();
        assert_eq!(short_rows(&[false; 4], &full, row0, want), vec![false; 4]);
        for (r, tid) in [(0, 0), (1, 63), (3, 5)] {
            let mut cut = full.clone();
            cut[r * WG + tid] -= 1;
            let short = short_rows(&[false; 4], &cut, row0, want);
            assert_eq!(short.iter().filter(|&&s| s).count(), 1, "thread {tid} of row {r}");
            assert!(short[r]);
        }
        assert_eq!(short_rows(&[false, false, true, false], &full, row0, want), vec![false, false, true, false]);
        // A budget spent makes every loop run once: thread 0's reductions shrink too.
        assert!(pair_stats_trips(0, 0) > pair_stats_trips(0, 1));
        assert_eq!(density_trips(130, 2, 1), 3 * 3 + 8 + 64);
        assert_eq!(density_trips(130, 2, 2), 2 * 3 + 8);
    }
}
