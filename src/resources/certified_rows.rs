//! Certified f32 rows on the CPU, the row pass's fast path: of a cosine or correlation space here,
//! of a Euclidean or sqeuclidean space in [`squared`].
//!
//! The exact rows (`reference::distance_rows`) sum every pair in f64 in scipy's order, without
//! FMA: about 8 products per cycle and core at best. Here each pair's similarity of the unit
//! rows is an f32 dot product (16 lanes, FMA where the CPU has it, register-blocked over 8 rows
//! and 32 points), and every comparison the pass makes is certified against a proven bound
//! `B(D)` on `|d_ref(i, j) − (1 − g̃(i, j))|` or refined with the reference's own bits
//! (`reference::distance_pair`): the kNN lists, ranks and distances are the exact path's, bit
//! for bit (docs/exactness.md, "Certified cosine rows on the CPU", which proves `B`).
//!
//! Premises, each checked in [`CertifiedRows::plan`] (else the pass keeps the exact rows and
//! the report says why): the metric is cosine or correlation; D ≤ 2^21 (D·2^-24 ≤ 1/8); every
//! reference norm is finite and at least 2^-400 ([`MIN_NORM`]); `B` is finite. Coordinates
//! are below 1e150 in magnitude (the reader's limit), so no reference sum overflows. f32
//! operations round to nearest and may flush subnormals (each errs by at most 2^-24 + 2^-40 of its
//! result plus 2^-126), so the proof holds for any CPU, FMA or not, and for wasm.

use std::ops::Range;

use multiversion::multiversion;

use crate::data::{Kernel, Points};
use crate::reference::{Key, distance_pairs, key};

mod squared;

/// Points per packed block (two 16-lane f32 vectors).
const NB: usize = 32;
/// Rows per register tile.
const MR: usize = 8;
/// Coordinates per chunk of the dot products (see [`dot_rows`]).
const KC: usize = 32;

/// 16 floats on a 64-byte boundary (one cache line, one AVX-512 vector).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([f32; 16]);

/// The lines' floats, in order.
fn floats(lines: &[Line]) -> &[f32] {
    // SAFETY: `Line` is `repr(C)` around `[f32; 16]` (size 64, no padding), so a slice of lines
    // is 16 times as many contiguous, initialised f32, suitably aligned.
    unsafe { std::slice::from_raw_parts(lines.as_ptr().cast::<f32>(), lines.len() * 16) }
}

/// [`floats`], mutable.
fn floats_mut(lines: &mut [Line]) -> &mut [f32] {
    // SAFETY: as in `floats`; the borrow is unique.
    unsafe { std::slice::from_raw_parts_mut(lines.as_mut_ptr().cast::<f32>(), lines.len() * 16) }
}
/// Smallest reference norm the bound covers (2^-400): every f64 product the reference rounds
/// below 2^-1022 then errs by at most 2^-1075, below 2^-273 relative to `‖w_i‖·‖w_j‖`.
pub const MIN_NORM: f64 = 3.872_591_914_849_318e-121;
/// Largest dimension the bound covers (D·2^-24 ≤ 1/8).
pub const MAX_DIM: usize = 1 << 21;
/// Most cross-rank queries per row this path serves: each pending query is two vectorised
/// scans of the f32 row (beyond this, the exact row's placement count is faster).
pub const MAX_QUERIES: usize = 32;
/// Below this dimension the exact rows cost about as much as the f32 scans: `auto` keeps them.
pub const MIN_DIM: usize = 16;

/// Whether the row pass may serve a cosine or correlation space from certified f32 rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CertifiedChoice {
    /// When the premises hold, D ≥ [`MIN_DIM`] and at most [`MAX_QUERIES`] cross ranks per row.
    #[default]
    Auto,
    /// Whenever the premises hold (the tests' setting: the path on small and hostile data).
    #[cfg_attr(not(test), allow(dead_code))]
    Always,
    /// Never (the exact f64 rows).
    Never,
}

/// The rows in f32, packed for the register tiles, and their bound.
pub struct CertifiedRows {
    n: usize,
    d: usize,
    /// Block b holds points b·NB.. as D rows of NB values: `floats(packed)[(b·D + c)·NB + t]` is
    /// the f32 coordinate c of point b·NB + t (the unit row's under cosine, the centred, scaled
    /// row's under the squared form); the last block is padded with zeros.
    /// In 64-byte lines, so that no vector load straddles two cache lines.
    packed: Vec<Line>,
    form: Form,
}

/// What the f32 rows hold and how their comparisons are certified.
enum Form {
    /// Cosine and correlation: `g̃ = ` the f32 dot product of the unit rows, larger is nearer,
    /// with the uniform bound `B(D)` (margins of docs/exactness.md included).
    Dot { beta: f64 },
    /// Euclidean and sqeuclidean: the GPU's squared difference form and per-pair ε
    /// ([`squared`]).
    Squared(squared::Squared),
}

/// How the original space's rows were served (`run.plan.high_rows`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HighRowsReport {
    /// `"certified_f32"` or `"exact_f64"`.
    pub path: &'static str,
    pub reason: String,
}

/// Buffers of the exact look-ups, reused across rows.
#[derive(Default)]
pub struct PairScratch {
    top: Vec<f32>,
    js: Vec<u32>,
    ds: Vec<f64>,
    /// The undecided points of each query of a pass (`squared::ranks_in_brackets`).
    open: [Vec<u32>; squared::Q],
    /// The negated dot-product row (the cosine rows' rank counting).
    neg: Vec<f32>,
}

/// Work of the certified rows, added to the pass's tallies.
#[derive(Debug, Clone, Copy, Default)]
pub struct Refined {
    /// Pairs whose f32 value could not decide a comparison: computed exactly.
    pub pairs: u64,
}

/// Unit roundoff of an f32 operation: Rust's f32 arithmetic rounds to nearest (IEEE 754),
/// 2^-24; 2^-40 more covers a double rounding through x87's 64-bit significand on old 32-bit
/// x86; a flush of a subnormal to zero is covered by the absolute terms.
const V: f64 = 1.0 / 16_777_216.0 + 1.0 / 1_099_511_627_776.0; // 2^-24 + 2^-40
/// Unit roundoff of f64.
const U: f64 = 1.0 / 9_007_199_254_740_992.0; // 2^-53

/// `B(D)` (docs/exactness.md, "Certified cosine rows on the CPU"), with its margins: times
/// (1 + 2^-20) for the ~30 roundings of this evaluation, plus 2^-48 for the thresholds'.
pub fn bound(dim: usize) -> f64 {
    let d = dim as f64;
    let gamma = |m: f64, u: f64| m * u / (1.0 - m * u);
    // Step 1: the reference's norm N_i against ‖w_i‖.
    let kappa = 1.01 * (gamma(d, U) / 2.0 + U) + d * 2f64.powi(-270);
    // Step 2: fl32(fl64(w/N)) against w/‖w‖, relatively.
    let delta = (1.0 + U) * (1.0 + V) / (1.0 - kappa) - 1.0;
    // Step 3: the f32 unit rows' exact dot product against the true cosine.
    let b3 = 2.0 * delta + delta * delta + d * 2f64.powi(-122);
    // Step 4: its f32 evaluation (each product meets at most `rounding_depth` roundings),
    // FMA or not, flushes allowed.
    let depth = rounding_depth(dim) as f64;
    let b4 = 1.0001 * gamma(depth, V) * (1.0 + delta) * (1.0 + delta) + d * 2f64.powi(-123);
    // Step 5: the reference's quotient, clip and 1 − c against 1 − cosine.
    let mu = (1.0 + kappa) * (1.0 + kappa) * (1.0 + U) - 1.0;
    let b5 = (gamma(d, U) + d * 2f64.powi(-272)) * (1.0 + U) / (1.0 - mu)
        + ((1.0 + U) / (1.0 - mu) - 1.0)
        + 2f64.powi(-1074)
        + 2.0 * U;
    (b3 + b4 + b5) * (1.0 + 2f64.powi(-20)) + 2f64.powi(-48)
}

/// The smallest f32 at least `x`.
fn f32_up(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) < x { y.next_up() } else { y }
}

/// The largest f32 at most `x`.
fn f32_down(x: f64) -> f32 {
    let y = x as f32;
    if f64::from(y) > x { y.next_down() } else { y }
}

impl CertifiedRows {
    /// The certified rows of `high` for a pass with `queries` cross ranks per row, or why the
    /// pass keeps the exact rows.
    pub fn plan(high: &Points, queries: usize, choice: CertifiedChoice) -> Result<Self, String> {
        if choice == CertifiedChoice::Never {
            return Err("certified rows are off".into());
        }
        let (n, d) = (high.n(), high.dim());
        let kernel = high.metric().kernel();
        if matches!(kernel, Kernel::Euclidean | Kernel::SqEuclidean) {
            if choice == CertifiedChoice::Auto {
                squared::worth_it(d, queries)?;
            }
            let (packed, sq) = squared::plan(high)?;
            return Ok(CertifiedRows { n, d, packed, form: Form::Squared(sq) });
        }
        if kernel != Kernel::Cosine {
            return Err(format!(
                "metric {}: certified f32 rows serve cosine, correlation, euclidean and sqeuclidean",
                high.metric()
            ));
        }
        if d > MAX_DIM {
            return Err(format!("D = {d} is above 2^21, the certified rows' bound"));
        }
        if choice == CertifiedChoice::Auto {
            if d < MIN_DIM {
                return Err(format!("D = {d}: exact rows cost about as much below D = {MIN_DIM}"));
            }
            if queries > MAX_QUERIES {
                return Err(format!(
                    "{queries} cross ranks per row: the exact rows' count is faster above {MAX_QUERIES}"
                ));
            }
        }
        let prep = high.prepared().ok_or("the space carries no norms")?;
        if let Some(i) = prep.norms.iter().position(|&x| !(x.is_finite() && x >= MIN_NORM)) {
            return Err(format!("row {i}'s norm {:e} is outside the certified domain (2^-400 or more)", prep.norms[i]));
        }
        let beta = bound(d);
        if !(beta.is_finite() && beta > 0.0 && beta < 0.5) {
            return Err(format!("the bound {beta:e} for D = {d} is not finite and small"));
        }
        let rows: &[f64] = match &prep.centred {
            Some((rows, _)) => rows,
            None => high.as_slice(),
        };
        let blocks = n.div_ceil(NB);
        let mut lines = vec![Line([0.0; 16]); blocks * d * NB / 16];
        let packed = floats_mut(&mut lines);
        for (j, (row, &norm)) in rows.chunks_exact(d).zip(&prep.norms).enumerate() {
            let (b, t) = (j / NB, j % NB);
            for (c, &x) in row.iter().enumerate() {
                packed[(b * d + c) * NB + t] = (x / norm) as f32;
            }
        }
        Ok(CertifiedRows { n, d, packed: lines, form: Form::Dot { beta } })
    }

    /// Bytes held (the packed rows and norms).
    pub fn bytes(&self) -> usize {
        let norms = match &self.form {
            Form::Dot { .. } => 0,
            Form::Squared(sq) => sq.bytes(),
        };
        self.packed.len() * 64 + norms
    }

    /// What the rows hold, for the run report.
    pub fn describe(&self) -> &'static str {
        match &self.form {
            Form::Dot { .. } => "f32 dot products of the unit rows",
            Form::Squared(_) => "f32 squared differences of the centred, scaled rows with each pair's ε",
        }
    }

    /// Floats of one row's f32 values in [`CertifiedRows::approx_rows`]'s output: n (g̃) or 2n
    /// (the squared form's U then L).
    pub fn row_len(&self) -> usize {
        match &self.form {
            Form::Dot { .. } => self.n,
            Form::Squared(_) => 2 * self.n,
        }
    }

    /// Row i's f32 values, `row_len()` of them: `g̃(i, j)` (dot), or U then L (the squared form,
    /// `squared::rows`), j = i included.
    pub fn approx_rows(&self, rows: Range<usize>, out: &mut [f32]) {
        debug_assert_eq!(out.len(), rows.len() * self.row_len());
        match &self.form {
            Form::Dot { .. } => dot_rows(floats(&self.packed), self.n, self.d, rows, out),
            Form::Squared(sq) => squared::rows(sq, floats(&self.packed), self.n, self.d, rows, out),
        }
    }

    /// Marks i in its own row as never a neighbour nor nearer than anything (g̃ = −∞; U = L = +∞).
    pub fn exclude_self(&self, row: &mut [f32], i: usize) {
        match &self.form {
            Form::Dot { .. } => row[i] = f32::NEG_INFINITY,
            Form::Squared(_) => {
                row[i] = f32::INFINITY;
                row[self.n + i] = f32::INFINITY;
            }
        }
    }

    /// The k nearest neighbours of i, exactly as `reference::select_knn` over the exact row
    /// would give them, from its f32 row `g` (with `g[i]` = −∞): the k-th largest g̃ is found,
    /// every point within 2B of it is a candidate (every true neighbour is one), and the
    /// candidates' exact keys are sorted.
    #[allow(clippy::too_many_arguments)]
    pub fn select_knn(
        &self,
        high: &Points,
        g: &[f32],
        i: usize,
        k: usize,
        sc: &mut PairScratch,
        keys: &mut Vec<Key>,
        idx: &mut [u32],
        dist: &mut [f64],
    ) -> Refined {
        debug_assert!(k >= 1 && k < self.n);
        sc.js.clear();
        match &self.form {
            Form::Dot { beta } => {
                debug_assert!(g[i] == f32::NEG_INFINITY);
                let kth = kth_largest(g, k, &mut sc.top);
                let floor = f32_down(f64::from(kth) - 2.0 * beta);
                collect_at_least(g, floor, |j| sc.js.push(j as u32));
            }
            Form::Squared(_) => squared::candidates(g, i, k, &mut sc.top, &mut sc.js),
        }
        sc.ds.resize(sc.js.len(), 0.0);
        distance_pairs(high, i, &sc.js, &mut sc.ds);
        keys.clear();
        keys.extend(sc.js.iter().zip(&sc.ds).map(|(&j, &d)| key(d, j as usize)));
        keys.sort_unstable();
        for (t, &kk) in keys[..k].iter().enumerate() {
            idx[t] = (kk & 0xffff_ffff) as u32;
            dist[t] = f64::from_bits((kk >> 32) as u64);
        }
        Refined { pairs: keys.len() as u64 }
    }

    /// For each query j (distinct, none equal to i) at exact distance `dq[s]`, its rank
    /// `1 + #{l ≠ i : (d_l, l) < (d_j, j)}` (`reference::count_ranks`' count), from the f32 row
    /// `g` (with `g[i]` = −∞): l above `1 − d_j + B` is certainly nearer, below `1 − d_j − B`
    /// certainly farther; the few between are compared exactly.
    pub fn count_ranks(
        &self,
        high: &Points,
        g: &[f32],
        i: usize,
        queries: &[u32],
        dq: &[f64],
        sc: &mut PairScratch,
        out: &mut [u32],
    ) -> Refined {
        let beta = match &self.form {
            Form::Dot { beta } => *beta,
            Form::Squared(_) => return squared::count_ranks(high, g, i, queries, dq, sc, out),
        };
        // Smaller is nearer in the shared counting: the negated row (exact), so `g̃_m > hi`
        // becomes `−g̃_m < −hi` (certainly nearer) and `g̃_m < lo` becomes `−g̃_m > −lo`
        // (certainly farther); j itself lies in [lo, hi] (|1 − g̃_j − d_j| ≤ B) and i has
        // −g̃ = +∞ (`exclude_self`): after every query.
        let mut neg = std::mem::take(&mut sc.neg);
        neg.clear();
        neg.extend(g.iter().map(|&x| -x));
        let refined = squared::ranks_in_brackets(
            high,
            &neg,
            &neg,
            i,
            queries,
            dq,
            |_, d| {
                let base = 1.0 - d;
                (-f32_up(base + beta), -f32_down(base - beta))
            },
            sc,
            out,
        );
        sc.neg = neg;
        refined
    }
}

/// The k-th largest value of `g` (−∞ entries never count; at least k are finite): one pass
/// keeping candidates above the current k-th of a buffer compacted when 4k are waiting.
fn kth_largest(g: &[f32], k: usize, buf: &mut Vec<f32>) -> f32 {
    buf.clear();
    let desc = |a: &f32, b: &f32| b.total_cmp(a);
    let mut worst = f32::NEG_INFINITY;
    let limit = 4 * k.max(16);
    for block in g.chunks(16) {
        if !block.iter().fold(false, |any, &x| any | (x > worst)) {
            continue;
        }
        buf.extend(block.iter().filter(|&&x| x > worst));
        if buf.len() >= limit {
            buf.select_nth_unstable_by(k - 1, desc);
            buf.truncate(k);
            worst = buf[k - 1];
        }
    }
    buf.select_nth_unstable_by(k - 1, desc);
    buf[k - 1]
}

/// Calls `f(j)` for every j with `g[j] ≥ floor`.
fn collect_at_least(g: &[f32], floor: f32, f: impl FnMut(usize)) {
    collect_between(g, floor, f32::INFINITY, f)
}

/// Calls `f(j)` for every j with `lo ≤ g[j] ≤ hi`, in order: blocks of 16 are tested whole
/// (vectorised) and almost all hold none.
fn collect_between(g: &[f32], lo: f32, hi: f32, mut f: impl FnMut(usize)) {
    for (b, block) in g.chunks(16).enumerate() {
        if block.iter().fold(false, |any, &x| any | ((x >= lo) & (x <= hi))) {
            for (t, &x) in block.iter().enumerate() {
                if x >= lo && x <= hi {
                    f(b * 16 + t);
                }
            }
        }
    }
}

/// The dot products of `rows` (in tiles of [`MR`]) with every point, block of [`NB`] points by
/// block: each tile's rows are copied once into a D×MR panel. Coordinates go in chunks of
/// [`KC`]: a block's chunk (KC×NB values) and the tiles' panel chunks stay in the L1 cache while
/// every tile uses them. Each pair's sum runs over its chunk's c in order from zero (FMA where
/// the target has it), and the chunk sums are added in order to the pair's total: every product
/// meets at most `min(KC, D) + ⌈D/KC⌉ + 1` roundings ([`rounding_depth`]), the bound's γ.
fn dot_rows(packed: &[f32], n: usize, d: usize, rows: Range<usize>, out: &mut [f32]) {
    tile_rows(packed, n, d, rows, chunk_dots, |row, j0, sums| {
        out[row * n + j0..row * n + j0 + sums.len()].copy_from_slice(sums);
    });
}

/// The register-tile walk of [`dot_rows`] and of the squared form (`squared::rows`): each tile's
/// rows copied once into a D×MR panel, then for every block of points the tile's MR×NB sums
/// from zero, `chunk` adding one chunk of [`KC`] coordinates at a time (the block's chunk and the
/// panels' stay in the L1 cache while every tile uses them), and `finish(row, j0, sums)` given
/// each row's finished sums of points `j0..j0 + sums.len()` (`row` counted from `rows.start`).
fn tile_rows(
    packed: &[f32],
    n: usize,
    d: usize,
    rows: Range<usize>,
    chunk: Chunk,
    mut finish: impl FnMut(usize, usize, &[f32]),
) {
    let m = rows.len();
    let tiles = m.div_ceil(MR);
    let mut panels = vec![0.0f32; tiles * d * MR];
    for (r, i) in rows.clone().enumerate() {
        let (tile, lane) = (r / MR, r % MR);
        let (b, t) = (i / NB, i % NB);
        for c in 0..d {
            panels[(tile * d + c) * MR + lane] = packed[(b * d + c) * NB + t];
        }
    }
    let mut totals = vec![[[0.0f32; NB]; MR]; tiles];
    for b in 0..n.div_ceil(NB) {
        let block = &packed[b * d * NB..(b + 1) * d * NB];
        totals.iter_mut().for_each(|t| *t = [[0.0; NB]; MR]);
        for c0 in (0..d).step_by(KC) {
            let c1 = (c0 + KC).min(d);
            for (tile, total) in totals.iter_mut().enumerate() {
                let panel = &panels[(tile * d + c0) * MR..(tile * d + c1) * MR];
                chunk(&block[c0 * NB..c1 * NB], panel, total);
            }
        }
        let width = NB.min(n - b * NB);
        for (tile, total) in totals.iter().enumerate() {
            for (r, a) in total.iter().enumerate().take(m - tile * MR) {
                finish(tile * MR + r, b * NB, &a[..width]);
            }
        }
    }
}

/// One chunk of one tile: `total[r][t] += Σ_c panel[c][r] · chunk[c][t]`, the sum from zero in
/// c order with the MR×NB accumulators in registers (FMA where the target has it).
fn chunk_dots(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    assert!(chunk.len().is_multiple_of(NB) && panel.len() == chunk.len() / NB * MR);
    // SAFETY: the lengths are whole chunks and their panels (checked above).
    unsafe { DOTS.run(chunk, panel, total) }
}

/// [`chunk_dots`]'s versions.
const DOTS: TileVersions = TileVersions {
    portable: chunk_dots_portable,
    #[cfg(target_arch = "x86_64")]
    avx2: chunk_avx2::<false>,
    #[cfg(target_arch = "x86_64")]
    avx512: chunk_avx512::<false>,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd128: chunk_simd128::<false>,
};

/// [`chunk_dots`] for any target (FMA where it has one).
#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
fn chunk_dots_portable(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    let fma = multiversion::target::target_cfg_f!(any(target_feature = "fma", target_feature = "neon"));
    let mut acc = [[0.0f32; NB]; MR];
    for (bv, av) in chunk.chunks_exact(NB).zip(panel.chunks_exact(MR)) {
        for (row, &a) in acc.iter_mut().zip(av) {
            for (x, &b) in row.iter_mut().zip(bv) {
                *x = if fma { a.mul_add(b, *x) } else { a * b + *x };
            }
        }
    }
    for (trow, arow) in total.iter_mut().zip(&acc) {
        for (t, &a) in trow.iter_mut().zip(arow) {
            *t += a;
        }
    }
}

/// Roundings any product meets in [`dot_rows`]: at most `min(KC, D)` in its chunk's chain (one
/// more without FMA: the product's own) and one per chunk added to the total.
pub fn rounding_depth(dim: usize) -> usize {
    KC.min(dim) + dim.div_ceil(KC) + 1
}

/// One chunk of one register tile (`chunk_dots`, `squared::chunk_squares`).
type Chunk = fn(&[f32], &[f32], &mut [[f32; NB]; MR]);

/// A tile kernel's versions, one chosen at run time by [`TileVersions::run`]; the tests hold
/// each vector version the CPU has, not only the one chosen, to the portable version's bits.
struct TileVersions {
    #[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
    portable: Chunk,
    #[cfg(target_arch = "x86_64")]
    avx2: unsafe fn(&[f32], &[f32], &mut [[f32; NB]; MR]),
    #[cfg(target_arch = "x86_64")]
    avx512: unsafe fn(&[f32], &[f32], &mut [[f32; NB]; MR]),
    /// wasm SIMD (the wasm build always has it): the portable version's operations, lane by
    /// lane, in registers.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    simd128: Chunk,
}

/// A tile kernel with AVX2 and FMA: sixteen 8-lane registers hold no 8 × 32 tile, so the tile
/// goes in four quarters of 4 rows × 16 points (8 accumulators, no spills). `SQUARES`:
/// `total[r][t] += Σ_c (b − a)²` continuing the total ([`squared`]'s tile), a subtraction and an
/// FMA per term; else `total[r][t] += Σ_c a·b`, each quarter's sums started from zero and added
/// to the total at the end, as in the other versions (the bound's rounding depth).
///
/// # Safety
/// AVX2 and FMA are present; `chunk` holds whole blocks of [`NB`] values and `panel` the
/// matching [`MR`] values per coordinate.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn chunk_avx2<const SQUARES: bool>(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    use std::arch::x86_64::*;
    const { assert!(NB == 32 && MR == 8) };
    let (b, a) = (chunk.as_ptr(), panel.as_ptr());
    for r0 in [0, 4] {
        for p0 in [0, 16] {
            let mut acc = [[_mm256_setzero_ps(); 2]; 4];
            if SQUARES {
                for (q, row) in acc.iter_mut().enumerate() {
                    // SAFETY: rows r0..r0 + 4 < MR, points p0..p0 + 16 ≤ NB.
                    unsafe {
                        row[0] = _mm256_loadu_ps(total[r0 + q].as_ptr().add(p0));
                        row[1] = _mm256_loadu_ps(total[r0 + q].as_ptr().add(p0 + 8));
                    }
                }
            }
            for c in 0..chunk.len() / NB {
                // SAFETY: c·NB + p0 + 16 ≤ chunk.len() and c·MR + r0 + 4 ≤ panel.len() (the
                // caller's contract).
                unsafe {
                    let b0 = _mm256_loadu_ps(b.add(c * NB + p0));
                    let b1 = _mm256_loadu_ps(b.add(c * NB + p0 + 8));
                    for (q, row) in acc.iter_mut().enumerate() {
                        let x = _mm256_broadcast_ss(&*a.add(c * MR + r0 + q));
                        if SQUARES {
                            let (d0, d1) = (_mm256_sub_ps(b0, x), _mm256_sub_ps(b1, x));
                            row[0] = _mm256_fmadd_ps(d0, d0, row[0]);
                            row[1] = _mm256_fmadd_ps(d1, d1, row[1]);
                        } else {
                            row[0] = _mm256_fmadd_ps(x, b0, row[0]);
                            row[1] = _mm256_fmadd_ps(x, b1, row[1]);
                        }
                    }
                }
            }
            for (q, row) in acc.iter().enumerate() {
                // SAFETY: rows r0..r0 + 4 < MR, points p0..p0 + 16 ≤ NB.
                unsafe {
                    let p = total[r0 + q].as_mut_ptr().add(p0);
                    if SQUARES {
                        _mm256_storeu_ps(p, row[0]);
                        _mm256_storeu_ps(p.add(8), row[1]);
                    } else {
                        _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), row[0]));
                        _mm256_storeu_ps(p.add(8), _mm256_add_ps(_mm256_loadu_ps(p.add(8)), row[1]));
                    }
                }
            }
        }
    }
}

/// A tile kernel with AVX-512: 8 rows × 2 vectors of 16 points; `SQUARES` as in
/// [`chunk_avx2`] (a subtraction and an FMA per term, continuing the total), else one FMA per
/// product, the chunk's sums started from zero and added to the total.
///
/// # Safety
/// AVX-512F is present; the lengths as in [`chunk_avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn chunk_avx512<const SQUARES: bool>(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    use std::arch::x86_64::*;
    const { assert!(NB == 32) };
    let mut acc = [[_mm512_setzero_ps(); 2]; MR];
    if SQUARES {
        for (row, t) in acc.iter_mut().zip(total.iter()) {
            // SAFETY: each total row holds NB = 32 floats.
            unsafe {
                row[0] = _mm512_loadu_ps(t.as_ptr());
                row[1] = _mm512_loadu_ps(t.as_ptr().add(16));
            }
        }
    }
    let (b, a) = (chunk.as_ptr(), panel.as_ptr());
    for c in 0..chunk.len() / NB {
        // SAFETY: c·NB + 32 ≤ chunk.len() and c·MR + MR ≤ panel.len() (the caller's contract).
        unsafe {
            let b0 = _mm512_loadu_ps(b.add(c * NB));
            let b1 = _mm512_loadu_ps(b.add(c * NB + 16));
            for (r, row) in acc.iter_mut().enumerate() {
                let x = _mm512_set1_ps(*a.add(c * MR + r));
                if SQUARES {
                    let (d0, d1) = (_mm512_sub_ps(b0, x), _mm512_sub_ps(b1, x));
                    row[0] = _mm512_fmadd_ps(d0, d0, row[0]);
                    row[1] = _mm512_fmadd_ps(d1, d1, row[1]);
                } else {
                    row[0] = _mm512_fmadd_ps(x, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(x, b1, row[1]);
                }
            }
        }
    }
    for (t, row) in total.iter_mut().zip(&acc) {
        // SAFETY: each total row holds NB = 32 floats.
        unsafe {
            let p = t.as_mut_ptr();
            if SQUARES {
                _mm512_storeu_ps(p, row[0]);
                _mm512_storeu_ps(p.add(16), row[1]);
            } else {
                _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), row[0]));
                _mm512_storeu_ps(p.add(16), _mm512_add_ps(_mm512_loadu_ps(p.add(16)), row[1]));
            }
        }
    }
}

/// A tile kernel in wasm SIMD, in quarters of 4 rows × 8 points (8 accumulators: the portable
/// version's 8 × 32 tile does not fit the registers). `SQUARES`: `total[r][t] += Σ_c (b − a)²`
/// continuing the total ([`squared`]'s tile); else `total[r][t] += Σ_c a·b`, the chunk's sum
/// started at 0 (the dot products' tile). No fused multiply-add (wasm has none): each lane
/// computes the portable version's operations in its order.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunk_simd128<const SQUARES: bool>(chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
    use core::arch::wasm32::*;
    const { assert!(NB == 32 && MR == 8) };
    assert!(chunk.len().is_multiple_of(NB) && panel.len() == chunk.len() / NB * MR);
    let (b, a) = (chunk.as_ptr(), panel.as_ptr());
    for r0 in [0, 4] {
        for p0 in [0, 8, 16, 24] {
            let mut acc = [[f32x4_splat(0.0); 2]; 4];
            if SQUARES {
                for (q, row) in acc.iter_mut().enumerate() {
                    let t = total[r0 + q].as_ptr();
                    // SAFETY: p0 + 8 ≤ NB floats in each total row.
                    unsafe { *row = [v128_load(t.add(p0).cast()), v128_load(t.add(p0 + 4).cast())] };
                }
            }
            for c in 0..chunk.len() / NB {
                // SAFETY: c·NB + p0 + 8 ≤ chunk.len() and c·MR + r0 + 4 ≤ panel.len() (asserted).
                let (b0, b1) =
                    unsafe { (v128_load(b.add(c * NB + p0).cast()), v128_load(b.add(c * NB + p0 + 4).cast())) };
                for (q, row) in acc.iter_mut().enumerate() {
                    // SAFETY: as above.
                    let x = f32x4_splat(unsafe { *a.add(c * MR + r0 + q) });
                    if SQUARES {
                        let (d0, d1) = (f32x4_sub(b0, x), f32x4_sub(b1, x));
                        row[0] = f32x4_add(f32x4_mul(d0, d0), row[0]);
                        row[1] = f32x4_add(f32x4_mul(d1, d1), row[1]);
                    } else {
                        row[0] = f32x4_add(f32x4_mul(x, b0), row[0]);
                        row[1] = f32x4_add(f32x4_mul(x, b1), row[1]);
                    }
                }
            }
            for (q, row) in acc.iter().enumerate() {
                let t = total[r0 + q].as_mut_ptr();
                // SAFETY: p0 + 8 ≤ NB floats in each total row.
                unsafe {
                    let (w0, w1) = if SQUARES {
                        (row[0], row[1])
                    } else {
                        (
                            f32x4_add(v128_load(t.add(p0).cast()), row[0]),
                            f32x4_add(v128_load(t.add(p0 + 4).cast()), row[1]),
                        )
                    };
                    v128_store(t.add(p0).cast(), w0);
                    v128_store(t.add(p0 + 4).cast(), w1);
                }
            }
        }
    }
}

impl TileVersions {
    /// The best version this CPU has: AVX-512F, else AVX2 + FMA, else the portable one.
    ///
    /// # Safety
    /// `chunk` holds whole blocks of [`NB`] values (at most [`KC`] of them) and `panel` the
    /// matching [`MR`] values per coordinate.
    unsafe fn run(&self, chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        (self.simd128)(chunk, panel, total);
        // SAFETY: the caller's contract is `native`'s.
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        unsafe {
            self.native(chunk, panel, total)
        };
    }

    /// [`TileVersions::run`] outside wasm.
    ///
    /// # Safety
    /// As [`TileVersions::run`].
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    unsafe fn native(&self, chunk: &[f32], panel: &[f32], total: &mut [[f32; NB]; MR]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F was detected at run time; the lengths are the caller's contract.
            unsafe { (self.avx512)(chunk, panel, total) };
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: AVX2 and FMA were detected at run time; the lengths are the caller's contract.
            unsafe { (self.avx2)(chunk, panel, total) };
            return;
        }
        (self.portable)(chunk, panel, total)
    }
}

/// Random chunks of 1, 7 and [`KC`] coordinates in `[lo, hi)` and a random running total: every
/// version's result has the portable version's bits.
#[cfg(test)]
fn assert_tile_versions_agree(dispatched: Chunk, v: &TileVersions, seed: u64, lo: f32, hi: f32) {
    let mut rng = crate::splitmix::SplitMix64(seed);
    let mut draw = |m: usize| -> Vec<f32> { (0..m).map(|_| lo + (hi - lo) * rng.uniform() as f32).collect() };
    for c in [1, 7, KC] {
        let (chunk, panel, start) = (draw(c * NB), draw(c * MR), draw(NB * MR));
        let start: [[f32; NB]; MR] = std::array::from_fn(|r| std::array::from_fn(|t| start[r * NB + t]));
        let run = |f: &dyn Fn(&mut [[f32; NB]; MR])| {
            let mut t = start;
            f(&mut t);
            t
        };
        let portable = run(&|t| (v.portable)(&chunk, &panel, t));
        let mut results = vec![("dispatched", run(&|t| dispatched(&chunk, &panel, t)))];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: AVX2 and FMA detected; the lengths are whole chunks and panels.
                results.push(("avx2", run(&|t| unsafe { (v.avx2)(&chunk, &panel, t) })));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: AVX-512F detected; the lengths are whole chunks and panels.
                results.push(("avx512", run(&|t| unsafe { (v.avx512)(&chunk, &panel, t) })));
            }
        }
        for (version, fast) in &results {
            for (f, p) in fast.iter().flatten().zip(portable.iter().flatten()) {
                assert_eq!(f.to_bits(), p.to_bits(), "{version}, chunk of {c} coordinates");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_is_small_and_grows_with_the_dimension() {
        let b384 = bound(384);
        assert!(b384 > rounding_depth(384) as f64 * V && b384 < 1e-4, "{b384:e}");
        assert!(bound(1) < bound(2) && bound(2) < bound(MAX_DIM));
        assert!(bound(MAX_DIM).is_finite() && bound(MAX_DIM) < 0.5);
    }

    /// The dispatched chunk kernel and each vector version the CPU has give the portable
    /// version's bits: the same products, fused where the target fuses, summed in the same order.
    #[test]
    fn vectorised_chunk_dots_are_the_portable_bits() {
        assert_tile_versions_agree(chunk_dots, &DOTS, 11, -1.0, 1.0);
    }

    #[test]
    fn directed_roundings_bracket_the_value() {
        for x in [0.1f64, -0.3, 1.0 + 1e-12, 1e-40, -2.0, 0.0] {
            assert!(f64::from(f32_up(x)) >= x && f64::from(f32_down(x)) <= x, "{x}");
        }
    }

    #[test]
    fn kth_largest_is_a_sort() {
        let mut rng = crate::splitmix::SplitMix64(3);
        let mut buf = Vec::new();
        for n in [2usize, 17, 100, 1000] {
            let mut g: Vec<f32> = (0..n).map(|_| (rng.uniform() * 8.0).floor() as f32).collect();
            g[n / 2] = f32::NEG_INFINITY;
            let mut sorted: Vec<f32> = g.iter().copied().filter(|x| x.is_finite()).collect();
            sorted.sort_by(|a, b| b.total_cmp(a));
            for k in [1, (n - 1) / 2, n - 1].into_iter().filter(|&k| k >= 1) {
                assert_eq!(kth_largest(&g, k, &mut buf), sorted[k - 1], "n={n} k={k}");
            }
        }
    }

    /// The f32 tiles equal a plain dot product in f64 of the same f32 values to within the
    /// f32 rounding (any rows range, n not a multiple of the block).
    #[test]
    fn tiles_are_dot_products() {
        let mut rng = crate::splitmix::SplitMix64(5);
        let (n, d) = (45, 19);
        let v: Vec<f64> = (0..n * d).map(|_| rng.uniform() - 0.5).collect();
        let p = Points::from_vec("p", n, d, v).unwrap().with_metric(crate::data::Metric::Cosine).unwrap();
        let c = CertifiedRows::plan(&p, 0, CertifiedChoice::Always).unwrap();
        let unit =
            |j: usize| -> Vec<f32> { (0..d).map(|k| floats(&c.packed)[((j / NB) * d + k) * NB + j % NB]).collect() };
        for rows in [0..n, 3..12, 40..45] {
            let mut out = vec![0.0f32; rows.len() * n];
            c.approx_rows(rows.clone(), &mut out);
            for (r, i) in rows.enumerate() {
                for j in 0..n {
                    let want: f64 = unit(i).iter().zip(unit(j)).map(|(&a, b)| f64::from(a) * f64::from(b)).sum();
                    assert!((f64::from(out[r * n + j]) - want).abs() < 1e-5, "i={i} j={j}");
                }
            }
        }
    }
}
