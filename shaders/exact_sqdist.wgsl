// The reference's exact f64 sums of squares on the device, for the pairs the certified kernels
// could not decide in f32: s = (x_j[0] − x_i[0])², then s += (x_j[c] − x_i[c])² for c = 1..D,
// every operation rounded once to nearest-even as IEEE 754 binary64 does (the sum under
// reference::distance_pair's root), in 32-bit integer arithmetic only (WGSL has neither f64 nor
// u64). The host takes the root (correctly rounded, so the distance is the reference's bits) and
// decides the pairs as it would from its own sums (docs/exactness.md, "Refinement on the
// device").
// One workgroup per row i = P.row0 + r. The row's entries are those a certified kernel compacted
// (`knn_candidates`' candidates, `rank_counts`' overlaps): the count and base are words P.lo and
// P.hi of the row's P.k words of `info`, counted only when at most P.cap; or, when P.k = 0, the
// row's P.cap entries from r·P.cap on (the queries of a row block). Entry e's point is word P.kt
// of its P.tiles words. Its sum goes to exact[e] (two words, lo then hi).
// Premises (the host checks them where it chooses this kernel, gpu/exact_sqdist.rs): x64 holds
// every point's D coordinates as f64 words, finite with |v| < 1e150 (Points' range), so no
// square overflows; a sum of more than 4·10⁷ of them may, and becomes +inf as in f64 (add treats
// the exponent 2047 as a number and round_pack maps exponents ≥ 2047 to inf, right for sums of
// non-negative terms, the only place an inf can enter).
// Completeness witness: each invocation counts its coordinate trips; the workgroup's sum, in
// trips[r], must be the row's entries × D, or the host computes the row's sums itself.
// CPU twin: src/gpu/twin/exact_sqdist.rs (the same functions, line for line, tested against f64).

@group(0) @binding(3) var<storage, read> x64: array<u32>;
@group(0) @binding(4) var<storage, read> info: array<u32>;
@group(0) @binding(5) var<storage, read> entries: array<u32>;
@group(0) @binding(6) var<storage, read_write> exact: array<u32>;
@group(0) @binding(7) var<storage, read_write> trips: array<u32>;

var<workgroup> w_trips: atomic<u32>;

// 64-bit words as vec2(lo, hi).
fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let c = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + c);
}

// a − b for a ≥ b.
fn sub64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let borrow = select(0u, 1u, a.x < b.x);
    return vec2<u32>(a.x - b.x, a.y - b.y - borrow);
}

fn lt64(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.y < b.y || (a.y == b.y && a.x < b.x);
}

fn is_zero64(a: vec2<u32>) -> bool {
    return (a.x | a.y) == 0u;
}

// a << s, 0 ≤ s < 64 (WGSL takes shift counts modulo 32: each case explicit).
fn shl64(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s < 32u) {
        return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
    }
    return vec2<u32>(0u, a.x << (s - 32u));
}

// a >> s, every bit shifted out ORed into bit 0 (sticky); any s.
fn shr64_sticky(a: vec2<u32>, s: u32) -> vec2<u32> {
    if (s == 0u) {
        return a;
    }
    if (s >= 64u) {
        return vec2<u32>(select(0u, 1u, !is_zero64(a)), 0u);
    }
    var r: vec2<u32>;
    var lost: u32;
    if (s < 32u) {
        r = vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
        lost = a.x & ((1u << s) - 1u);
    } else if (s == 32u) {
        r = vec2<u32>(a.y, 0u);
        lost = a.x;
    } else {
        r = vec2<u32>(a.y >> (s - 32u), 0u);
        lost = a.x | (a.y & ((1u << (s - 32u)) - 1u));
    }
    return vec2<u32>(r.x | select(0u, 1u, lost != 0u), r.y);
}

fn clz64(a: vec2<u32>) -> u32 {
    if (a.y != 0u) {
        return countLeadingZeros(a.y);
    }
    return 32u + countLeadingZeros(a.x);
}

// The full product of two words, from four 16-bit partial products.
fn mul32(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = p01 + p10;
    let carry_mid = select(0u, 1u, mid < p01);
    let lo = p00 + (mid << 16u);
    let c = select(0u, 1u, lo < p00);
    return vec2<u32>(lo, p11 + (mid >> 16u) + (carry_mid << 16u) + c);
}

// A finite f64's sign bit, exponent E ≥ 1 (1 for subnormals and zero) and significand m (with
// the implicit bit for normals): value (−1)^sign · m · 2^(E − 1075).
struct Parts {
    sign: u32,
    e: i32,
    m: vec2<u32>,
}

fn unpack(x: vec2<u32>) -> Parts {
    let field = (x.y >> 20u) & 0x7ffu;
    let frac_hi = x.y & 0xfffffu;
    if (field == 0u) {
        return Parts(x.y & 0x80000000u, 1, vec2<u32>(x.x, frac_hi));
    }
    return Parts(x.y & 0x80000000u, i32(field), vec2<u32>(x.x, frac_hi | 0x100000u));
}

// Rounds m (56 bits: the significand, then guard, round and sticky bits; its top bit at 55
// unless e = 1, a subnormal result) to nearest-even and packs it with the sign and exponent e
// (value m/8 · 2^(e − 1075)); e ≥ 2047 gives ±inf.
fn round_pack(sign: u32, e_in: i32, m: vec2<u32>) -> vec2<u32> {
    let low = m.x & 7u;
    var r = vec2<u32>((m.x >> 3u) | (m.y << 29u), m.y >> 3u);
    if (low > 4u || (low == 4u && (r.x & 1u) == 1u)) {
        r = add64(r, vec2<u32>(1u, 0u));
    }
    var e = e_in;
    if (r.y == 0x200000u) {
        // Rounded up to 2^53: one more binade.
        r = vec2<u32>(0u, 0x100000u);
        e += 1;
    }
    if (e >= 2047) {
        return vec2<u32>(0u, sign | 0x7ff00000u);
    }
    let field = select(0u, u32(e), r.y >= 0x100000u);
    return vec2<u32>(r.x, sign | (field << 20u) | (r.y & 0xfffffu));
}

// a + b rounded to nearest-even (finite a and b, see the premises).
fn add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    var x = unpack(a);
    var y = unpack(b);
    // x the larger magnitude.
    if (y.e > x.e || (y.e == x.e && lt64(x.m, y.m))) {
        let t = x;
        x = y;
        y = t;
    }
    if (is_zero64(x.m)) {
        // Both zero: −0 only for −0 + −0.
        return vec2<u32>(0u, x.sign & y.sign);
    }
    let mx = shl64(x.m, 3u);
    let my = shr64_sticky(shl64(y.m, 3u), u32(x.e - y.e));
    var e = x.e;
    var m: vec2<u32>;
    if (x.sign == y.sign) {
        m = add64(mx, my);
        if (m.y >= 0x1000000u) {
            e += 1;
            m = shr64_sticky(m, 1u);
        }
    } else {
        let d = sub64(mx, my);
        if (is_zero64(d)) {
            return vec2<u32>(0u, 0u);
        }
        // Top bit back to 55 (clz64 = 8), not below the subnormal exponent 1.
        let shift = min(i32(clz64(d)) - 8, e - 1);
        e -= shift;
        m = shl64(d, u32(shift));
    }
    return round_pack(x.sign, e, m);
}

fn sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return add(a, vec2<u32>(b.x, b.y ^ 0x80000000u));
}

// t² rounded to nearest-even (finite t).
fn square(t: vec2<u32>) -> vec2<u32> {
    let u = unpack(t);
    if (is_zero64(u.m)) {
        return vec2<u32>(0u, 0u);
    }
    // A subnormal t: its top bit to 52 (clz64 = 11), the exponent below 1.
    let sh = clz64(u.m) - 11u;
    let m = shl64(u.m, sh);
    let e = u.e - i32(sh);
    // P = m² in four words: (mh·2^32 + ml)² = mh²·2^64 + 2·mh·ml·2^32 + ml².
    let ll = mul32(m.x, m.x);
    let lh2 = shl64(mul32(m.x, m.y), 1u);
    let mid = add64(vec2<u32>(ll.y, 0u), lh2);
    let upper = add64(mul32(m.y, m.y), vec2<u32>(mid.y, 0u));
    let p0 = ll.x;
    let p1 = mid.x;
    let p2 = upper.x;
    let p3 = upper.y;
    // P in [2^104, 2^106): 56 bits from bit 49 or 50, the rest sticky.
    var s = 17u;
    var er = 2 * e - 1023;
    if (p3 >= 0x200u) {
        s = 18u;
        er = 2 * e - 1022;
    }
    let lost = p0 | (p1 & ((1u << s) - 1u));
    var r = vec2<u32>((p1 >> s) | (p2 << (32u - s)), (p2 >> s) | (p3 << (32u - s)));
    r.x |= select(0u, 1u, lost != 0u);
    if (er < 1) {
        r = shr64_sticky(r, u32(1 - er));
        er = 1;
    }
    return round_pack(0u, er, r);
}

fn coord(at: u32) -> vec2<u32> {
    return vec2<u32>(x64[2u * at], x64[2u * at + 1u]);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let i = P.row0 + r;
    var count = P.cap;
    var base = r * P.cap;
    if (P.k > 0u) {
        let c = info[r * P.k + P.lo];
        count = select(0u, c, c <= P.cap);
        base = info[r * P.k + P.hi];
    }
    let held = arrayLength(&entries) / P.tiles;
    let room = arrayLength(&exact) / 2u;
    var t = 0u;
    for (var e = tid; e < count; e += WG) {
        let at = base + e;
        if (at >= held || at >= room) {
            break;
        }
        let j = entries[at * P.tiles + P.kt];
        if (j >= P.n || i >= P.n) {
            break;
        }
        let xi = i * P.dim;
        let xj = j * P.dim;
        var s = square(sub(coord(xj), coord(xi)));
        t += 1u;
        for (var c = 1u; c < P.dim; c += 1u) {
            s = add(s, square(sub(coord(xj + c), coord(xi + c))));
            t += 1u;
        }
        exact[2u * at] = s.x;
        exact[2u * at + 1u] = s.y;
    }
    atomicAdd(&w_trips, t);
    workgroupBarrier();
    if (tid == 0u) {
        trips[r] = atomicLoad(&w_trips);
    }
}
