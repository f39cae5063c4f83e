// Certified kernels' squared distances, one coordinate chunk per dispatch: for row i of the
// block and every j, s[r, j] (+)= Σ_{c in [P.lo, P.hi)} (y_ic - y_jc)² in f32 (by P.form:
// Σ |y_ic - y_jc| under cityblock, the running max of |y_ic - y_jc| under chebyshev). The host runs the
// chunks in order (at most 4096 coordinates each), so every invocation stays far inside
// driver loop budgets; the result is the same sequential sum as one loop over all D.
// Completeness witness: each row's coordinate trips are summed into `trips[r]` (in workgroup
// memory first, so a row costs one global atomic per 64 points, not one per point); the host
// checks n·(hi - lo) and sends any short row to the CPU reference.
// CPU twin: src/gpu/twin/distances.rs.

@group(0) @binding(1) var<storage, read> pts: array<f32>;
@group(0) @binding(3) var<storage, read_write> s_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> trips: array<atomic<u32>>;

// Zero-initialised at the start of every workgroup (WGSL workgroup memory).
var<workgroup> wg_trips: atomic<u32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let r = wg.x;
    let j = wg.y * WG + tid;
    if (j < P.n) {
        let i = P.row0 + r;
        var s = 0.0;
        if (P.lo > 0u) { s = s_out[r * P.n + j]; }
        let a = i * P.dim;
        let b = (P.col0 + j) * P.dim; // point j of the tile (a streamed plan's col0; else 0)
        var done = 0u;
        // One loop per distance form (P.form is uniform: branched once, not per term).
        if (P.form == FORM_SQUARED) {
            for (var c = P.lo; c < P.hi; c++) {
                let t = pts[a + c] - pts[b + c];
                s = s + t * t;
                done += 1u;
            }
        } else if (P.form == FORM_CITYBLOCK) {
            for (var c = P.lo; c < P.hi; c++) {
                s = s + abs(pts[a + c] - pts[b + c]);
                done += 1u;
            }
        } else {
            for (var c = P.lo; c < P.hi; c++) {
                s = max(s, abs(pts[a + c] - pts[b + c]));
                done += 1u;
            }
        }
        s_out[r * P.n + j] = s;
        atomicAdd(&wg_trips, done);
    }
    workgroupBarrier();
    if (tid == 0u) {
        atomicAdd(&trips[r], atomicLoad(&wg_trips));
    }
}
