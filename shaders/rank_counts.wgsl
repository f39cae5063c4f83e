// Certified rank counting for selected pairs (T&C, MRRE), from the block's squared distances
// (distances.wgsl, binding 3). One workgroup per row i; the row's queries j_q (at most KQ_MAX)
// sit in workgroup memory with their intervals [L_q, U_q], sorted once by L. Every l in this
// dispatch's range [P.lo, P.hi), l ≠ i, is classified against every query:
//   U_l < L_q                     → l is certainly before j_q: certain[q] += 1
//   L_l > U_q                     → l is certainly after j_q
//   anything else                 → too close to call, unless l = j_q: (q, l) into the overlaps
// but without comparing l with each query. With the queries ordered by L (position t, L_t
// ascending), the queries l is certainly before are the positions t ≥ p, p = #{t : L_t ≤ U_l},
// found by binary search (⌈log₂(k + 1)⌉ steps; the two ends are tried first, which settles
// every l outside the queries' band in one or two comparisons); they are counted with one
// workgroup atomic into a difference array (diff[p] += 1), whose prefix sums are the certain
// counts. The overlaps lie below p, and above p0 = #{t : M_t < L_l}, M_t = max_{t' ≤ t} U_t'
// (the prefix maximum of U, non-decreasing): every t < p0 has U_t ≤ M_t < L_l. p0 is p when
// M_{p-1} < L_l (one comparison), else a second binary search. Only [p0, p) is walked, each
// position tested with the original condition.
// NaN: an interval end that is NaN becomes the sentinel that keeps the original outcome (a
// comparison with NaN is false): L → −F32_MAX, U → F32_MAX (every real U and L lies in
// [0, 1e37], Params::checked). The tests are made on integer bits, so no compiler assumption
// about NaN can change them, and every comparison after it is between real numbers. (Same
// outcomes as comparing each l with every query: twin::rank_counts_all_pairs, tested.)
// The host runs every range of a row block (one range of all n on a hardware GPU, 6144 points
// each on a software adapter, whose loop-trip budget they respect) in one batch: the counts
// and the row's `info` (witness sums, overlap count) accumulate over the ranges on the device
// (cleared once per block, read back once), and the overlap list continues where the previous
// range left it (overlap o of row r in slots[o·rows + r]). The last range (P.hi = P.n) copies
// each row's overlaps, when they fit its P.cap slots (else the host recomputes the row), to
// `dense` at a base reserved with one atomic per row, so the host reads back only the overlaps
// there are. The host decides them in f64. `counts` holds the certain counts (rows × k) and
// after them, for the Fast posture, the overlaps that f32 alone puts before j_q.
// Completeness witness: each invocation counts the trips of every loop (query loads, the sort's
// rank loop, the prefix loops, the stores; the l loop; the binary searches, with the searches
// it started; the overlap walks, with the positions p - p0 it meant to walk; the copy); the
// workgroup sums them (the first RANK_WITNESS words of the row's `info`, accumulated over the
// ranges) and the host checks every sum against the loops' known lengths, the searches against
// S per search started and the walks against the positions meant. A loop cut short anywhere
// leaves its sum short. `info` then holds the comparisons made outside loops (a work count),
// the overlap count and the dense base.
// Point tiles (a streamed plan): s_in holds the tile's points P.col0..P.col0 + P.n (l of the
// range is point P.col0 + l), the counts, witness and overlaps accumulate over the tiles as
// over ranges, the last range of the last tile (P.more = 0) copies the overlaps, and the
// queries' s̃ (P.streamed = 1) come after their indices in `queries`, computed by the host as
// a sequential f32 sum (a valid evaluation of the bound, docs/exactness.md Step 3).
// CPU twin: src/gpu/twin/rank_counts.rs.

@group(0) @binding(3) var<storage, read> s_in: array<f32>;
@group(0) @binding(4) var<storage, read> queries: array<u32>;
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;
@group(0) @binding(6) var<storage, read_write> slots: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read_write> info: array<u32>;
@group(0) @binding(8) var<storage, read_write> dense: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read_write> dense_n: array<atomic<u32>>;

// By query slot q.
var<workgroup> a_j: array<u32, KQ_MAX>;
var<workgroup> a_s: array<f32, KQ_MAX>;
var<workgroup> a_l: array<f32, KQ_MAX>;
var<workgroup> a_u: array<f32, KQ_MAX>;
// By position t (queries sorted by L, ties by slot): the slot, L, and the prefix maximum of U.
var<workgroup> perm: array<u32, KQ_MAX>;
var<workgroup> sl: array<f32, KQ_MAX>;
var<workgroup> mu: array<f32, KQ_MAX>;
// diff[p]: l's certainly before the positions p..k-1; then its prefix sums (the certain counts).
var<workgroup> diff: array<atomic<u32>, KQ_MAX>;
var<workgroup> wg_fst: array<atomic<u32>, KQ_MAX>;
var<workgroup> n_ov: atomic<u32>;
var<workgroup> base: atomic<u32>;
var<workgroup> wg_w: array<atomic<u32>, RANK_INFO>; // the first RANK_WITNESS + 1 used

// Interval ends with NaN replaced (on the bits) by the value that keeps every comparison's
// original outcome.
fn lower_end(x: f32) -> f32 {
    if ((bitcast<u32>(x) & 0x7fffffffu) > INF_BITS) { return -F32_MAX; }
    return x;
}
fn upper_end(x: f32) -> f32 {
    if ((bitcast<u32>(x) & 0x7fffffffu) > INF_BITS) { return F32_MAX; }
    return x;
}

@compute @workgroup_size(RANK_WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    let ni = norms[i];
    let row = r * P.n;
    let k = P.k;
    // Binary search steps: the bit length of k (⌈log₂(k + 1)⌉), enough for any range of ≤ k.
    let steps = 32u - countLeadingZeros(k);
    var w_setup = 0u;   // query loads, the sort's rank loop, the stores
    var w_prefix = 0u;  // thread 0's prefix loops
    var w_l = 0u;       // l loop
    var w_search = 0u;  // binary search trips
    var w_started = 0u; // binary searches started
    var w_walk = 0u;    // overlap walk trips
    var w_meant = 0u;   // positions the walks were to visit (p - p0)
    var w_copy = 0u;    // the copy to `dense`
    var w_cmp = 0u;     // end tests and probes (straight-line comparisons)
    var c0 = 0u;        // l's certainly before every query (diff[0], added once)
    for (var q = tid; q < k; q += RANK_WG) {
        w_setup += 1u;
        let j = queries[r * k + q];
        // A streamed plan's query may lie in another tile: its s̃ follows the indices.
        var s = 0.0;
        if (P.streamed == 1u) {
            s = bitcast<f32>(queries[P.rows * k + r * k + q]);
        } else {
            s = s_in[row + j];
        }
        let e = eps_of(s, ni, norms[j]);
        a_j[q] = j;
        a_s[q] = s;
        a_l[q] = lower_end(s - e);
        a_u[q] = upper_end(s + e);
    }
    let o_info = r * RANK_INFO;
    if (tid == 0u) {
        atomicStore(&n_ov, info[o_info + RANK_WITNESS + 1u]);
    }
    workgroupBarrier();
    // Sort by L (a rank sort: position = smaller L's, plus equal L's of smaller slots).
    for (var q = tid; q < k; q += RANK_WG) {
        let x = a_l[q];
        var pos = 0u;
        for (var o = 0u; o < k; o++) {
            w_setup += 1u;
            let y = a_l[o];
            pos += select(0u, 1u, y < x || (y == x && o < q));
        }
        perm[pos] = q;
        sl[pos] = x;
    }
    workgroupBarrier();
    if (tid == 0u) {
        var m = -F32_MAX;
        for (var t = 0u; t < k; t++) {
            w_prefix += 1u;
            m = max(m, a_u[perm[t]]);
            mu[t] = m;
        }
    }
    workgroupBarrier();

    let top = sl[k - 1u];
    let bottom = sl[0];
    for (var lt = P.lo + tid; lt < P.hi; lt += RANK_WG) {
        w_l += 1u;
        let l = P.col0 + lt; // the point of the space (lt of the tile)
        if (l == i) { continue; }
        let s = s_in[row + lt];
        let e = eps_of(s, ni, norms[l]);
        let lo_l = lower_end(s - e);
        let up_l = upper_end(s + e);
        // p = #{t : L_t ≤ U_l}; l is certainly before the queries at positions p..k-1.
        var p = k;
        w_cmp += 1u;
        if (top > up_l) {
            w_cmp += 1u;
            if (bottom > up_l) {
                p = 0u;
            } else {
                // L_0 ≤ U_l < L_{k-1}: the first t in [1, k-1] with L_t > U_l.
                w_started += 1u;
                var a = 1u;
                var len = k - 2u;
                for (var st = 0u; st < steps; st++) {
                    w_search += 1u;
                    if (len > 0u) {
                        let h = len / 2u;
                        if (sl[a + h] > up_l) { len = h; } else { a = a + h + 1u; len = len - h - 1u; }
                    }
                }
                p = a;
            }
            if (p == 0u) { c0 += 1u; } else { atomicAdd(&diff[p], 1u); }
        }
        if (p == 0u) { continue; }
        // p0 = #{t : M_t < L_l}: below p0 every U_t < L_l (certainly after).
        var p0 = p;
        w_cmp += 1u;
        if (!(mu[p - 1u] < lo_l)) {
            // M_{p-1} ≥ L_l: the first t in [0, p-1] with M_t ≥ L_l.
            w_started += 1u;
            var a = 0u;
            var len = p - 1u;
            for (var st = 0u; st < steps; st++) {
                w_search += 1u;
                if (len > 0u) {
                    let h = len / 2u;
                    if (mu[a + h] < lo_l) { a = a + h + 1u; len = len - h - 1u; } else { len = h; }
                }
            }
            p0 = a;
        }
        w_meant += p - p0;
        for (var t = p0; t < p; t++) {
            w_walk += 1u;
            let q = perm[t];
            if (!(lo_l > a_u[q]) && l != a_j[q]) {
                let o = atomicAdd(&n_ov, 1u);
                if (o < P.cap) { slots[o * P.rows + r] = vec2<u32>(q, l); }
                if (s < a_s[q] || (s == a_s[q] && l < a_j[q])) { atomicAdd(&wg_fst[q], 1u); }
            }
        }
    }
    atomicAdd(&diff[0], c0);
    workgroupBarrier();
    storageBarrier();
    let last = P.hi == P.n && P.more == 0u;
    let cnt = atomicLoad(&n_ov);
    let kept = select(0u, cnt, last && cnt <= P.cap);
    // Prefix sums of the difference array: the certain count of every position; the dense base.
    if (tid == 0u) {
        var run = 0u;
        for (var t = 0u; t < k; t++) {
            w_prefix += 1u;
            run += atomicLoad(&diff[t]);
            atomicStore(&diff[t], run);
        }
        atomicStore(&base, atomicAdd(&dense_n[0], kept));
    }
    workgroupBarrier();
    let fast0 = P.rows * k;
    for (var t = tid; t < k; t += RANK_WG) {
        w_setup += 1u;
        let q = perm[t];
        counts[r * k + q] += atomicLoad(&diff[t]);
        counts[fast0 + r * k + q] += atomicLoad(&wg_fst[q]);
    }
    let b = atomicLoad(&base);
    for (var o = tid; o < kept; o += RANK_WG) {
        w_copy += 1u;
        dense[b + o] = slots[o * P.rows + r];
    }
    atomicAdd(&wg_w[0], w_setup);
    atomicAdd(&wg_w[1], w_prefix);
    atomicAdd(&wg_w[2], w_l);
    atomicAdd(&wg_w[3], w_search);
    atomicAdd(&wg_w[4], w_started);
    atomicAdd(&wg_w[5], w_walk);
    atomicAdd(&wg_w[6], w_meant);
    atomicAdd(&wg_w[7], w_copy);
    atomicAdd(&wg_w[8], w_cmp);
    workgroupBarrier();
    // Written out, not looped: the last loop of the kernel is the witnessed copy loop.
    if (tid == 0u) {
        info[o_info] += atomicLoad(&wg_w[0]);
        info[o_info + 1u] += atomicLoad(&wg_w[1]);
        info[o_info + 2u] += atomicLoad(&wg_w[2]);
        info[o_info + 3u] += atomicLoad(&wg_w[3]);
        info[o_info + 4u] += atomicLoad(&wg_w[4]);
        info[o_info + 5u] += atomicLoad(&wg_w[5]);
        info[o_info + 6u] += atomicLoad(&wg_w[6]);
        info[o_info + 7u] += atomicLoad(&wg_w[7]);
        info[o_info + 8u] += atomicLoad(&wg_w[8]);
        info[o_info + 9u] = cnt;
        if (last) { info[o_info + 10u] = b; }
    }
}
