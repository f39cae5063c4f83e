// Squared distances with error bounds: for each row i of the block and every j, s̃(i, j)
// (computed by distances.wgsl into binding 3) and ε(i, j). Used by the bound property test
// and the distance benchmark; never by measures (no n×n output is needed there).
// CPU twin: src/gpu/twin/sqdist.rs.

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> out_s: array<f32>;
@group(0) @binding(5) var<storage, read_write> out_e: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let j = wg.y * WG + tid;
    if (j >= P.n) { return; }
    let s = s_in[r * P.n + j];
    out_s[r * P.n + j] = s;
    out_e[r * P.n + j] = eps_of(s, norms[i], norms[j]);
}
