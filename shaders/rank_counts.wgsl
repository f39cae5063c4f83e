// Certified rank counting for selected pairs (T&C, MRRE), from the block's squared distances
// (distances.wgsl, binding 3). One workgroup per row i; the row's queries j_q (at most 128) sit
// in workgroup memory with their intervals [L_q, U_q]. Every l in this dispatch's range
// [P.lo, P.hi), l ≠ i, is compared with every query, a tile of RANK_TILE l at a time:
//   U_l < L_q                     → l is certainly before j_q: certain[q] += 1
//   L_l > U_q                     → l is certainly after j_q
//   anything else (NaN included)  → too close to call, unless l = j_q: (q, l) into the overlaps
// The host runs every range of a row block (one range of all n on a hardware GPU, 6144 points
// each on a software adapter, whose loop-trip budget they respect) in one batch: `certain`, `fast`, `ocount` and
// `trips` accumulate over the ranges on the device (cleared once per block, read back once),
// and the overlap list continues where the previous range left it. Overlap p of row r is at
// overlaps[p·rows + r] (slot-major), so the host reads back only the first slots of every row. The host decides the
// overlaps in f64; a list longer than P.cap sends the row to the CPU. `fast` counts, for the
// Fast posture, the overlaps that f32 alone puts before j_q.
// Work split: each query has `lanes` = max(1, WG / k) invocations, lane g taking the tile's
// entries x ≡ g (mod lanes), so that with k = 20 queries 60 of the 64 invocations compare (not
// 20); the lanes' counts meet in workgroup atomics once per range. With k > 64 one lane per
// query and two queries per invocation (halves), as before.
// Completeness witness: each invocation adds its trips of the query loops (load and store),
// tile, half and inner loops into `trips`; the host checks the sums over the ranges against
// the loops' known lengths.
// CPU twin: src/gpu/twin/rank_counts.rs.

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read> queries: array<u32>;
@group(0) @binding(5) var<storage, read_write> certain: array<u32>;
@group(0) @binding(6) var<storage, read_write> fast: array<u32>;
@group(0) @binding(7) var<storage, read_write> overlaps: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read_write> ocount: array<u32>;
@group(0) @binding(9) var<storage, read_write> trips: array<vec4<u32>>;

const NONE: u32 = 0xffffffffu;

var<workgroup> qj: array<u32, KQ_MAX>;
var<workgroup> qs: array<f32, KQ_MAX>;
var<workgroup> ql: array<f32, KQ_MAX>;
var<workgroup> qu: array<f32, KQ_MAX>;
// The tile: (l, bits of s̃, L, U) per entry, one vec4 read per comparison (u32, so that no
// driver can treat l as a float: floats go through bitcast, which keeps every bit).
var<workgroup> tile: array<vec4<u32>, RANK_TILE>;
var<workgroup> n_ov: atomic<u32>;
var<workgroup> wg_cnt: array<atomic<u32>, KQ_MAX>;
var<workgroup> wg_fst: array<atomic<u32>, KQ_MAX>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let ni = norms[i];
    let row = r * P.n;
    var q_trips = 0u;
    for (var q = tid; q < P.k; q += WG) {
        q_trips += 1u;
        let j = queries[r * P.k + q];
        let s = s_in[row + j];
        let e = eps_of(s, ni, norms[j]);
        qj[q] = j;
        qs[q] = s;
        ql[q] = s - e;
        qu[q] = s + e;
    }
    if (tid == 0u) {
        atomicStore(&n_ov, ocount[r]);
    }
    workgroupBarrier();

    let kw = min(P.k, WG);
    let lanes = max(1u, WG / P.k);
    let g = tid / kw;
    let q0 = tid % kw;
    var cnt0 = 0u;
    var cnt1 = 0u;
    var fst0 = 0u;
    var fst1 = 0u;
    var t_trips = 0u;
    var h_trips = 0u;
    var x_trips = 0u;
    let tiles = (P.hi - P.lo + RANK_TILE - 1u) / RANK_TILE;
    for (var t = 0u; t < tiles; t++) {
        t_trips += 1u;
        for (var m = tid; m < RANK_TILE; m += WG) {
            let l = P.lo + t * RANK_TILE + m;
            if (l < P.hi && l != i) {
                let s = s_in[row + l];
                let e = eps_of(s, ni, norms[l]);
                tile[m] = vec4<u32>(l, bitcast<u32>(s), bitcast<u32>(s - e), bitcast<u32>(s + e));
            } else {
                tile[m] = vec4<u32>(NONE, 0u, 0u, 0u);
            }
        }
        workgroupBarrier();
        for (var h = 0u; h < 2u; h++) {
            h_trips += 1u;
            let q = q0 + h * WG;
            if (g < lanes && q < P.k) {
                var c = 0u;
                var f = 0u;
                for (var x = g; x < RANK_TILE; x += lanes) {
                    x_trips += 1u;
                    let v = tile[x];
                    let lx = v.x;
                    if (lx == NONE) { continue; }
                    if (bitcast<f32>(v.w) < ql[q]) {
                        c += 1u;
                    } else if (!(bitcast<f32>(v.z) > qu[q]) && lx != qj[q]) {
                        let p = atomicAdd(&n_ov, 1u);
                        if (p < P.cap) { overlaps[p * P.rows + r] = vec2<u32>(q, lx); }
                        let sx = bitcast<f32>(v.y);
                        if (sx < qs[q] || (sx == qs[q] && lx < qj[q])) { f += 1u; }
                    }
                }
                if (h == 0u) { cnt0 += c; fst0 += f; } else { cnt1 += c; fst1 += f; }
            }
        }
        workgroupBarrier();
    }
    if (g < lanes && q0 < P.k) {
        atomicAdd(&wg_cnt[q0], cnt0);
        atomicAdd(&wg_fst[q0], fst0);
    }
    if (g < lanes && q0 + WG < P.k) {
        atomicAdd(&wg_cnt[q0 + WG], cnt1);
        atomicAdd(&wg_fst[q0 + WG], fst1);
    }
    workgroupBarrier();
    for (var q = tid; q < P.k; q += WG) {
        q_trips += 1u;
        certain[r * P.k + q] += atomicLoad(&wg_cnt[q]);
        fast[r * P.k + q] += atomicLoad(&wg_fst[q]);
    }
    trips[r * WG + tid] += vec4<u32>(q_trips, t_trips, h_trips, x_trips);
    if (tid == 0u) {
        ocount[r] = atomicLoad(&n_ov);
    }
}
