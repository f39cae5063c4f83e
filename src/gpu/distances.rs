//! Host side of `distances.wgsl`: a row block's f32 squared distances to every point, computed
//! in coordinate chunks into a device-resident buffer that the certified kernels then read.
//! Each chunk's completeness witness (coordinate trips per row) is checked here.

use super::GpuError;
use super::batch::{Batch, Bindings};
use super::bound::{DIM_CHUNK, Params};
use super::context::Gpu;
use super::distances_tiled::KernelSet;
use super::prepare::Space;
use super::shaders::{Kernel, WG};
use super::tally::Tally;

/// Coordinates per dispatch: at most [`DIM_CHUNK`] (or the test override), and few enough that
/// a row's witness total (`trips_per_coordinate` · chunk) fits a u32.
pub fn dim_chunk(gpu: &Gpu, n: usize) -> usize {
    let want = gpu.request.dim_chunk.map_or(DIM_CHUNK, |c| c as usize);
    want.min(((1u64 << 31) / trips_per_coordinate(gpu, n).max(1)) as usize).max(1)
}

/// What a complete dispatch adds to each row's witness counter per coordinate: n for the
/// classic kernel (one count per pair), the tiled kernel's per-workgroup sums otherwise.
fn trips_per_coordinate(gpu: &Gpu, n: usize) -> u64 {
    match gpu.request.kernels {
        KernelSet::Classic => n as u64,
        KernelSet::Tiled => gpu.tiles.trips_per_coordinate(n),
    }
}

/// The bound's constants for a certified kernel on the prepared space `prep`, after the
/// domain checks of [`Params::checked`] (and the test-only poison of `GpuRequest::poison_bound`).
pub fn certified_params(gpu: &Gpu, prep: &super::prepare::Prepared) -> Result<Params, GpuError> {
    let mut p = Params::checked_form_with_extra(prep.n, prep.dim, prep.form, prep.abs_extra)?;
    if gpu.request.poison_bound {
        p.abs_e = f32::NAN;
    }
    Ok(p)
}

/// Largest row block whose distances buffer (rows × n f32) fits one output buffer.
pub fn max_block_rows(gpu: &Gpu, n: usize) -> usize {
    (gpu.max_output_bytes() / (n.max(1) as u64 * 4)).max(1) as usize
}

/// Rows per block of a certified or Fast kernel: one workgroup per row, its outputs
/// (`bytes_per_row`, at least the witness's WG u32 per row) within the output limit, and the
/// block's resident distances (rows × n f32) too.
pub fn block_rows(gpu: &Gpu, n: usize, bytes_per_row: u64) -> usize {
    let per_row = bytes_per_row.max((WG * 4) as u64);
    (gpu.max_rows() as u64).min((gpu.max_output_bytes() / per_row).max(1)).min(max_block_rows(gpu, n) as u64) as usize
}

/// A block's distances, resident on the device, and the rows whose witness came back short.
pub struct Block {
    pub buf: wgpu::Buffer,
    /// `short[r]`: the device did not process every coordinate of row `row0 + r`.
    pub short: Vec<bool>,
}

/// s̃(row0 + r, j) for r < rows and every j, at `buf[r·n + j]` (the same sequential sum as one
/// loop over all D: each chunk continues the previous chunk's partial sums), in one batch.
pub async fn distances_block(
    gpu: &Gpu,
    space: &Space,
    params: &Params,
    row0: usize,
    rows: usize,
    tally: &mut Tally,
) -> Result<Block, GpuError> {
    let buf = gpu.scratch((rows * space.prep.n * 4) as u64, tally);
    let mut batch = gpu.batch();
    let out = match record_distances(gpu, &mut batch, space, params, row0, rows, &buf, tally).await {
        Ok(rec) => match batch.submit(tally).await {
            Ok(sub) => sub.wait(gpu, tally).await.map(|out| rec.short(&out)),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    match out {
        Ok(short) => Ok(Block { buf, short }),
        Err(e) => {
            gpu.give_back(buf);
            Err(e)
        }
    }
}

/// A block's distance dispatches, recorded in a batch: where each chunk's witness is read back
/// and what a complete chunk counts per row; and, for the tiled kernel, the buffer of its
/// epilogue's tile minima (rows × `minima` f32, for `knn_candidates`' τ').
pub(super) struct Recorded {
    rows: usize,
    chunks: Vec<(usize, u64)>,
    pub minima: Option<wgpu::Buffer>,
    /// Tile minima per row (0 for the classic kernel, which writes none).
    pub tiles: u32,
}

impl Recorded {
    /// `short[r]`: the witness of some chunk of row `row0 + r` came back short.
    pub fn short(&self, out: &[Vec<u8>]) -> Vec<bool> {
        let mut short = vec![false; self.rows];
        for &(read, want) in &self.chunks {
            let trips: &[u32] = bytemuck::cast_slice(&out[read]);
            for (s, &t) in short.iter_mut().zip(trips) {
                *s |= u64::from(t) != want;
            }
        }
        short
    }
}

/// Records the chunked distance dispatches of rows `row0..row0 + rows` into `buf` (chosen
/// kernel set; each chunk a pass of its own, so it sees the previous chunk's sums).
#[allow(clippy::too_many_arguments)]
pub(super) async fn record_distances(
    gpu: &Gpu,
    batch: &mut Batch<'_>,
    space: &Space,
    params: &Params,
    row0: usize,
    rows: usize,
    buf: &wgpu::Buffer,
    tally: &mut Tally,
) -> Result<Recorded, GpuError> {
    record_distances_to(gpu, batch, space, params, row0, rows, 0..space.prep.n, buf, tally).await
}

/// [`record_distances`] to the points `cols` only (a streamed plan's point tile): `buf` holds
/// rows × `cols.len()` values, point `cols.start + j` at column j, and the minima are the tile's.
#[allow(clippy::too_many_arguments)]
pub(super) async fn record_distances_to(
    gpu: &Gpu,
    batch: &mut Batch<'_>,
    space: &Space,
    params: &Params,
    row0: usize,
    rows: usize,
    cols: std::ops::Range<usize>,
    buf: &wgpu::Buffer,
    tally: &mut Tally,
) -> Result<Recorded, GpuError> {
    let (n, dim) = (cols.len(), space.prep.dim);
    let chunk = dim_chunk(gpu, n);
    let mut p = *params;
    p.row0 = row0 as u32;
    p.rows = rows as u32;
    p.col0 = cols.start as u32;
    p.n = n as u32;
    let (kernel, groups) = match gpu.request.kernels {
        KernelSet::Classic => (Kernel::Distances, (rows as u32, n.div_ceil(WG) as u32)),
        KernelSet::Tiled => (Kernel::DistancesTiled(gpu.tiles), gpu.tiles.groups(rows, n)),
    };
    let per_coordinate = trips_per_coordinate(gpu, n);
    let tiles = match kernel {
        Kernel::DistancesTiled(t) => t.minima(n),
        _ => 0,
    };
    let minima = (tiles > 0).then(|| gpu.output(batch, (rows * tiles * 4) as u64, tally));
    let mut rec = Recorded { rows, chunks: Vec::new(), minima: minima.clone(), tiles: tiles as u32 };
    let mut lo = 0;
    loop {
        let hi = (lo + chunk).min(dim);
        (p.lo, p.hi) = (lo as u32, hi as u32);
        let trips = gpu.output(batch, (rows * 4) as u64, tally);
        batch.clear(&trips);
        let outputs: Vec<&wgpu::Buffer> = [Some(&trips), minima.as_ref()].into_iter().flatten().collect();
        let bindings = Bindings { resident: &[buf], inputs: &[], outputs: &outputs };
        batch.dispatch(kernel, &p, space, bindings, groups, tally).await?;
        if lo == 0 {
            tally.kernel(kernel.name()).pairs += (rows * n) as u64;
        }
        rec.chunks
            .push((batch.read(&trips, (rows * 4) as u64, kernel.name(), tally), per_coordinate * (hi - lo) as u64));
        lo = hi;
        if lo >= dim {
            return Ok(rec);
        }
    }
}
