//! Host preparation of a space for the GPU: centre in f64, scale by a power of two so that the
//! coordinates are of order 1, round to f32, and bound each row's norm from above.

use super::bound::{Form, U64, f32_up};
use super::domain::check_points;
use crate::data::{Kernel, Points};
use crate::error::GpuError;

/// A space as the kernels see it.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub n: usize,
    pub dim: usize,
    /// Row-major f32 coordinates y = fl32(2^e · fl64(x - μ)).
    pub pts: Vec<f32>,
    /// Upper bounds of the rows' norms in the form's own norm, as f32: ‖y_i‖₂ (squared form),
    /// ‖y_i‖₁ (cityblock), ‖y_i‖∞ (chebyshev).
    pub norms: Vec<f32>,
    /// The power of two 2^e.
    pub scale: f64,
    /// An absolute term added to the bound's `abs_e` (scaled units): 0 for Euclidean spaces;
    /// for cosine and correlation, 2^{2e} times the gap between the reference's `2 d(i, j)` and
    /// the squared distance of the unit rows the device sees ([`cosine_gap`]).
    pub abs_extra: f64,
    /// What the distance kernels compute (and which bound `eps_of` evaluates).
    pub form: Form,
    /// How the device's value relates to the metric's distance ([`Prepared::distance`]).
    pub units: Units,
}

/// The metric's distance d(i, j) as a function of the device's value s (scaled units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Units {
    /// Euclidean: s ≈ 2^{2e} d², d = √s / 2^e.
    Root,
    /// sqeuclidean: s ≈ 2^{2e} d.
    Squared,
    /// Cosine and correlation (unit rows): s ≈ 2^{2e} · 2d.
    UnitRows,
    /// Cityblock and chebyshev: s ≈ 2^e d.
    Linear,
}

impl Prepared {
    /// The metric's distance that a device value `s` (scaled units) approximates: `√s / 2^e`
    /// for Euclidean rows, `s / 2^{2e}` for sqeuclidean, `s / (2 · 2^{2e})` for unit rows
    /// (cosine, correlation), `s / 2^e` for cityblock and chebyshev. Only Fast numerics reads
    /// distances off the device; exact lists take the reference's.
    pub fn distance(&self, s: f32) -> f64 {
        let (s, k) = (f64::from(s), self.scale);
        match self.units {
            Units::Root => s.sqrt() / k,
            Units::Squared => s / (k * k),
            Units::UnitRows => s / (2.0 * k * k),
            Units::Linear => s / k,
        }
    }

    /// The value `s_ref` the bound ε covers (`|s̃ − s_ref| ≤ ε`) for the reference's distance
    /// `d`: `2^{2e} d²` (Euclidean: in fact the reference's sum before its root), `2^{2e} d`,
    /// `2^{2e} · 2d`, `2^e d` by [`Units`]. For tests and the distance benchmark's check.
    pub fn reference_value(&self, d: f64) -> f64 {
        let k = self.scale;
        match self.units {
            Units::Root => d * d * k * k,
            Units::Squared => d * k * k,
            Units::UnitRows => 2.0 * d * k * k,
            Units::Linear => d * k,
        }
    }
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
    let (form, units) = match points.metric().kernel() {
        Kernel::Cityblock => (Form::Cityblock, Units::Linear),
        Kernel::Chebyshev => (Form::Chebyshev, Units::Linear),
        Kernel::SqEuclidean => (Form::Squared, Units::Squared),
        _ => (Form::Squared, Units::Root),
    };
    let norms = pts.chunks_exact(dim.max(1)).map(|r| norm_up(form, r)).collect();
    Prepared { n, dim, pts, norms, scale, abs_extra: 0.0, form, units }
}

/// An f32 upper bound of the row's norm in the form's own norm (the premise `N_i ≥ ‖y_i‖` of
/// Step 2 of the bound).
fn norm_up(form: Form, r: &[f32]) -> f32 {
    let d = r.len() as f64;
    match form {
        // Each square of an f32 is exact in f64; the sum of D of them loses at most γ_{D−1},
        // the square root and this product one rounding each: (1 + 1.01 (D + 3) u64) covers
        // all of it.
        Form::Squared => {
            f32_up(r.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>().sqrt() * (1.0 + 1.01 * (d + 3.0) * U64))
        }
        // Each |y| is exact in f64; the sum of D of them loses at most γ_{D−1}, this product
        // one rounding: (1 + 1.01 (D + 1) u64) covers it.
        Form::Cityblock => f32_up(r.iter().map(|&v| f64::from(v.abs())).sum::<f64>() * (1.0 + 1.01 * (d + 1.0) * U64)),
        // A maximum of magnitudes is exact.
        Form::Chebyshev => r.iter().fold(0.0f32, |m, &v| m.max(v.abs())),
    }
}

/// Checks the prepared space against the certified domain (`certify::domain`): a finite
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
/// certified domain (`certify::domain`) first. A cosine or correlation space goes to the device as
/// its unit rows `z_i = x_i / ‖x_i‖` (of the centred rows under correlation, ‖·‖ the
/// reference's norms), whose squared distances are `2 d(i, j)` up to [`cosine_gap`], added to
/// the bound (docs/exactness.md, "Cosine and correlation on the GPU").
pub fn prepare_checked(points: &Points) -> Result<Prepared, GpuError> {
    if points.metric().kernel() == Kernel::Cosine {
        let unit = unit_rows(points)?;
        check_points(&unit)?;
        let mut prep = prepare(&unit);
        prep.abs_extra = prep.scale * prep.scale * cosine_gap(points.dim());
        prep.units = Units::UnitRows;
        check_prepared(&prep)?;
        return Ok(prep);
    }
    check_points(points)?;
    let prep = prepare(points);
    check_prepared(&prep)?;
    Ok(prep)
}

/// Smallest row norm the GPU's cosine bound covers: 2^-400. Every coordinate product below
/// 2^-1022 (a subnormal the reference rounds absolutely) then errs by at most 2^-1075, which
/// relative to ‖u‖ ‖v‖ ≥ 2^-800 is below 2^-275 (the `D · 2^-270` term of [`cosine_gap`]).
pub const MIN_COSINE_NORM: f64 = 3.872_591_914_849_318e-121; // 2^-400

/// The unit rows `fl(x_ic / ‖x_i‖)` of a cosine or correlation space (Euclidean points), with
/// the reference's norms; norms below [`MIN_COSINE_NORM`] are outside the certified domain.
fn unit_rows(points: &Points) -> Result<Points, GpuError> {
    let prep = points.prepared().expect("cosine and correlation points carry their norms");
    let (n, d) = (points.n(), points.dim());
    let rows: &[f64] = match &prep.centred {
        Some((rows, _)) => rows,
        None => points.as_slice(),
    };
    if let Some(i) = prep.norms.iter().position(|&x| !(x >= MIN_COSINE_NORM)) {
        return Err(GpuError::Domain(format!(
            "row {i}'s norm {:e} is below 2^-400, where the cosine bound's products may lose relative precision",
            prep.norms[i]
        )));
    }
    let unit: Vec<f64> =
        rows.chunks_exact(d).zip(&prep.norms).flat_map(|(r, &nm)| r.iter().map(move |&x| x / nm)).collect();
    Points::from_vec(points.name(), n, d, unit)
        .map_err(|e| GpuError::Domain(format!("the unit rows are not a valid point set ({e})")))
}

/// `E(D)` with `|2 d_ref(i, j) − ‖z_i − z_j‖²| ≤ E(D)` for the reference's cosine distance
/// `d_ref` of D-dimensional rows and their unit rows z (docs/exactness.md, "Cosine and
/// correlation on the GPU"): `8φ + 4φ² + 2(1.02 γ_{3D+7} + 2u)` with `φ = γ_{D+4}`, u = 2^-53,
/// γ_m = mu/(1 − mu), times 1.1, plus `D · 2^-270` for subnormal products.
pub fn cosine_gap(dim: usize) -> f64 {
    let gamma = |m: f64| m * U64 / (1.0 - m * U64);
    let d = dim as f64;
    let phi = gamma(d + 4.0);
    1.1 * (8.0 * phi + 4.0 * phi * phi + 2.0 * (1.02 * gamma(3.0 * d + 7.0) + 2.0 * U64)) + d * 2f64.powi(-270)
}
