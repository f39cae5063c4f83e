// Certified kNN candidates from the block's squared distances (distances_tiled.wgsl or
// distances.wgsl, binding 3). One workgroup per row i. With U = s̃ + ε and L = s̃ - ε:
//   τ'      an upper bound on the row's k-th smallest U: the c-th smallest (c = ⌈k/kt⌉ ≤ WG) of
//           the threads' kt-th smallest among the row's tile minima (binding 4: the smallest U
//           of each tile of points, written by distances_tiled's epilogue, P.tiles per row;
//           distinct tiles are distinct points, so the c threads at or below it hold c·kt ≥ k
//           points with U ≤ τ'), found by ranking the WG values (on their bits: every value is
//           a float in [0, F32_MAX], whose bits order as the values). Where fewer than c threads
//           have kt minima (small n, or no minima: P.tiles = 0 for the classic kernel set), τ'
//           comes from a pass over s̃ as before (the max of each thread's kt-th smallest U).
//   pass A  the U ≤ τ' go to a workgroup pool; if it did not overflow, τ = its exact k-th smallest
//   pass B  every j ≠ i not proven beyond τ (!(L > τ), so NaN stays in) is a candidate:
//           (j, bits of s̃) into the row's slots.
// Any valid evaluation of the bound is an upper bound (docs/exactness.md), so τ' may come from
// the epilogue's U and τ from this kernel's: each is ≥ the k-th smallest of some valid U's.
// Compaction: the row's candidates (when k ≤ count ≤ P.cap; otherwise the host recomputes the
// row and nothing is copied) are copied to `dense` at a base reserved with one atomic per row,
// so the host reads back only the candidates, not the slots.
// Per row `info`: count, pool size m, base, whether τ' came from the minima, then the witness
// (the workgroup's sums of its invocations' trips): the s̃ loops (2 or 3 per thread), the
// minima loop, the pool ranking loop, the copy loop. The host checks each sum against the
// loops' known lengths.
// Point tiles (a streamed plan): s_in holds the tile's points P.col0..P.col0 + P.n; the
// candidates are those of the tile (the host unites the tiles': a point within the row's
// bound over all n is within the tile's, whose k-th smallest U is no smaller), and τ' is
// capped by the k smallest U of the row's earlier tiles (binding 9), which enter the pool, so
// the pool's k-th is that of every point seen so far and later tiles give fewer candidates
// (U values are non-negative and finite when they enter the pool, so their bits order as
// their values). `info[3]` is then 1 whenever no pass over s̃ was made for τ'.
// CPU twin: src/gpu/twin/knn_candidates.rs.

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read> minima: array<f32>;
@group(0) @binding(5) var<storage, read_write> info: array<u32>;
@group(0) @binding(6) var<storage, read_write> slots: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> dense: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read_write> dense_n: array<atomic<u32>>;
// A streamed plan's k smallest U of the row's earlier tiles (P.streamed = 1), row-major, k per
// row, as complemented bits (0, the cleared buffer: an empty slot).
@group(0) @binding(9) var<storage, read_write> carried: array<u32>;

var<workgroup> tau1_bits: atomic<u32>;
var<workgroup> carried_n: atomic<u32>;
var<workgroup> carried_max: atomic<u32>;
var<workgroup> tau2_bits: atomic<u32>;
var<workgroup> tau_bits: atomic<u32>;
var<workgroup> pool_n: atomic<u32>;
var<workgroup> out_n: atomic<u32>;
var<workgroup> base: atomic<u32>;
var<workgroup> wg_w: array<atomic<u32>, 4>;
var<workgroup> pool: array<f32, POOL>;
// Each thread's kt-th smallest tile minimum (bits), ranked for τ'.
var<workgroup> tvals: array<u32, WG>;

// Inserts x into the ascending list top[0..kt) (x < top[kt-1]; NaN never enters).
fn insert(top: ptr<function, array<f32, KT_MAX>>, x: f32) {
    if (x < (*top)[P.kt - 1u]) {
        var p = P.kt - 1u;
        while (p > 0u && (*top)[p - 1u] > x) {
            (*top)[p] = (*top)[p - 1u];
            p = p - 1u;
        }
        (*top)[p] = x;
    }
}

// Pass A for point g (of the space) of row i: U ≤ τ' goes to the pool.
fn pool_one(i: u32, g: u32, s: f32, ni: f32, nj: f32, tau1: f32) {
    if (g == i) { return; }
    let up = s + eps_of(s, ni, nj);
    if (up <= tau1) {
        let p = atomicAdd(&pool_n, 1u);
        if (p < POOL) { pool[p] = up; }
    }
}

// Pass B for point g (of the space) of block row r (row i): a point not proven beyond τ is a
// candidate.
fn cand_one(i: u32, r: u32, g: u32, s: f32, ni: f32, nj: f32, tau: f32) {
    if (g == i) { return; }
    let lo = s - eps_of(s, ni, nj);
    if (!(lo > tau)) {
        let p = atomicAdd(&out_n, 1u);
        if (p < P.cap) { slots[r * P.cap + p] = vec2<u32>(g, bitcast<u32>(s)); }
    }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let ni = norms[i];
    let row = r * P.n;
    if (tid == 0u) {
        atomicStore(&tau1_bits, 0xffffffffu);
        atomicStore(&tau2_bits, 0u);
        atomicStore(&tau_bits, INF_BITS);
    }
    workgroupBarrier();

    var j_trips = 0u;
    var t_trips = 0u;
    var top: array<f32, KT_MAX>;
    for (var t = 0u; t < KT_MAX; t++) {
        top[t] = F32_MAX;
    }
    for (var t = tid; t < P.tiles; t += WG) {
        t_trips += 1u;
        insert(&top, minima[r * P.tiles + t]);
    }
    let mine = bitcast<u32>(top[P.kt - 1u]);
    tvals[tid] = mine;
    workgroupBarrier();
    // τ' = the c-th smallest of the WG values: the one with fewer than c below it and at least
    // c at or below it (counted in t_trips: WG trips per thread).
    var below = 0u;
    var at_or_below = 0u;
    for (var u = 0u; u < WG; u++) {
        t_trips += 1u;
        let o = tvals[u];
        below += select(0u, 1u, o < mine);
        at_or_below += select(0u, 1u, o <= mine);
    }
    let c = (P.k + P.kt - 1u) / P.kt;
    if (below < c && at_or_below >= c) {
        atomicMin(&tau1_bits, mine);
    }
    workgroupBarrier();
    // A streamed plan: the k smallest U of the row's earlier tiles enter the pool first (their
    // loads counted in t_trips: k per row); k of them bound the row's k-th smallest U too.
    if (P.streamed == 1u) {
        for (var q = tid; q < P.k; q += WG) {
            t_trips += 1u;
            let c = carried[r * P.k + q];
            if (c != 0u) {
                atomicAdd(&carried_n, 1u);
                atomicMax(&carried_max, ~c);
                let p = atomicAdd(&pool_n, 1u);
                if (p < POOL) { pool[p] = bitcast<f32>(~c); }
            }
        }
    }
    workgroupBarrier();
    var tau1 = bitcast<f32>(atomicLoad(&tau1_bits));
    if (atomicLoad(&carried_n) == P.k) {
        tau1 = min(tau1, bitcast<f32>(atomicLoad(&carried_max)));
    }
    // Some thread had fewer than kt minima (or none were given) and fewer than k were carried:
    // τ' from a pass over s̃.
    let full = !(tau1 < F32_MAX);
    if (full) {
        for (var t = 0u; t < KT_MAX; t++) {
            top[t] = F32_MAX;
        }
        for (var j = tid; j < P.n; j += WG) {
            j_trips += 1u;
            if (P.col0 + j == i) { continue; }
            let s = s_in[row + j];
            insert(&top, s + eps_of(s, ni, norms[P.col0 + j]));
        }
        atomicMax(&tau2_bits, bitcast<u32>(top[P.kt - 1u]));
    }
    workgroupBarrier();
    if (full) {
        tau1 = bitcast<f32>(atomicLoad(&tau2_bits));
    }

    // Four of the thread's points per trip, their loads issued together (a row's passes are
    // chains of dependent loads: more in flight per thread), then one at a time for the rest.
    // j_trips counts points, not trips, so the witness sums are the same either way; the four
    // are written out (pool_one, cand_one), not looped, so a trip runs whole or not at all.
    var j = tid;
    for (; j + 3u * WG < P.n; j += 4u * WG) {
        j_trips += 4u;
        let s4 = vec4<f32>(s_in[row + j], s_in[row + j + WG], s_in[row + j + 2u * WG], s_in[row + j + 3u * WG]);
        let g = P.col0 + j;
        let n4 = vec4<f32>(norms[g], norms[g + WG], norms[g + 2u * WG], norms[g + 3u * WG]);
        pool_one(i, g, s4.x, ni, n4.x, tau1);
        pool_one(i, g + WG, s4.y, ni, n4.y, tau1);
        pool_one(i, g + 2u * WG, s4.z, ni, n4.z, tau1);
        pool_one(i, g + 3u * WG, s4.w, ni, n4.w, tau1);
    }
    for (; j < P.n; j += WG) {
        j_trips += 1u;
        pool_one(i, P.col0 + j, s_in[row + j], ni, norms[P.col0 + j], tau1);
    }
    workgroupBarrier();
    let m = atomicLoad(&pool_n);
    var pool_trips = 0u;
    if (m <= POOL) {
        for (var p = tid; p < m; p += WG) {
            let x = pool[p];
            var less = 0u;
            var leq = 0u;
            var tied_before = 0u;
            for (var q = 0u; q < m; q++) {
                less += select(0u, 1u, pool[q] < x);
                leq += select(0u, 1u, pool[q] <= x);
                tied_before += select(0u, 1u, pool[q] == x && q < p);
                pool_trips += 1u;
            }
            if (less < P.k && leq >= P.k) {
                atomicMin(&tau_bits, bitcast<u32>(x));
            }
            // The pool's k smallest (distinct positions: ties by pool slot) carried to the next
            // tile; the pool held every carried value, so every slot below min(m, k) is written.
            let pos = less + tied_before;
            if (P.streamed == 1u && pos < P.k) { carried[r * P.k + pos] = ~bitcast<u32>(x); }
        }
    }
    workgroupBarrier();
    var tau = tau1;
    if (m <= POOL) {
        tau = min(tau1, bitcast<f32>(atomicLoad(&tau_bits)));
    }

    j = tid;
    for (; j + 3u * WG < P.n; j += 4u * WG) {
        j_trips += 4u;
        let s4 = vec4<f32>(s_in[row + j], s_in[row + j + WG], s_in[row + j + 2u * WG], s_in[row + j + 3u * WG]);
        let g = P.col0 + j;
        let n4 = vec4<f32>(norms[g], norms[g + WG], norms[g + 2u * WG], norms[g + 3u * WG]);
        cand_one(i, r, g, s4.x, ni, n4.x, tau);
        cand_one(i, r, g + WG, s4.y, ni, n4.y, tau);
        cand_one(i, r, g + 2u * WG, s4.z, ni, n4.z, tau);
        cand_one(i, r, g + 3u * WG, s4.w, ni, n4.w, tau);
    }
    for (; j < P.n; j += WG) {
        j_trips += 1u;
        cand_one(i, r, P.col0 + j, s_in[row + j], ni, norms[P.col0 + j], tau);
    }
    workgroupBarrier();
    storageBarrier();
    let count = atomicLoad(&out_n);
    // Only rows the host will refine are copied (fewer than k or more than cap: recomputed;
    // a streamed plan's tile may hold fewer than k under a carried bound: the host unites).
    let kept = select(0u, count, (count >= P.k || P.streamed == 1u) && count <= P.cap);
    if (tid == 0u) {
        atomicStore(&base, atomicAdd(&dense_n[0], kept));
    }
    workgroupBarrier();
    let b = atomicLoad(&base);
    var c_trips = 0u;
    for (var p = tid; p < kept; p += WG) {
        c_trips += 1u;
        dense[b + p] = slots[r * P.cap + p];
    }
    atomicAdd(&wg_w[0], j_trips);
    atomicAdd(&wg_w[1], t_trips);
    atomicAdd(&wg_w[2], pool_trips);
    atomicAdd(&wg_w[3], c_trips);
    workgroupBarrier();
    // Written out, not looped: the last loop of the kernel is the witnessed copy loop.
    if (tid == 0u) {
        let o = r * KNN_INFO;
        info[o] = count;
        info[o + 1u] = m;
        info[o + 2u] = b;
        info[o + 3u] = select(1u, 0u, full);
        info[o + 4u] = atomicLoad(&wg_w[0]);
        info[o + 5u] = atomicLoad(&wg_w[1]);
        info[o + 6u] = atomicLoad(&wg_w[2]);
        info[o + 7u] = atomicLoad(&wg_w[3]);
    }
}
