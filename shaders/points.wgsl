// The prepared points and an f32 squared distance, for the uncertified Fast kernels
// (pair_stats, density). Concatenated after bound.wgsl by src/gpu/shaders.rs.

@group(0) @binding(1) var<storage, read> pts: array<f32>;

// Σ_c (y_ic - y_jc)² in f32.
fn sqdist(i: u32, j: u32) -> f32 {
    var s = 0.0;
    let a = i * P.dim;
    let b = j * P.dim;
    for (var c = 0u; c < P.dim; c++) {
        let t = pts[a + c] - pts[b + c];
        s = s + t * t;
    }
    return s;
}
