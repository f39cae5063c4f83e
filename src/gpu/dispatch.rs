//! Uploads, scratch buffers and single dispatches (one kernel, one batch, waited for).

use web_time::Instant;

use wgpu::util::DeviceExt;

use super::GpuError;
use super::batch::Bindings;
use super::bound::Params;
use super::context::Gpu;
use super::prepare::{Prepared, Space};
use super::shaders::Kernel;
use super::tally::Tally;

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
        let (ins, outs): (Vec<&wgpu::Buffer>, Vec<&wgpu::Buffer>) = (ins.iter().collect(), outs.iter().collect());
        let bindings = Bindings { resident, inputs: &ins, outputs: &outs };
        batch.dispatch(kernel, params, space, bindings, groups, tally).await?;
        for (o, &size) in outs.iter().zip(outputs) {
            batch.read(o, size, kernel.name(), tally);
        }
        batch.submit(tally).await?.wait(self, tally).await
    }
}
