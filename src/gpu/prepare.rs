//! Host preparation of a space for the GPU: centre in f64, scale by a power of two so that the
//! coordinates are of order 1, round to f32, and bound each row's norm from above.

use super::GpuError;
use super::bound::{U64, f32_up};
use super::domain::check_points;
use crate::data::Points;

/// A space as the kernels see it.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub n: usize,
    pub dim: usize,
    /// Row-major f32 coordinates y = fl32(2^e · fl64(x - μ)).
    pub pts: Vec<f32>,
    /// Upper bounds of ‖y_i‖₂, as f32.
    pub norms: Vec<f32>,
    /// The power of two 2^e.
    pub scale: f64,
}

/// Centres, scales and rounds `points` (translation and power-of-two scaling leave the
/// reference order unchanged; the bound accounts for every rounding here).
pub fn prepare(points: &Points) -> Prepared {
    let (n, dim) = (points.n(), points.dim());
    let mut mean = vec![0.0f64; dim];
    for i in 0..n {
        for (m, v) in mean.iter_mut().zip(points.row(i)) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= n as f64);
    let centred: Vec<f64> =
        (0..n).flat_map(|i| points.row(i).iter().zip(&mean).map(|(v, m)| v - m).collect::<Vec<_>>()).collect();
    let max_abs = centred.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let scale = if max_abs > 0.0 { 2f64.powi(-(max_abs.log2().ceil() as i32)) } else { 1.0 };
    let pts: Vec<f32> = centred.iter().map(|v| (v * scale) as f32).collect();
    // Each square of an f32 is exact in f64; the sum of D of them loses at most γ_{D−1}, the
    // square root and this product one rounding each: (1 + 1.01 (D + 3) u64) covers all of it.
    let up = 1.0 + 1.01 * (dim as f64 + 3.0) * U64;
    let norms = pts
        .chunks_exact(dim.max(1))
        .map(|r| f32_up(r.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>().sqrt() * up))
        .collect();
    Prepared { n, dim, pts, norms, scale }
}

/// Checks the prepared space against the certified domain (`gpu::domain`): a finite
/// power-of-two scale, finite f32 coordinates and norms.
fn check_prepared(prep: &Prepared) -> Result<(), GpuError> {
    if !(prep.scale.is_finite() && prep.scale > 0.0) {
        return Err(GpuError::Domain(format!("the power-of-two scale of the data is not finite ({:e})", prep.scale)));
    }
    if prep.pts.iter().chain(&prep.norms).any(|v| !v.is_finite()) {
        return Err(GpuError::Domain("a scaled coordinate or row norm is not finite".into()));
    }
    Ok(())
}

/// [`prepare`] for the certified kernels: the data and the prepared space checked against the
/// certified domain (`gpu::domain`) first.
pub fn prepare_checked(points: &Points) -> Result<Prepared, GpuError> {
    check_points(points)?;
    let prep = prepare(points);
    check_prepared(&prep)?;
    Ok(prep)
}

/// A prepared space resident on the device.
pub struct Space {
    pub prep: Prepared,
    pub(super) pts: wgpu::Buffer,
    pub(super) norms: wgpu::Buffer,
}
