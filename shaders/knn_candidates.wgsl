// Certified kNN candidates from the block's squared distances (distances.wgsl, binding 3).
// One workgroup per row i. With U = s̃ + ε and L = s̃ - ε:
//   pass 1  τ' = max over threads of each thread's kt-th smallest U (≥ the row's k-th smallest U)
//   pass 2  the U ≤ τ' go to a workgroup pool; if it did not overflow, τ = its exact k-th smallest
//   pass 3  every j ≠ i not proven beyond τ (!(L > τ), so NaN stays in) is a candidate:
//           (j, bits of s̃) into `cands`, the count and the pool size into `counts`.
// A count above P.cap means overflow: the host recomputes that row on the CPU.
// Completeness witness: each invocation writes its trips of the three j loops and of the pool
// ranking loop into `trips`; the host checks them against the loops' known lengths.
// CPU twin: src/gpu/twin/knn_candidates.rs.

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read_write> counts: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> cands: array<vec2<u32>>;
@group(0) @binding(6) var<storage, read_write> trips: array<vec2<u32>>;


var<workgroup> tau1_bits: atomic<u32>;
var<workgroup> tau_bits: atomic<u32>;
var<workgroup> pool_n: atomic<u32>;
var<workgroup> out_n: atomic<u32>;
var<workgroup> pool: array<f32, POOL>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let ni = norms[i];
    let row = r * P.n;
    if (tid == 0u) {
        atomicStore(&tau1_bits, 0u);
        atomicStore(&tau_bits, INF_BITS);
        atomicStore(&pool_n, 0u);
        atomicStore(&out_n, 0u);
    }
    workgroupBarrier();

    var j_trips = 0u;
    var top: array<f32, KT_MAX>;
    for (var t = 0u; t < KT_MAX; t++) {
        top[t] = F32_MAX;
    }
    for (var j = tid; j < P.n; j += WG) {
        j_trips += 1u;
        if (j == i) { continue; }
        let s = s_in[row + j];
        let up = s + eps_of(s, ni, norms[j]);
        if (up < top[P.kt - 1u]) {
            var p = P.kt - 1u;
            while (p > 0u && top[p - 1u] > up) {
                top[p] = top[p - 1u];
                p = p - 1u;
            }
            top[p] = up;
        }
    }
    atomicMax(&tau1_bits, bitcast<u32>(top[P.kt - 1u]));
    workgroupBarrier();
    let tau1 = bitcast<f32>(atomicLoad(&tau1_bits));

    for (var j = tid; j < P.n; j += WG) {
        j_trips += 1u;
        if (j == i) { continue; }
        let s = s_in[row + j];
        let up = s + eps_of(s, ni, norms[j]);
        if (up <= tau1) {
            let p = atomicAdd(&pool_n, 1u);
            if (p < POOL) { pool[p] = up; }
        }
    }
    workgroupBarrier();
    let m = atomicLoad(&pool_n);
    var pool_trips = 0u;
    if (m <= POOL) {
        for (var p = tid; p < m; p += WG) {
            let x = pool[p];
            var less = 0u;
            var leq = 0u;
            for (var q = 0u; q < m; q++) {
                less += select(0u, 1u, pool[q] < x);
                leq += select(0u, 1u, pool[q] <= x);
                pool_trips += 1u;
            }
            if (less < P.k && leq >= P.k) {
                atomicMin(&tau_bits, bitcast<u32>(x));
            }
        }
    }
    workgroupBarrier();
    var tau = tau1;
    if (m <= POOL) {
        tau = min(tau1, bitcast<f32>(atomicLoad(&tau_bits)));
    }

    for (var j = tid; j < P.n; j += WG) {
        j_trips += 1u;
        if (j == i) { continue; }
        let s = s_in[row + j];
        let lo = s - eps_of(s, ni, norms[j]);
        if (!(lo > tau)) {
            let p = atomicAdd(&out_n, 1u);
            if (p < P.cap) { cands[r * P.cap + p] = vec2<u32>(j, bitcast<u32>(s)); }
        }
    }
    trips[r * WG + tid] = vec2<u32>(j_trips, pool_trips);
    workgroupBarrier();
    if (tid == 0u) {
        counts[r] = vec2<u32>(atomicLoad(&out_n), m);
    }
}
