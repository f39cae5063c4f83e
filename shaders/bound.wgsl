// Shared prelude of every GPU kernel: parameters, row norms and the proven error bound of an
// f32 squared distance (docs/exactness.md, "The f32 error bound"). Concatenated in front of
// each kernel by src/gpu/shaders.rs. CPU twin: src/gpu/bound.rs.

struct Params {
    n: u32,
    dim: u32,
    k: u32,          // kNN: neighbours wanted; ranks: queries per row
    row0: u32,       // first row of this dispatch
    cap: u32,        // kNN: candidate slots per row; ranks: overlap slots per row
    kt: u32,         // kNN: per-thread list length ceil(k / WG)
    lo: u32,         // this dispatch's range: coordinates (distances) or points (ranks)
    hi: u32,
    inv_one_minus_gamma_d: f32,
    gamma_d: f32,
    alpha1: f32,
    abs_a: f32,
    inv_one_minus_u: f32,
    u: f32,
    gamma_ref: f32,
    abs_e: f32,
    safety: f32,
    rel_margin: f32,
    rows: u32,       // rows of this block (distances_tiled, rank_counts)
    tiles: u32,      // knn_candidates: tile minima per row (0: none)
    form: u32,       // FORM_SQUARED, FORM_CITYBLOCK or FORM_CHEBYSHEV (bound::Form)
    col0: u32,       // streamed plans: the tile's first point (the distances hold col0..col0+n)
    streamed: u32,   // rank_counts: the queries' s̃ follow their indices (bits)
    more: u32,       // rank_counts: tiles follow this one
}

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(2) var<storage, read> norms: array<f32>;

// WG, KT_MAX, POOL and KQ_MAX are put in front of this prelude by src/gpu/shaders.rs from the
// host's constants, so both sides share one definition.
const INF_BITS: u32 = 0x7f800000u;
// The "no value yet" sentinel, above any U the kernels compute (the host checks that, see
// Params::checked; a constant inf is a WGSL error, and some translators print f32::MAX as a
// literal that no longer fits).
const F32_MAX: f32 = 1.0e38;

// ε(i, j): |s̃ - s_ref| ≤ ε for the reference's f64 value s_ref (in scaled units). The squared
// form bounds squared distances (docs/exactness.md, "The f32 error bound"); the linear form
// bounds sums and maxima of magnitudes, cityblock and chebyshev ("Cityblock and Chebyshev on
// the GPU"), with the norms N ≥ ‖y‖₁ or ‖y‖∞ and γ_D = 0 for a maximum.
fn eps_of(s: f32, ni: f32, nj: f32) -> f32 {
    let a = P.alpha1 * (ni + nj) + P.abs_a;
    var e: f32;
    if (P.form == FORM_SQUARED) {
        let delta = sqrt((max(s, 0.0) + P.abs_e) * P.inv_one_minus_gamma_d);
        let t = (delta + a) * P.inv_one_minus_u;
        e = P.gamma_d * delta * delta + (P.u * t + a) * (delta + t) + P.gamma_ref * t * t + P.abs_e;
    } else {
        let delta = (max(s, 0.0) + P.abs_e) * P.inv_one_minus_gamma_d;
        let t = (delta + a) * P.inv_one_minus_u;
        e = P.gamma_d * delta + (P.u * t + a) + P.gamma_ref * t + P.abs_e;
    }
    return P.safety * e + P.rel_margin * s;
}

