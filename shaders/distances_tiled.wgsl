// Certified kernels' distance values (squared distances; under cityblock and chebyshev, by
// P.form, sums and maxima of |y_ic − y_jc|), tiled in the manner of a GEMM without the norm trick:
// a workgroup of TW_P × TW_R invocations owns a tile of TR = 4·RBQ·TW_R rows of the block and
// TP = 4·TW_P points; it walks the dispatch's coordinates [P.lo, P.hi) in sub-chunks of TKC,
// staging both the rows' and the points' coordinates of the sub-chunk in workgroup memory, and
// each invocation keeps a register block of 4·RBQ rows × 4 points of sums (RBQ = 1 or 2: acc0..3,
// and acc4..7 when RBQ = 2; the RBQ tests are on a constant). TW_R, TW_P, TKC and RBQ are
// chosen on the host from the adapter's limits (src/gpu/distances_tiled.rs, `Tiles::choose`)
// and written in front of this source as constants.
//
// Summation order: every accumulator acc_a[b] gets its terms t·t (|t|; chebyshev: the maximum
// with |t|), t = y_ic − y_jc, for
// c = P.lo, P.lo + 1, …, P.hi − 1 in increasing order, one term per trip of the c loop, starting
// from the previous dispatch's partial sum (or 0). That is the sequential difference form of
// distances.wgsl (and of the CPU twin `twin::sqdist`) term for term; the tiles only change which
// invocation computes a pair and where the coordinates are read from, never the order or the
// operations of one pair's sum. So the proven bound (docs/exactness.md, Step 3: any order, fused
// or not, ≤ D roundings per term, one flush per chunk boundary) covers it unchanged.
//
// Completeness witness: each invocation counts the trips of its c loop (the last loop of every
// sub-chunk, so a budget exhausted in a staging loop shows in it too); the workgroup sums all
// its invocations' trips, whether or not their rows and points are in range (every invocation
// stages coordinates for the others), and adds the sum into each of its rows' `trips[r]`. The
// host checks ⌈n/TP⌉·NT·(P.hi − P.lo) per row (`distances_tiled::trips_per_coordinate`) and sends
// any short row to the CPU reference: a short invocation anywhere in a workgroup that touched
// row r, or a workgroup that never ran, leaves row r short.
// Epilogue (the last coordinate chunk only, P.hi = P.dim): each invocation evaluates the bound
// ε of its 16 sums and U = s̃ + ε, and the workgroup keeps, for each of its rows, the smallest U
// over its TP points (the row's own point and points past n left out; on the bits, which order
// non-negative floats as their values and put NaN and negative values last): `minima`
// [row · ⌈n/TP⌉ + tile], read by knn_candidates for τ', the bound on the row's k-th smallest U
// (a pass over s̃ fewer). A tile with no such point stores the sentinel F32_MAX.
// Point tiles (a streamed plan, P.col0 > 0 or P.n below the space's count): the dispatch's
// points are col0..col0 + P.n, point p of the tile is point P.col0 + p of the space, and the
// block's distances and minima are laid out over the tile alone (row stride P.n).
// CPU twin: src/gpu/twin/distances_tiled.rs.

@group(0) @binding(1) var<storage, read> pts: array<f32>;
@group(0) @binding(3) var<storage, read_write> s_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> trips: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> minima: array<f32>;

const TR: u32 = 4u * RBQ * TW_R;
// Row quads (vec4s of four rows' coordinate) staged per coordinate.
const XQ: u32 = RBQ * TW_R;
const TP: u32 = 4u * TW_P;
const NT: u32 = TW_R * TW_P;

// Coordinate c of the tile's rows 4q..4q+3 at xs[c·XQ + q] (points likewise in ys, TW_P per
// coordinate): one vec4 read gives four of an invocation's rows (or its points) of coordinate c.
var<workgroup> xs: array<vec4<f32>, TKC * XQ>;
var<workgroup> ys: array<vec4<f32>, TKC * TW_P>;
// Zero-initialised at the start of every workgroup (WGSL workgroup memory).
var<workgroup> wg_trips: atomic<u32>;
// Complemented bits of the smallest U of each of the tile's rows (the epilogue; 0, the start
// of workgroup memory, is "none").
var<workgroup> wg_min: array<atomic<u32>, TR>;

// Coordinate c of row (or point) `p`, 0 beyond the last one.
fn coord(p: u32, last: u32, c: u32) -> f32 {
    if (p < last) { return pts[p * P.dim + c]; }
    return 0.0;
}

// Bits of U = s̃ + ε of block row r (global index g, norm ni) and point p, or F32_MAX's bits
// when p is past n or is g itself.
fn u_bits(g: u32, ni: f32, p: u32, s: f32) -> u32 {
    if (p >= P.n || P.col0 + p == g) { return bitcast<u32>(F32_MAX); }
    return bitcast<u32>(s + eps_of(s, ni, norms[P.col0 + p]));
}

// Complemented bits of the smallest U of block row r over points j..j+3 (written out, not
// looped: no loop may follow the witnessed one but the last, 1-trip one). Complemented so that
// workgroup memory's zero start is "no value" for atomicMax.
fn row_min(r: u32, j: u32, v: vec4<f32>) -> u32 {
    if (r >= P.rows) { return 0u; }
    let g = P.row0 + r;
    let ni = norms[g];
    let m = min(min(u_bits(g, ni, j, v.x), u_bits(g, ni, j + 1u, v.y)),
                min(u_bits(g, ni, j + 2u, v.z), u_bits(g, ni, j + 3u, v.w)));
    return ~m;
}

// s̃ of block row r for points j..j+3 (those in range).
fn store_row(r: u32, j: u32, v: vec4<f32>) {
    if (r >= P.rows) { return; }
    let o = r * P.n;
    if (j < P.n) { s_out[o + j] = v.x; }
    if (j + 1u < P.n) { s_out[o + j + 1u] = v.y; }
    if (j + 2u < P.n) { s_out[o + j + 2u] = v.z; }
    if (j + 3u < P.n) { s_out[o + j + 3u] = v.w; }
}

@compute @workgroup_size(TW_P, TW_R)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let r0 = wg.y * TR;          // first row of the tile, within the block
    let p0 = wg.x * TP;          // first point of the tile
    let rr = r0 + 4u * RBQ * lid.y; // this invocation's rows rr..rr+4·RBQ−1 (block rows)
    let pp = p0 + 4u * lid.x;    // and points pp..pp+3
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    var acc4 = vec4<f32>(0.0);
    var acc5 = vec4<f32>(0.0);
    var acc6 = vec4<f32>(0.0);
    var acc7 = vec4<f32>(0.0);
    if (P.lo > 0u) {
        // Continue the previous chunk's partial sums.
        for (var b = 0u; b < 4u; b++) {
            let j = pp + b;
            if (j < P.n) {
                if (rr < P.rows) { acc0[b] = s_out[rr * P.n + j]; }
                if (rr + 1u < P.rows) { acc1[b] = s_out[(rr + 1u) * P.n + j]; }
                if (rr + 2u < P.rows) { acc2[b] = s_out[(rr + 2u) * P.n + j]; }
                if (rr + 3u < P.rows) { acc3[b] = s_out[(rr + 3u) * P.n + j]; }
                if (RBQ == 2u) {
                    if (rr + 4u < P.rows) { acc4[b] = s_out[(rr + 4u) * P.n + j]; }
                    if (rr + 5u < P.rows) { acc5[b] = s_out[(rr + 5u) * P.n + j]; }
                    if (rr + 6u < P.rows) { acc6[b] = s_out[(rr + 6u) * P.n + j]; }
                    if (rr + 7u < P.rows) { acc7[b] = s_out[(rr + 7u) * P.n + j]; }
                }
            }
        }
    }
    var done = 0u;
    for (var c0 = P.lo; c0 < P.hi; c0 += TKC) {
        let cn = min(TKC, P.hi - c0);
        // Stage coordinates c0..c0+cn of the tile's rows and points (consecutive invocations
        // read consecutive coordinates of one row: coalesced).
        for (var e = tid; e < TKC * XQ; e += NT) {
            let c = e % TKC;
            let q = e / TKC;
            if (c < cn) {
                let g = P.row0 + r0 + 4u * q;
                let last = P.row0 + P.rows;
                xs[c * XQ + q] = vec4<f32>(coord(g, last, c0 + c), coord(g + 1u, last, c0 + c),
                                             coord(g + 2u, last, c0 + c), coord(g + 3u, last, c0 + c));
            }
        }
        for (var e = tid; e < TKC * TW_P; e += NT) {
            let c = e % TKC;
            let q = e / TKC;
            if (c < cn) {
                let g = P.col0 + p0 + 4u * q;
                let last = P.col0 + P.n;
                ys[c * TW_P + q] = vec4<f32>(coord(g, last, c0 + c), coord(g + 1u, last, c0 + c),
                                             coord(g + 2u, last, c0 + c), coord(g + 3u, last, c0 + c));
            }
        }
        workgroupBarrier();
        // One loop per distance form (P.form is uniform: the branch is taken once per
        // sub-chunk, never per term); each is the last loop of the sub-chunk, and counted.
        if (P.form == FORM_SQUARED) {
            for (var c = 0u; c < cn; c++) {
                done += 1u;
                let x = xs[c * XQ + RBQ * lid.y];
                let y = ys[c * TW_P + lid.x];
                let t0 = vec4<f32>(x.x) - y;
                acc0 = acc0 + t0 * t0;
                let t1 = vec4<f32>(x.y) - y;
                acc1 = acc1 + t1 * t1;
                let t2 = vec4<f32>(x.z) - y;
                acc2 = acc2 + t2 * t2;
                let t3 = vec4<f32>(x.w) - y;
                acc3 = acc3 + t3 * t3;
                if (RBQ == 2u) {
                    let z = xs[c * XQ + RBQ * lid.y + 1u];
                    let t4 = vec4<f32>(z.x) - y;
                    acc4 = acc4 + t4 * t4;
                    let t5 = vec4<f32>(z.y) - y;
                    acc5 = acc5 + t5 * t5;
                    let t6 = vec4<f32>(z.z) - y;
                    acc6 = acc6 + t6 * t6;
                    let t7 = vec4<f32>(z.w) - y;
                    acc7 = acc7 + t7 * t7;
                }
            }
        } else if (P.form == FORM_CITYBLOCK) {
            for (var c = 0u; c < cn; c++) {
                done += 1u;
                let x = xs[c * XQ + RBQ * lid.y];
                let y = ys[c * TW_P + lid.x];
                acc0 = acc0 + abs(vec4<f32>(x.x) - y);
                acc1 = acc1 + abs(vec4<f32>(x.y) - y);
                acc2 = acc2 + abs(vec4<f32>(x.z) - y);
                acc3 = acc3 + abs(vec4<f32>(x.w) - y);
                if (RBQ == 2u) {
                    let z = xs[c * XQ + RBQ * lid.y + 1u];
                    acc4 = acc4 + abs(vec4<f32>(z.x) - y);
                    acc5 = acc5 + abs(vec4<f32>(z.y) - y);
                    acc6 = acc6 + abs(vec4<f32>(z.z) - y);
                    acc7 = acc7 + abs(vec4<f32>(z.w) - y);
                }
            }
        } else {
            for (var c = 0u; c < cn; c++) {
                done += 1u;
                let x = xs[c * XQ + RBQ * lid.y];
                let y = ys[c * TW_P + lid.x];
                acc0 = max(acc0, abs(vec4<f32>(x.x) - y));
                acc1 = max(acc1, abs(vec4<f32>(x.y) - y));
                acc2 = max(acc2, abs(vec4<f32>(x.z) - y));
                acc3 = max(acc3, abs(vec4<f32>(x.w) - y));
                if (RBQ == 2u) {
                    let z = xs[c * XQ + RBQ * lid.y + 1u];
                    acc4 = max(acc4, abs(vec4<f32>(z.x) - y));
                    acc5 = max(acc5, abs(vec4<f32>(z.y) - y));
                    acc6 = max(acc6, abs(vec4<f32>(z.z) - y));
                    acc7 = max(acc7, abs(vec4<f32>(z.w) - y));
                }
            }
        }
        workgroupBarrier();
    }
    // Written out, not looped: no loop may follow the witnessed one but the last, 1-trip one.
    store_row(rr, pp, acc0);
    store_row(rr + 1u, pp, acc1);
    store_row(rr + 2u, pp, acc2);
    store_row(rr + 3u, pp, acc3);
    if (RBQ == 2u) {
        store_row(rr + 4u, pp, acc4);
        store_row(rr + 5u, pp, acc5);
        store_row(rr + 6u, pp, acc6);
        store_row(rr + 7u, pp, acc7);
    }
    let epilogue = P.hi == P.dim;
    let m0 = 4u * RBQ * lid.y; // the invocation's first row within the tile
    if (epilogue) {
        atomicMax(&wg_min[m0], row_min(rr, pp, acc0));
        atomicMax(&wg_min[m0 + 1u], row_min(rr + 1u, pp, acc1));
        atomicMax(&wg_min[m0 + 2u], row_min(rr + 2u, pp, acc2));
        atomicMax(&wg_min[m0 + 3u], row_min(rr + 3u, pp, acc3));
        if (RBQ == 2u) {
            atomicMax(&wg_min[m0 + 4u], row_min(rr + 4u, pp, acc4));
            atomicMax(&wg_min[m0 + 5u], row_min(rr + 5u, pp, acc5));
            atomicMax(&wg_min[m0 + 6u], row_min(rr + 6u, pp, acc6));
            atomicMax(&wg_min[m0 + 7u], row_min(rr + 7u, pp, acc7));
        }
    }
    atomicAdd(&wg_trips, done);
    workgroupBarrier();
    let tiles = (P.n + TP - 1u) / TP;
    for (var q = tid; q < TR; q += NT) {
        if (r0 + q < P.rows) {
            if (epilogue) {
                let m = min(~atomicLoad(&wg_min[q]), bitcast<u32>(F32_MAX));
                minima[(r0 + q) * tiles + wg.x] = bitcast<f32>(m);
            }
            atomicAdd(&trips[r0 + q], atomicLoad(&wg_trips));
        }
    }
}
