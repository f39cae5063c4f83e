// Tiled squared distances with error bounds: for each row i of the block and every j, s̃(i, j)
// and ε(i, j). Used by the bound property test and the distance benchmark; never by measures
// (no n×n output is ever needed there). CPU twin: src/gpu/twin.rs::sqdist.

@group(0) @binding(3) var<storage, read_write> out_s: array<f32>;
@group(0) @binding(4) var<storage, read_write> out_e: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    for (var j = tid; j < P.n; j += WG) {
        let s = sqdist(i, j);
        out_s[r * P.n + j] = s;
        out_e[r * P.n + j] = eps_of(s, norms[i], norms[j]);
    }
}
