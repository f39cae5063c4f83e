//! The proven f32 error bound ε (docs/exactness.md, "The f32 error bound") — the host-side
//! constants and the CPU twin of `eps_of` in `shaders/bound.wgsl`.

use bytemuck::{Pod, Zeroable};

/// Unit roundoff of f32.
pub const U32: f64 = 1.0 / 16_777_216.0; // 2^-24
/// Unit roundoff of f64.
pub const U64: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53
/// Smallest normal f32: values below it may be flushed to zero by a GPU.
pub const MIN_NORMAL32: f64 = 1.175_494_350_822_287_5e-38;

/// The uniform block of every certified kernel (layout of `Params` in bound.wgsl).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub n: u32,
    pub dim: u32,
    pub k: u32,
    pub row0: u32,
    pub cap: u32,
    pub kt: u32,
    pub pad0: u32,
    pub pad1: u32,
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
    pub pad2: f32,
    pub pad3: f32,
}

/// Rounds a positive f64 up to an f32 (never below the value).
pub fn f32_up(x: f64) -> f32 {
    let y = x as f32;
    if (y as f64) < x { y.next_up() } else { y }
}

impl Params {
    /// The bound's constants for dimension `dim` (each rounded up to f32).
    pub fn new(n: usize, dim: usize) -> Self {
        let d = dim as f64;
        let gamma_d = d * U32 / (1.0 - d * U32);
        // |y - 2^e (x - μ)| ≤ α|y| + 2^-125 for each coordinate (f64 centring, f32 rounding, FTZ).
        let alpha = 1.0001 * (U32 + 2.0 * U64) / (1.0 - U32);
        let sqrt_d = d.sqrt();
        let gamma_ref = 1.01 * (d + 2.0) * U64 / (1.0 - (d + 2.0) * U64);
        Params {
            n: n as u32,
            dim: dim as u32,
            k: 0,
            row0: 0,
            cap: 0,
            kt: 0,
            pad0: 0,
            pad1: 0,
            inv_one_minus_gamma_d: f32_up(1.0 / (1.0 - gamma_d)),
            gamma_d: f32_up(gamma_d),
            alpha1: f32_up((1.0 + U32) * alpha),
            abs_a: f32_up((1.0 + U32) * 3.0 * sqrt_d * 2.0 * MIN_NORMAL32),
            inv_one_minus_u: f32_up(1.0 / (1.0 - U32)),
            u: U32 as f32,
            gamma_ref: f32_up(gamma_ref),
            abs_e: f32_up(4.0 * d * MIN_NORMAL32),
            safety: 2.0,
            rel_margin: (1.0f64 / 1_048_576.0) as f32, // 2^-20
            pad2: 0.0,
            pad3: 0.0,
        }
    }

    /// ε for the f32 squared distance `s` between rows with norms `ni`, `nj` (CPU twin of
    /// `eps_of`; the same operations in the same order).
    pub fn eps_of(&self, s: f32, ni: f32, nj: f32) -> f32 {
        let delta = (s.max(0.0) * self.inv_one_minus_gamma_d).sqrt();
        let a = self.alpha1 * (ni + nj) + self.abs_a;
        let t = (delta + a) * self.inv_one_minus_u;
        let e = self.gamma_d * delta * delta + (self.u * t + a) * (delta + t) + self.gamma_ref * t * t + self.abs_e;
        self.safety * e + self.rel_margin * s
    }
}
