//! Uploads, dispatches and readbacks, with byte and time tallies.

use std::collections::BTreeMap;
use web_time::Instant;

use serde::Serialize;
use wgpu::util::DeviceExt;

use super::GpuError;
use super::batch::{KernelTime, add_kernel_times};
use super::bound::Params;
use super::context::Gpu;
use super::prepare::Prepared;
use super::shaders::Kernel;

/// A prepared space resident on the device.
pub struct Space {
    pub prep: Prepared,
    pub(super) pts: wgpu::Buffer,
    pub(super) norms: wgpu::Buffer,
}

/// Work counters of one GPU run, for the run report: where the time went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub dispatches: u64,
    /// Command buffers submitted (one per batch: a block's dispatches go in one).
    pub submits: u64,
    pub bytes_uploaded: u64,
    pub bytes_read_back: u64,
    pub upload_s: f64,
    /// Host time inside GPU calls: recording and submitting, waiting, copying readbacks out.
    pub kernel_and_readback_s: f64,
    /// Of that: recording and submitting batches.
    pub encode_s: f64,
    /// Of that: blocked until a submitted batch finished (the device working, or idle while
    /// the host was not feeding it: compare with `kernel_gpu_s`).
    pub wait_s: f64,
    /// Of that: copying mapped readbacks into host memory.
    pub readback_s: f64,
    /// Kernel time on the device from timestamp queries (0 where the adapter has none).
    pub kernel_gpu_s: f64,
    /// Per kernel: dispatches and device time.
    pub kernels: BTreeMap<String, KernelTime>,
    /// Passes beyond a batch's timestamp slots (not in `kernel_gpu_s`).
    pub untimed_passes: u64,
    /// Output and readback buffers taken from the pool / newly created.
    pub buffers_reused: u64,
    pub buffers_created: u64,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.dispatches += o.dispatches;
        self.submits += o.submits;
        self.encode_s += o.encode_s;
        self.wait_s += o.wait_s;
        self.readback_s += o.readback_s;
        self.untimed_passes += o.untimed_passes;
        add_kernel_times(&mut self.kernels, &o.kernels);
        self.bytes_uploaded += o.bytes_uploaded;
        self.bytes_read_back += o.bytes_read_back;
        self.upload_s += o.upload_s;
        self.kernel_and_readback_s += o.kernel_and_readback_s;
        self.kernel_gpu_s += o.kernel_gpu_s;
        self.buffers_reused += o.buffers_reused;
        self.buffers_created += o.buffers_created;
    }
}

impl Gpu {
    /// Uploads a prepared space, if it fits one storage binding.
    pub(super) fn upload(&self, prep: Prepared, tally: &mut Tally) -> Result<Space, GpuError> {
        let t0 = Instant::now();
        let bytes = (prep.pts.len() * 4) as u64;
        let limit = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        if bytes > limit {
            return Err(GpuError::Limits(format!(
                "{bytes} bytes of points exceed the storage binding limit of {limit}"
            )));
        }
        let make = |label, data: &[f32]| {
            self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(data),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let pts = make("points", &prep.pts);
        let norms = make("norms", &prep.norms);
        tally.bytes_uploaded += bytes + (prep.norms.len() * 4) as u64;
        tally.upload_s += t0.elapsed().as_secs_f64();
        Ok(Space { prep, pts, norms })
    }

    /// A device-resident scratch buffer (the block's squared distances), never read back;
    /// hand it back with [`Gpu::give_back`].
    pub(super) fn scratch(&self, bytes: u64, tally: &mut Tally) -> wgpu::Buffer {
        self.pooled(wgpu::BufferUsages::STORAGE, bytes, "distances", tally)
    }

    /// Returns a scratch buffer to the pool.
    pub(super) fn give_back(&self, b: wgpu::Buffer) {
        self.pool.give(b);
    }

    /// Runs `kernel` over `groups` = (rows starting at `params.row0`, column tiles) workgroups,
    /// with resident buffers (bindings 3..), then extra read-only inputs, then outputs of the
    /// given byte sizes (the bindings after them); waits and returns the outputs' bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run(
        &self,
        kernel: Kernel,
        params: &Params,
        space: &Space,
        resident: &[&wgpu::Buffer],
        inputs: &[&[u8]],
        outputs: &[u64],
        groups: (u32, u32),
        tally: &mut Tally,
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        let mut batch = self.batch();
        let ins: Vec<wgpu::Buffer> = inputs.iter().map(|b| self.input(b, tally)).collect();
        let outs: Vec<wgpu::Buffer> = outputs.iter().map(|&size| self.output(&mut batch, size, tally)).collect();
        for o in &outs {
            batch.clear(o);
        }
        let bindings: Vec<&wgpu::Buffer> = resident.iter().copied().chain(ins.iter()).chain(outs.iter()).collect();
        batch.dispatch(kernel, params, space, &bindings, groups, tally).await?;
        for (o, &size) in outs.iter().zip(outputs) {
            batch.read(o, size, tally);
        }
        batch.submit(tally).await?.wait(self, tally).await
    }
}
