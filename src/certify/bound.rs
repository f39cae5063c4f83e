//! The proven f32 error bound ε (docs/exactness.md, "The f32 error bound") — the host-side
//! constants, the checks of the bound's premises, and the CPU twin of `eps_of` in
//! `shaders/bound.wgsl` (which the CPU's certified rows evaluate too).

use crate::error::GpuError;

/// The distance forms' codes in `Params.form` ([`Form`]'s discriminants), written into the WGSL
/// prelude by `gpu::shaders`.
pub const FORM_SQUARED: u32 = 0;
pub const FORM_CITYBLOCK: u32 = 1;
pub const FORM_CHEBYSHEV: u32 = 2;

/// Unit roundoff of a device f32 operation: WGSL lets the result be either neighbouring float
/// of the exact value (not only the nearest), so the relative error is below 2^-23.
pub const U32: f64 = 1.0 / 8_388_608.0; // 2^-23
/// Unit roundoff of the host's f32 rounding (`as f32` rounds to nearest).
pub const U32_HOST: f64 = 1.0 / 16_777_216.0; // 2^-24
/// Unit roundoff of f64.
pub const U64: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53
/// Smallest normal f32: values below it may be flushed to zero by a GPU.
pub const MIN_NORMAL32: f64 = 1.175_494_350_822_287_5e-38;
/// Largest dimension the bound covers: D·u < 1/2 (so γ_D ≤ 1, and no f64 reference sum of
/// squares of inputs below 1e150 can overflow: 2^22 · (2e150)² < f64::MAX).
pub const MAX_DIM: usize = 1 << 22;
/// Coordinates processed per invocation and dispatch by `distances.wgsl` (each invocation
/// stays far inside driver loop budgets such as Mesa's 65535 trips).
pub const DIM_CHUNK: usize = 4096;

/// What the distance kernels compute for a pair of prepared rows, and which bound `eps_of`
/// evaluates (docs/exactness.md, "The f32 error bound" and "Cityblock and Chebyshev on the
/// GPU"): the value written to the same s̃ buffer that every certified kernel reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum Form {
    /// `Σ (y_ic − y_jc)²`: Euclidean, sqeuclidean, and the unit rows of cosine and correlation.
    #[default]
    Squared = FORM_SQUARED,
    /// `Σ |y_ic − y_jc|`: cityblock (and minkowski p = 1).
    Cityblock = FORM_CITYBLOCK,
    /// `max |y_ic − y_jc|`: chebyshev (and minkowski p = ∞).
    Chebyshev = FORM_CHEBYSHEV,
}

/// The uniform block of every certified kernel (layout of `Params` in bound.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "gpu", derive(bytemuck::Pod, bytemuck::Zeroable))]
pub struct Params {
    pub n: u32,
    pub dim: u32,
    pub k: u32,
    pub row0: u32,
    pub cap: u32,
    pub kt: u32,
    /// Start and end of this dispatch's range: coordinates (distances) or points (ranks).
    pub lo: u32,
    pub hi: u32,
    pub inv_one_minus_gamma_d: f32,
    pub gamma_d: f32,
    pub alpha1: f32,
    pub abs_a: f32,
    pub inv_one_minus_u: f32,
    pub u: f32,
    pub gamma_ref: f32,
    pub abs_e: f32,
    pub safety: f32,
    pub rel_margin: f32,
    /// Rows of this block (`distances_tiled`: the tile rows in range; `rank_counts`: the stride
    /// of the overlap slots).
    pub rows: u32,
    /// `knn_candidates`: tile minima per row from `distances_tiled`'s epilogue (0: none).
    pub tiles: u32,
    /// The distance form ([`Form`] as u32): what the distance kernels sum and which bound
    /// `eps_of` evaluates.
    pub form: u32,
    /// A streamed plan's point tile: the block's distances hold the points
    /// `col0..col0 + n` (n is then the tile's width, the row stride of the distances).
    pub col0: u32,
    /// `rank_counts` in a streamed plan: the queries' s̃ follow their indices in the queries
    /// buffer (their columns may lie in another tile), f32 bits.
    pub streamed: u32,
    /// `rank_counts` in a streamed plan: tiles follow this one (its last range does not copy
    /// the overlaps yet).
    pub more: u32,
}

/// Rounds a positive f64 up to an f32 (never below the value).
pub fn f32_up(x: f64) -> f32 {
    let y = x as f32;
    if (y as f64) < x { y.next_up() } else { y }
}

impl Params {
    /// The bound's constants of the squared form for dimension `dim` (each rounded up to f32).
    /// Only meaningful for `dim < MAX_DIM`: use [`Params::checked`] where that is not known.
    pub fn new(n: usize, dim: usize) -> Self {
        Params::new_form(n, dim, Form::Squared)
    }

    /// The bound's constants of `form` for dimension `dim` (each rounded up to f32; the premise
    /// of each constant is in docs/exactness.md beside its step). Only meaningful for
    /// `dim < MAX_DIM`: use [`Params::checked_form`] where that is not known.
    pub fn new_form(n: usize, dim: usize, form: Form) -> Self {
        let d = dim as f64;
        let gamma = |m: f64| m * U32 / (1.0 - m * U32);
        // Step 3: a sum of D terms (squares or magnitudes) loses at most γ_D relative; a
        // maximum loses nothing (it returns one of its operands), so γ = 0 for chebyshev.
        let gamma_d = if form == Form::Chebyshev { 0.0 } else { gamma(d) };
        // Step 1: |y − 2^e (x − μ)| ≤ α|y| (+ flush terms in abs_a): f64 centring, host f32 rounding.
        let alpha = 1.0001 * (U32_HOST + 2.0 * U64) / (1.0 - U32_HOST);
        // Step 5: the reference's D + 2 roundings per term (one difference, counted twice by
        // the square, one product, D − 1 additions; fewer for |·| and max), relative.
        let gamma_ref = 1.01 * (d + 2.0) * U64 / (1.0 - (d + 2.0) * U64);
        // Step 2: the flushed inputs and differences, at most 4m per coordinate, summed over
        // the coordinates in quadrature (squared form: √D · 2^-123), in full (cityblock:
        // D · 2^-124) or once (chebyshev); 2^-110 keeps A (and so uT) far above the flush
        // threshold (see the evaluation lemma).
        let abs_a = match form {
            Form::Squared => d.sqrt() * 2f64.powi(-110),
            Form::Cityblock | Form::Chebyshev => d.max(1.0) * 2f64.powi(-110),
        };
        Params {
            n: n as u32,
            dim: dim as u32,
            k: 0,
            row0: 0,
            cap: 0,
            kt: 0,
            lo: 0,
            hi: 0,
            inv_one_minus_gamma_d: f32_up(1.0 / (1.0 - gamma_d)),
            gamma_d: f32_up(gamma_d),
            alpha1: f32_up((1.0 + U32) * alpha),
            abs_a: f32_up(abs_a),
            inv_one_minus_u: f32_up(1.0 / (1.0 - U32)),
            u: U32 as f32,
            gamma_ref: f32_up(gamma_ref),
            // Step 3: 2D flushed products/sums, D chunk boundaries, plus 16 flushes while
            // evaluating ε itself.
            abs_e: f32_up((6.0 * d + 16.0) * MIN_NORMAL32),
            safety: 2.0,
            rel_margin: (1.0f64 / 1_048_576.0) as f32, // 2^-20
            rows: 0,
            tiles: 0,
            form: form as u32,
            col0: 0,
            streamed: 0,
            more: 0,
        }
    }

    /// The form these constants are for.
    pub fn form(&self) -> Form {
        match self.form {
            1 => Form::Cityblock,
            2 => Form::Chebyshev,
            _ => Form::Squared,
        }
    }

    /// [`Params::new`] after checking the bound's premises on the host: D·u < 1/2, and every
    /// constant finite and positive where the proof needs it. Anything else is outside the
    /// certified domain (the caller routes the space to the CPU reference).
    pub fn checked(n: usize, dim: usize) -> Result<Self, GpuError> {
        Params::checked_form(n, dim, Form::Squared)
    }

    /// [`Params::new_form`] after the premises' checks of [`Params::checked`].
    pub fn checked_form(n: usize, dim: usize, form: Form) -> Result<Self, GpuError> {
        if dim >= MAX_DIM {
            return Err(GpuError::Domain(format!("D = {dim} is at least 2^22 (the f32 bound needs D·2^-23 < 1/2)")));
        }
        let p = Params::new_form(n, dim, form);
        let consts = [
            p.inv_one_minus_gamma_d,
            p.gamma_d,
            p.alpha1,
            p.abs_a,
            p.inv_one_minus_u,
            p.u,
            p.gamma_ref,
            p.abs_e,
            p.safety,
            p.rel_margin,
        ];
        if consts.iter().any(|c| !c.is_finite() || *c < 0.0) || p.inv_one_minus_gamma_d < 1.0 {
            return Err(GpuError::Domain(format!("the f32 bound's constants are not finite for D = {dim}")));
        }
        // The largest U any pair can have (|y| ≤ 1, so s̃ ≤ 4D(1 + γ_D) squared, 2D(1 + γ_D)
        // cityblock, 2 chebyshev) must stay below the kernels' "no value" sentinel 1e38 and be
        // finite; the row norms are at most √D, D and 1.
        let d = dim as f64;
        let (s_max, n_max) = match form {
            Form::Squared => (4.0 * d, d.sqrt()),
            Form::Cityblock => (2.0 * d, d),
            Form::Chebyshev => (2.0, 1.0),
        };
        let (s_max, n_max) = (f32_up(s_max * 1.01), f32_up(n_max * 1.01));
        let top = s_max + p.eps_of(s_max, n_max, n_max);
        if !top.is_finite() || top >= 1.0e37 {
            return Err(GpuError::Domain(format!("the f32 bound is not finite for D = {dim}")));
        }
        Ok(p)
    }

    /// These constants with `extra` (scaled units, ≥ 0) added to `abs_e`, rounded up: the gap
    /// between a cosine space's reference and its unit rows' squared distances
    /// (the prepared space's `abs_extra`). `abs_e` enters e additively and, inside the
    /// root, monotonically, so a larger `abs_e` keeps every step of the proof.
    pub fn with_extra(mut self, extra: f64) -> Self {
        if extra > 0.0 {
            self.abs_e = f32_up(f64::from(self.abs_e) + extra);
        }
        self
    }

    /// [`Params::checked`] for a prepared space of `n` points of `dim` coordinates whose
    /// metric adds `abs_extra` (the prepared space's `abs_extra`; 0 for Euclidean spaces).
    pub fn checked_with_extra(n: usize, dim: usize, abs_extra: f64) -> Result<Self, GpuError> {
        Params::checked_form_with_extra(n, dim, Form::Squared, abs_extra)
    }

    /// [`Params::checked_with_extra`] for the distance form `form`.
    pub fn checked_form_with_extra(n: usize, dim: usize, form: Form, abs_extra: f64) -> Result<Self, GpuError> {
        let p = Params::checked_form(n, dim, form)?.with_extra(abs_extra);
        if !p.abs_e.is_finite() {
            return Err(GpuError::Domain("the f32 bound's absolute term is not finite".into()));
        }
        Ok(p)
    }

    /// ε for the f32 distance value `s` (squared, cityblock or chebyshev, by the form) between
    /// rows with norms `ni`, `nj` (CPU twin of `eps_of`; the same operations in the same order).
    pub fn eps_of(&self, s: f32, ni: f32, nj: f32) -> f32 {
        if self.form == 0 { self.eps_squared(s, ni, nj) } else { self.eps_linear(s, ni, nj) }
    }

    /// `max(s, 0)`, NaN → 0 as `f32::max` gives it, written as a compare and select: wasm's
    /// `f32.max` propagates NaN, so `f32::max` there is a libm call in every lane of the
    /// bounds' loop. (For s = −0 this gives +0 where `max` may give −0; `s + abs_e` and the
    /// bound are the same either way.)
    #[inline(always)]
    fn not_negative(s: f32) -> f32 {
        if s > 0.0 { s } else { 0.0 }
    }

    /// [`Params::eps_of`] of the squared form, without the branch (so that a loop over pairs
    /// vectorises: the CPU's certified rows, `resources::certified_rows`).
    #[inline(always)]
    pub fn eps_squared(&self, s: f32, ni: f32, nj: f32) -> f32 {
        let a = self.alpha1 * (ni + nj) + self.abs_a;
        let delta = ((Self::not_negative(s) + self.abs_e) * self.inv_one_minus_gamma_d).sqrt();
        let t = (delta + a) * self.inv_one_minus_u;
        let e = self.gamma_d * delta * delta + (self.u * t + a) * (delta + t) + self.gamma_ref * t * t + self.abs_e;
        self.safety * e + self.rel_margin * s
    }

    /// [`Params::eps_of`] of the linear forms (cityblock, chebyshev): Δ ≥ Σ|δ_c| (or max),
    /// T ≥ S, no square root.
    #[inline(always)]
    fn eps_linear(&self, s: f32, ni: f32, nj: f32) -> f32 {
        let a = self.alpha1 * (ni + nj) + self.abs_a;
        let delta = (Self::not_negative(s) + self.abs_e) * self.inv_one_minus_gamma_d;
        let t = (delta + a) * self.inv_one_minus_u;
        let e = self.gamma_d * delta + (self.u * t + a) + self.gamma_ref * t + self.abs_e;
        self.safety * e + self.rel_margin * s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_refuses_dimensions_beyond_the_bound() {
        assert!(Params::checked(10, MAX_DIM).is_err());
        assert!(Params::checked(10, MAX_DIM - 1).is_ok());
        assert!(Params::checked(10, 1).is_ok());
        let p = Params::checked(10, 70_000).unwrap();
        assert!(p.eps_of(1.0, 1.0, 1.0).is_finite());
    }

    /// The uniform block is 96 bytes (24 words), the layout of bound.wgsl's `Params`.
    #[test]
    fn params_are_twenty_four_words() {
        assert_eq!(std::mem::size_of::<Params>(), 96);
        assert_eq!(Params::new_form(1, 3, Form::Chebyshev).form(), Form::Chebyshev);
        assert_eq!(Params::new(1, 3).form(), Form::Squared);
    }

    /// The linear form (cityblock, chebyshev): the evaluated ε covers the exact bound
    /// e = γ Δ + (uT + A) + γ_ref T + abs_e with room for rounding U and L either way, at many
    /// magnitudes and dimensions (docs/exactness.md, "Cityblock and Chebyshev on the GPU").
    #[test]
    fn f32_evaluation_of_linear_eps_covers_the_exact_bound() {
        for form in [Form::Cityblock, Form::Chebyshev] {
            for dim in [1usize, 3, 50, 784, 4096, 70_000, MAX_DIM - 1] {
                let p = Params::checked_form(2, dim, form).unwrap();
                let d = dim as f64;
                let gd = if form == Form::Chebyshev { 0.0 } else { d * U32 / (1.0 - d * U32) };
                let gr = 1.01 * (d + 2.0) * U64 / (1.0 - (d + 2.0) * U64);
                let alpha = 1.0001 * (U32_HOST + 2.0 * U64) / (1.0 - U32_HOST);
                let top = if form == Form::Chebyshev { 2.0 } else { 2.0 * d };
                for s in [0.0f32, 1e-45, 1e-38, 1e-30, 1e-10, 1e-3, 0.5, 2.0, top as f32] {
                    for nn in [0.0f32, 1e-20, 0.5, 1.0, d as f32] {
                        let s64 = f64::from(s);
                        let abs_e = (2.0 * d + 1.0) * MIN_NORMAL32;
                        let delta = (s64 + abs_e) / (1.0 - gd);
                        let a = (1.0 + U32) * alpha * 2.0 * f64::from(nn) + 4.0 * d * MIN_NORMAL32;
                        let t = (delta + a) / (1.0 - U32);
                        let e = gd * delta + (U32 * t + a) + gr * t + abs_e;
                        let eps = f64::from(p.eps_of(s, nn, nn));
                        assert!(eps - e >= U32 * (s64 + eps), "{form:?} D={dim} s={s} N={nn}: ε {eps:e} vs e {e:e}");
                    }
                }
            }
        }
    }

    /// The evaluated ε is at least twice the exact bound e minus its rounding: a direct check
    /// in f64 of the f32 evaluation at many magnitudes and dimensions.
    #[test]
    fn f32_evaluation_of_eps_covers_the_exact_bound() {
        for dim in [1usize, 3, 50, 784, 4096, 70_000, MAX_DIM - 1] {
            let p = Params::new(2, dim);
            let d = dim as f64;
            let gd = d * U32 / (1.0 - d * U32);
            let gr = 1.01 * (d + 2.0) * U64 / (1.0 - (d + 2.0) * U64);
            let alpha = 1.0001 * (U32_HOST + 2.0 * U64) / (1.0 - U32_HOST);
            for s in [0.0f32, 1e-45, 1e-38, 1e-30, 1e-10, 1e-3, 0.5, 2.0, 4.0 * dim as f32] {
                for nn in [0.0f32, 1e-20, 0.5, (dim as f32).sqrt()] {
                    let s64 = f64::from(s);
                    let abs_e = (4.0 * d + 2.0 * d) * MIN_NORMAL32;
                    let delta = ((s64 + abs_e) / (1.0 - gd)).sqrt();
                    let a = (1.0 + U32) * alpha * 2.0 * f64::from(nn) + d.sqrt() * 2f64.powi(-123);
                    let t = (delta + a) / (1.0 - U32);
                    let e = gd * delta * delta + (U32 * t + a) * (delta + t) + gr * t * t + abs_e;
                    let eps = f64::from(p.eps_of(s, nn, nn));
                    // Room left for rounding U = s̃ + ε and L = s̃ − ε either way.
                    assert!(eps - e >= U32 * (s64 + eps), "D={dim} s={s} N={nn}: ε {eps:e} vs e {e:e}");
                }
            }
        }
    }
}
