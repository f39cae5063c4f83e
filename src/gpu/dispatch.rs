//! Uploads, dispatches and readbacks, with byte and time tallies.

use web_time::Instant;

use serde::Serialize;
use wgpu::util::DeviceExt;

use super::GpuError;
use super::bound::Params;
use super::context::Gpu;
use super::prepare::Prepared;
use super::shaders::Kernel;

/// A prepared space resident on the device.
pub struct Space {
    pub prep: Prepared,
    pts: wgpu::Buffer,
    norms: wgpu::Buffer,
}

/// Work counters of one GPU run, for the run report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub dispatches: u64,
    pub bytes_uploaded: u64,
    pub bytes_read_back: u64,
    pub upload_s: f64,
    pub kernel_and_readback_s: f64,
    /// Kernel time on the device from timestamp queries (0 where the adapter has none).
    pub kernel_gpu_s: f64,
    /// Output and readback buffers taken from the pool / newly created.
    pub buffers_reused: u64,
    pub buffers_created: u64,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.dispatches += o.dispatches;
        self.bytes_uploaded += o.bytes_uploaded;
        self.bytes_read_back += o.bytes_read_back;
        self.upload_s += o.upload_s;
        self.kernel_and_readback_s += o.kernel_and_readback_s;
        self.kernel_gpu_s += o.kernel_gpu_s;
        self.buffers_reused += o.buffers_reused;
        self.buffers_created += o.buffers_created;
    }
}

fn runtime(stage: &'static str) -> impl Fn(String) -> GpuError {
    move |message| GpuError::Runtime { stage, message }
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
        let (b, reused) = self.pool.take(&self.device, wgpu::BufferUsages::STORAGE, bytes, "distances");
        if reused {
            tally.buffers_reused += 1;
        } else {
            tally.buffers_created += 1;
        }
        b
    }

    /// Returns a scratch buffer to the pool.
    pub(super) fn give_back(&self, b: wgpu::Buffer) {
        self.pool.give(b);
    }

    /// Runs `kernel` over `groups` = (rows starting at `params.row0`, column tiles) workgroups,
    /// with resident buffers (bindings 3..), then extra read-only inputs, then outputs of the
    /// given byte sizes (the bindings after them); returns the outputs' bytes.
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
        let t0 = Instant::now();
        if self.dispatched.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < self.request.fail_dispatches {
            return Err(runtime("dispatch")("injected failure (GpuRequest::fail_dispatches)".into()));
        }
        // The buffers must be those of the kernel's binding table (checked against its WGSL).
        kernel.check_buffers(resident.len(), inputs.len(), outputs.len()).map_err(runtime("bind group"))?;
        let pipeline = self.pipeline(kernel).await?;
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::bytes_of(params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let ins: Vec<wgpu::Buffer> = inputs
            .iter()
            .map(|b| {
                tally.bytes_uploaded += b.len() as u64;
                self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("input"),
                    contents: b,
                    usage: wgpu::BufferUsages::STORAGE,
                })
            })
            .collect();
        let mut take = |usage, size, label| {
            let (b, reused) = self.pool.take(&self.device, usage, size, label);
            if reused {
                tally.buffers_reused += 1;
            } else {
                tally.buffers_created += 1;
            }
            b
        };
        let outs: Vec<wgpu::Buffer> = outputs
            .iter()
            .map(|&size| {
                take(
                    wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    size,
                    "output",
                )
            })
            .collect();
        let staging: Vec<wgpu::Buffer> = outputs
            .iter()
            .map(|&size| take(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, size, "readback"))
            .collect();
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }];
        if kernel.reads_points() {
            entries.push(wgpu::BindGroupEntry { binding: 1, resource: space.pts.as_entire_binding() });
        }
        if kernel.reads_norms() {
            entries.push(wgpu::BindGroupEntry { binding: 2, resource: space.norms.as_entire_binding() });
        }
        for (b, buf) in resident.iter().copied().chain(ins.iter()).chain(outs.iter()).enumerate() {
            entries.push(wgpu::BindGroupEntry { binding: 3 + b as u32, resource: buf.as_entire_binding() });
        }
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name()),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let mut enc =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(kernel.name()) });
        let queries = self.timestamps.then(|| {
            self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            })
        });
        // Pooled outputs hold an earlier dispatch's bytes; counters (the witnesses) start at 0.
        for o in &outs {
            enc.clear_buffer(o, 0, None);
        }
        {
            let timestamp_writes = queries.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            });
            let mut pass =
                enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(kernel.name()), timestamp_writes });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
        for (o, s) in outs.iter().zip(&staging) {
            enc.copy_buffer_to_buffer(o, 0, s, 0, o.size());
        }
        // Timestamps: resolved into a 16-byte buffer, read back with the outputs.
        let stamps = queries.as_ref().map(|q| {
            let resolve = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            enc.resolve_query_set(q, 0..2, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, 16);
            read
        });
        self.queue.submit([enc.finish()]);
        let mapped: Vec<_> = staging
            .iter()
            .chain(stamps.iter())
            .map(|s| {
                let (tx, rx) = futures_channel::oneshot::channel();
                s.map_async(wgpu::MapMode::Read, .., move |r| {
                    let _ = tx.send(r);
                });
                rx
            })
            .collect();
        // Native: block until the GPU is done and the callbacks ran. Browser: a no-op; the
        // callbacks arrive from the event loop while we await them below.
        #[cfg(not(target_arch = "wasm32"))]
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| runtime("wait")(e.to_string()))?;
        if let Some(e) = invalid.pop().await {
            return Err(runtime("dispatch")(e.to_string()));
        }
        if let Some(e) = oom.pop().await {
            return Err(runtime("allocation")(e.to_string()));
        }
        for rx in mapped {
            match rx.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(runtime("readback")(e.to_string())),
                Err(_) => return Err(runtime("readback")("the map callback was dropped (device lost?)".into())),
            }
        }
        let mut result = Vec::with_capacity(staging.len());
        for (s, &size) in staging.iter().zip(outputs) {
            let view = s.get_mapped_range(..).map_err(|e| runtime("readback")(e.to_string()))?;
            result.push(view[..size as usize].to_vec());
            drop(view);
            s.unmap();
            tally.bytes_read_back += size;
        }
        if let Some(read) = &stamps {
            let view = read.get_mapped_range(..).map_err(|e| runtime("readback")(e.to_string()))?;
            let t: &[u64] = bytemuck::cast_slice(&view[..16]);
            let ns = t[1].saturating_sub(t[0]) as f64 * f64::from(self.queue.get_timestamp_period());
            drop(view);
            read.unmap();
            tally.kernel_gpu_s += ns * 1e-9;
        }
        for b in outs.into_iter().chain(staging) {
            self.pool.give(b);
        }
        tally.dispatches += 1;
        tally.kernel_and_readback_s += t0.elapsed().as_secs_f64();
        Ok(result)
    }
}
