//! Host side of `exact_sqdist`: the reference's f64 sums of squares of the pairs the certified
//! kernels left undecided (kNN candidates, rank overlaps, the queries' own distances), computed
//! on the device in emulated binary64 so that the host takes only their roots
//! (`GpuRequest::refine`, `faithful bench --gpu-refine`; docs/exactness.md, "Refinement on the
//! device"). Its CPU twin is `twin::exact_sqdist`.

use super::batch::{Batch, Bindings};
use super::bound::Params;
use super::context::Gpu;
use super::prepare::Space;
use super::shaders::{KNN_INFO, Kernel, RANK_INFO, RANK_WITNESS, WG};
use super::tally::Tally;
use crate::data::{Kernel as Metric, MAX_ABS, Points};

/// Loop trips an invocation may make on a software adapter (Mesa's budget is 65 535 in total
/// per invocation; the margin covers the entry loop's own trips).
const SOFTWARE_TRIPS: usize = 60_000;

/// Why a space's pairs cannot be refined on the device (`None`: they can), given the most
/// entries one row may hand the kernel. The premises of `exact_sqdist.wgsl`, checked here:
/// a Euclidean space of coordinates (the emulated operations are the Euclidean sum's); every
/// value finite with |v| < `MAX_ABS` (Points' range: no square overflows); the coordinates'
/// words within one storage binding and their indices within u32; on a software adapter, an
/// invocation's coordinate trips (⌈entries / WG⌉ · D) within the driver's loop budget.
pub(super) fn unserved(gpu: &Gpu, points: &Points, entries_per_row: usize) -> Option<String> {
    if !matches!(points.metric().kernel(), Metric::Euclidean) || !points.has_coordinates() {
        return Some(format!("the {} metric is refined on the host", points.metric().name()));
    }
    debug_assert!(points.as_slice().iter().all(|v| v.is_finite() && v.abs() < MAX_ABS));
    let bytes = (points.as_slice().len() * 8) as u64;
    let limit = gpu.limits.max_storage_buffer_binding_size.min(gpu.limits.max_buffer_size);
    if bytes > limit || points.as_slice().len() >= (1 << 31) {
        return Some(format!("{bytes} bytes of f64 coordinates exceed the storage binding limit of {limit}"));
    }
    if !gpu.report.hardware && entries_per_row.div_ceil(WG) * (points.dim() + 1) > SOFTWARE_TRIPS {
        return Some("a row's coordinate trips exceed a software adapter's loop budget".into());
    }
    None
}

/// The points' f64 coordinates on the device, as words (lo, hi), row-major.
pub(super) fn upload(gpu: &Gpu, points: &Points, tally: &mut Tally) -> wgpu::Buffer {
    gpu.input(bytemuck::cast_slice(points.as_slice()), tally)
}

/// Which entries of a row block the kernel evaluates.
#[derive(Debug, Clone, Copy)]
pub(super) enum Entries {
    /// `knn_candidates`' dense list ([j, s̃] per candidate), each row's count and base in its
    /// `info`.
    Candidates,
    /// `rank_counts`' dense list ([q, l] per overlap), likewise.
    Overlaps,
    /// A row block's queries (rows × kq indices, one word each).
    Queries,
}

/// A recorded `exact_sqdist` dispatch: the readbacks of its sums (the first `guess` entries)
/// and of its per-row witness, and the sums' buffer (read again past the guess).
pub(super) struct ExactRecorded {
    pub sums: wgpu::Buffer,
    pub first: usize,
    pub guess: usize,
    pub trips: usize,
}

/// Records `exact_sqdist` over the entries of the block's `rows` rows from `row0` (`cap` per
/// row at most; `info` the producing kernel's, absent for queries) and the readback of its
/// witness and of the first `guess` sums. `x64` holds the space's n points of `dim` f64
/// coordinates (`space.prep.n`; the kernel binds nothing else of the space).
#[allow(clippy::too_many_arguments)]
pub(super) async fn record(
    gpu: &Gpu,
    batch: &mut Batch<'_>,
    space: &Space,
    x64: &wgpu::Buffer,
    dim: usize,
    what: Entries,
    info: Option<&wgpu::Buffer>,
    entries: &wgpu::Buffer,
    row0: usize,
    rows: usize,
    cap: usize,
    guess: usize,
    tally: &mut Tally,
) -> Result<ExactRecorded, super::GpuError> {
    let name = Kernel::ExactSqDist.name();
    let mut p: Params = bytemuck::Zeroable::zeroed();
    (p.n, p.dim) = (space.prep.n as u32, dim as u32);
    p.row0 = row0 as u32;
    p.rows = rows as u32;
    p.cap = cap as u32;
    // k: info words per row (0: none); lo, hi: the count's and base's word; kt: the point's
    // word of an entry of `tiles` words.
    (p.k, p.lo, p.hi, p.kt, p.tiles) = match what {
        Entries::Candidates => (KNN_INFO as u32, 0, 2, 0, 2),
        Entries::Overlaps => (RANK_INFO as u32, RANK_WITNESS as u32 + 1, RANK_WITNESS as u32 + 2, 1, 2),
        Entries::Queries => (0, 0, 0, 0, 1),
    };
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    // Pooled, not a batch output: read again past the guess after the batch, then given back.
    let sums = gpu.pooled(usage, (rows * cap * 8) as u64, "exact sums", tally);
    let trips = gpu.output(batch, (rows * 4) as u64, tally);
    let stand_in = info.is_none().then(|| gpu.output(batch, 4, tally));
    let info = info.or(stand_in.as_ref()).expect("a buffer or its stand-in");
    let bindings = Bindings { resident: &[x64, info, entries], inputs: &[], outputs: &[&sums, &trips] };
    batch.dispatch(Kernel::ExactSqDist, &p, space, bindings, (rows as u32, 1), tally).await?;
    let guess = guess.min(rows * cap);
    Ok(ExactRecorded {
        first: batch.read(&sums, (guess * 8) as u64, name, tally),
        trips: batch.read(&trips, (rows * 4) as u64, name, tally),
        guess,
        sums,
    })
}

/// A block's sums read back (the first `guess` with the batch, the rest after it) and its
/// rows' witness.
pub(super) struct Sums<'a> {
    pub first: &'a [[u32; 2]],
    pub rest: &'a [[u32; 2]],
    pub trips: &'a [u32],
    pub dim: usize,
}

impl Sums<'_> {
    /// Row r's sums of its entries `base..base + kept` (the count the kernel evaluated: a row's
    /// count when at most its cap), or `None` when its witness is not `kept` × D trips (the
    /// device skipped work: the host computes that row's distances).
    pub fn row(&self, r: usize, base: usize, kept: usize) -> Option<Vec<[u32; 2]>> {
        if u64::from(self.trips[r]) != (kept * self.dim) as u64 {
            return None;
        }
        let at = |e: usize| if e < self.first.len() { self.first.get(e) } else { self.rest.get(e - self.first.len()) };
        (base..base + kept).map(|e| at(e).copied()).collect()
    }
}

/// The distance whose square is the device's sum `w` (the reference's correctly rounded root).
pub(super) fn root(w: [u32; 2]) -> f64 {
    f64::from_bits(u64::from(w[0]) | (u64::from(w[1]) << 32)).sqrt()
}

/// The device's sums for the rows `row0..` of `points` against their queries (rows × kq
/// indices), and each row's witness; for parity tests against [`super::twin::exact_sqdist`]
/// and the reference. The premises the pass checks before it refines on the device (a Euclidean
/// space, finite values below 1e150, the loop budget) are the caller's.
pub async fn raw_sums_async(
    gpu: &Gpu,
    points: &Points,
    row0: usize,
    kq: usize,
    queries: &[u32],
) -> Result<(Vec<[u32; 2]>, Vec<u32>), super::GpuError> {
    let mut tally = Tally::default();
    let rows = queries.len() / kq.max(1);
    // The kernel binds none of the prepared space but its size: a stand-in of n points serves
    // where the preparation would refuse the data (values whose f32 squares underflow, which
    // the emulation must still get right).
    let stand_in = Points::from_vec("stand-in", points.n(), 1, (0..points.n()).map(|i| i as f64).collect())
        .map_err(|e| super::GpuError::Runtime { stage: "exact_sqdist", message: e.to_string() })?;
    let space = gpu.upload(super::prepare::prepare_checked(&stand_in)?, &mut tally)?;
    let x64 = upload(gpu, points, &mut tally);
    let q = gpu.input(bytemuck::cast_slice(queries), &mut tally);
    let mut batch = gpu.batch();
    let rec = record(
        gpu,
        &mut batch,
        &space,
        &x64,
        points.dim(),
        Entries::Queries,
        None,
        &q,
        row0,
        rows,
        kq,
        rows * kq,
        &mut tally,
    )
    .await?;
    let out = batch.submit(&mut tally).await?.wait(gpu, &mut tally).await?;
    gpu.give_back(rec.sums);
    Ok((bytemuck::cast_slice(&out[rec.first]).to_vec(), bytemuck::cast_slice(&out[rec.trips]).to_vec()))
}

/// [`raw_sums_async`], blocking.
#[cfg(not(target_arch = "wasm32"))]
pub fn raw_sums(
    gpu: &Gpu,
    points: &Points,
    row0: usize,
    kq: usize,
    queries: &[u32],
) -> Result<(Vec<[u32; 2]>, Vec<u32>), super::GpuError> {
    super::block_on(raw_sums_async(gpu, points, row0, kq, queries))
}
