// Fast-posture Gaussian densities: for row i and each bandwidth σ_s (at most 8),
// Σ_j exp(−(d(i,j)/max)² / σ_s) over every j (j = i included), in f32. `max` is the space's
// largest pair distance in its scaled units. The squared distances come from distances.wgsl
// (coordinate chunks, witnessed), resident on the device (s_in[r·n + j]). The host normalises
// in f64.
// Completeness witness: each invocation counts the trips of every loop it runs into
// `trips[r·WG + tid]`; the host checks them (pair_stats::density_trips) and recomputes any
// short row on the CPU twin.
// CPU twin: src/gpu/twin/density.rs.

struct DensityParams {
    inv_max: f32,
    sigmas: u32,
    _pad0: u32,
    _pad1: u32,
    neg_sigma: array<vec4<f32>, MAX_SIGMAS / 4u>,
}

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read> Q: DensityParams;
@group(0) @binding(5) var<storage, read_write> out_rows: array<f32>;
@group(0) @binding(6) var<storage, read_write> trips: array<u32>;

var<workgroup> red: array<array<f32, WG>, MAX_SIGMAS>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let keep = norms[i] * 0.0;
    var done = 0u;
    var acc: array<f32, MAX_SIGMAS>; // zero-initialised
    for (var j = tid; j < P.n; j += WG) {
        let t = sqrt(s_in[r * P.n + j]) * Q.inv_max;
        let q = t * t;
        for (var s = 0u; s < Q.sigmas; s++) {
            acc[s] += exp(q / Q.neg_sigma[s / 4u][s % 4u]);
            done += 1u;
        }
        done += 1u;
    }
    for (var s = 0u; s < MAX_SIGMAS; s++) { red[s][tid] = acc[s]; done += 1u; }
    workgroupBarrier();
    if (tid < Q.sigmas) {
        var total = keep;
        for (var t = 0u; t < WG; t++) { total += red[tid][t]; done += 1u; }
        out_rows[r * Q.sigmas + tid] = total;
    }
    trips[r * WG + tid] = done;
}
