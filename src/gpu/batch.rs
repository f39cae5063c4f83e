//! Batches: several dispatches recorded into one command buffer and submitted without waiting,
//! their outputs read back later. A caller submits block b + 1 before it waits for block b, so
//! the device computes while the host refines (double buffering); each block costs one submit
//! and one wait, not one per dispatch. Each pass is timed with timestamp queries where the
//! adapter has them, per kernel.

use web_time::Instant;
use wgpu::util::DeviceExt;

use super::GpuError;
use super::bound::Params;
use super::context::Gpu;
use super::prepare::Space;
use super::shaders::Kernel;
use super::tally::Tally;

/// Passes timed per batch (more are run untimed and counted in `Tally::untimed_passes`).
const TIMED_PASSES: u32 = 128;

pub(super) fn runtime(stage: &'static str) -> impl Fn(String) -> GpuError {
    move |message| GpuError::Runtime { stage, message }
}

/// The buffers a dispatch binds at 3, 4, … in this order, grouped as the kernel's binding table
/// is checked ([`Kernel::check_buffers`]): buffers already on the device (read, or accumulated
/// into), read-only inputs, then outputs.
pub(super) struct Bindings<'a> {
    pub resident: &'a [&'a wgpu::Buffer],
    pub inputs: &'a [&'a wgpu::Buffer],
    pub outputs: &'a [&'a wgpu::Buffer],
}

/// Dispatches being recorded.
pub(super) struct Batch<'g> {
    gpu: &'g Gpu,
    enc: wgpu::CommandEncoder,
    // Pushed oom first: dropped (popped) in the reverse order on an early return.
    invalid: wgpu::ErrorScopeGuard,
    oom: wgpu::ErrorScopeGuard,
    queries: Option<wgpu::QuerySet>,
    /// Kernel name of each timed pass.
    timed: Vec<&'static str>,
    /// Readbacks: (staging buffer, bytes wanted, the kernel whose output it is).
    reads: Vec<(wgpu::Buffer, u64, &'static str)>,
    /// Pooled buffers to hand back once the batch is done.
    release: Vec<wgpu::Buffer>,
    host_s: f64,
}

/// A submitted batch; [`Submitted::wait`] returns its readbacks.
pub(super) struct Submitted {
    index: wgpu::SubmissionIndex,
    reads: Vec<(wgpu::Buffer, u64, &'static str)>,
    stamps: Option<wgpu::Buffer>,
    timed: Vec<&'static str>,
    release: Vec<wgpu::Buffer>,
    maps: Vec<futures_channel::oneshot::Receiver<Result<(), wgpu::BufferAsyncError>>>,
}

impl Gpu {
    /// A new batch (its error scopes close when it is submitted).
    pub(super) fn batch(&self) -> Batch<'_> {
        let t0 = Instant::now();
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let invalid = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("batch") });
        let queries = self.timestamps.then(|| {
            self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel times"),
                ty: wgpu::QueryType::Timestamp,
                count: 2 * TIMED_PASSES,
            })
        });
        Batch {
            gpu: self,
            enc,
            oom,
            invalid,
            queries,
            timed: Vec::new(),
            reads: Vec::new(),
            release: Vec::new(),
            host_s: t0.elapsed().as_secs_f64(),
        }
    }

    /// A pooled buffer of `size` bytes with `usage`, counted in `tally`.
    pub(super) fn pooled(&self, usage: wgpu::BufferUsages, size: u64, label: &str, tally: &mut Tally) -> wgpu::Buffer {
        let (b, reused) = self.pool.take(&self.device, usage, size, label);
        if reused {
            tally.buffers_reused += 1;
        } else {
            tally.buffers_created += 1;
        }
        b
    }

    /// A pooled output buffer (storage, copyable), handed back when `batch` is done.
    pub(super) fn output(&self, batch: &mut Batch, size: u64, tally: &mut Tally) -> wgpu::Buffer {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let b = self.pooled(usage, size, "output", tally);
        batch.release.push(b.clone());
        b
    }

    /// A read-only storage buffer holding `data`.
    pub(super) fn input(&self, data: &[u8], tally: &mut Tally) -> wgpu::Buffer {
        tally.bytes_uploaded += data.len() as u64;
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("input"),
            contents: data,
            usage: wgpu::BufferUsages::STORAGE,
        })
    }
}

impl Batch<'_> {
    /// Zeroes `buf` before the dispatches recorded after this (pooled buffers hold old bytes;
    /// counters, the witnesses among them, must start at 0).
    pub fn clear(&mut self, buf: &wgpu::Buffer) {
        self.enc.clear_buffer(buf, 0, None);
    }

    /// Records `kernel` over `groups` workgroups with `bindings` at 3, 4, … (after the
    /// parameters, and the points or the norms, which the kernel reads from `space`).
    pub async fn dispatch(
        &mut self,
        kernel: Kernel,
        params: &Params,
        space: &Space,
        bindings: Bindings<'_>,
        groups: (u32, u32),
        tally: &mut Tally,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu;
        if gpu.dispatched.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < gpu.request.fail_dispatches {
            return Err(runtime("dispatch")("injected failure (GpuRequest::fail_dispatches)".into()));
        }
        let Bindings { resident, inputs, outputs } = bindings;
        // The buffers must be those of the kernel's binding table (checked against its WGSL).
        kernel.check_buffers(resident.len(), inputs.len(), outputs.len()).map_err(runtime("bind group"))?;
        let pipeline = gpu.pipeline(kernel).await?;
        let t0 = Instant::now();
        let uniform = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::bytes_of(params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }];
        if kernel.reads_points() {
            entries.push(wgpu::BindGroupEntry { binding: 1, resource: space.pts.as_entire_binding() });
        }
        if kernel.reads_norms() {
            entries.push(wgpu::BindGroupEntry { binding: 2, resource: space.norms.as_entire_binding() });
        }
        for (b, buf) in resident.iter().chain(inputs).chain(outputs).enumerate() {
            entries.push(wgpu::BindGroupEntry { binding: 3 + b as u32, resource: buf.as_entire_binding() });
        }
        let bind = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name()),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let slot = self.timed.len() as u32;
        let timestamp_writes =
            self.queries.as_ref().filter(|_| slot < TIMED_PASSES).map(|q| wgpu::ComputePassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: Some(2 * slot),
                end_of_pass_write_index: Some(2 * slot + 1),
            });
        if timestamp_writes.is_some() {
            self.timed.push(kernel.name());
        } else if self.queries.is_some() {
            tally.untimed_passes += 1;
        }
        {
            let mut pass = self
                .enc
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(kernel.name()), timestamp_writes });
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(groups.0, groups.1, 1);
        }
        let k = tally.kernels.entry(kernel.name().to_string()).or_default();
        k.dispatches += 1;
        tally.dispatches += 1;
        self.host_s += t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// Reads back the first `size` bytes of `buf` (an output of `kernel`, for the tally) when
    /// the batch is done; returns the index of the readback in [`Submitted::wait`]'s result.
    pub fn read(&mut self, buf: &wgpu::Buffer, size: u64, kernel: &'static str, tally: &mut Tally) -> usize {
        self.read_at(buf, 0, size, kernel, tally)
    }

    /// [`Batch::read`] of `size` bytes from byte `offset` of `buf`.
    pub fn read_at(
        &mut self,
        buf: &wgpu::Buffer,
        offset: u64,
        size: u64,
        kernel: &'static str,
        tally: &mut Tally,
    ) -> usize {
        let staging = self.gpu.pooled(
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            size.max(4),
            "readback",
            tally,
        );
        // Copies are whole 4-byte words; every output here is made of u32 or f32.
        if size > 0 {
            self.enc.copy_buffer_to_buffer(buf, offset, &staging, 0, size.next_multiple_of(4));
        }
        self.reads.push((staging, size, kernel));
        self.reads.len() - 1
    }

    /// Submits the batch (no wait) and starts mapping its readbacks.
    pub async fn submit(mut self, tally: &mut Tally) -> Result<Submitted, GpuError> {
        let t0 = Instant::now();
        let gpu = self.gpu;
        let stamps = self.queries.as_ref().filter(|_| !self.timed.is_empty()).map(|q| {
            let bytes = 16 * self.timed.len() as u64;
            let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps readback"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.enc.resolve_query_set(q, 0..2 * self.timed.len() as u32, &resolve, 0);
            self.enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, bytes);
            read
        });
        let index = gpu.queue.submit([self.enc.finish()]);
        if let Some(e) = self.invalid.pop().await {
            return Err(runtime("dispatch")(e.to_string()));
        }
        if let Some(e) = self.oom.pop().await {
            return Err(runtime("allocation")(e.to_string()));
        }
        let maps = self
            .reads
            .iter()
            .map(|(s, _, _)| s)
            .chain(stamps.iter())
            .map(|s| {
                let (tx, rx) = futures_channel::oneshot::channel();
                s.map_async(wgpu::MapMode::Read, .., move |r| {
                    let _ = tx.send(r);
                });
                rx
            })
            .collect();
        tally.submits += 1;
        tally.encode_s += self.host_s + t0.elapsed().as_secs_f64();
        tally.kernel_and_readback_s += self.host_s + t0.elapsed().as_secs_f64();
        Ok(Submitted { index, reads: self.reads, stamps, timed: self.timed, release: self.release, maps })
    }
}

impl Submitted {
    /// Waits for the batch and returns its readbacks, in the order of [`Batch::read`].
    pub async fn wait(self, gpu: &Gpu, tally: &mut Tally) -> Result<Vec<Vec<u8>>, GpuError> {
        let t0 = Instant::now();
        // Native: block until this submission is done and its callbacks ran (later ones keep
        // running). Browser: a no-op; the callbacks arrive from the event loop as we await.
        #[cfg(not(target_arch = "wasm32"))]
        gpu.device
            .poll(wgpu::PollType::Wait { submission_index: Some(self.index), timeout: None })
            .map_err(|e| runtime("wait")(e.to_string()))?;
        #[cfg(target_arch = "wasm32")]
        let _ = &self.index;
        for rx in self.maps {
            match rx.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(runtime("readback")(e.to_string())),
                Err(_) => return Err(runtime("readback")("the map callback was dropped (device lost?)".into())),
            }
        }
        let t1 = Instant::now();
        tally.wait_s += (t1 - t0).as_secs_f64();
        let mut result = Vec::with_capacity(self.reads.len());
        for (s, size, kernel) in &self.reads {
            let view = s.get_mapped_range(..).map_err(|e| runtime("readback")(e.to_string()))?;
            result.push(view[..*size as usize].to_vec());
            drop(view);
            s.unmap();
            tally.bytes_read_back += size;
            tally.kernel(kernel).bytes_read_back += size;
        }
        if let Some(read) = &self.stamps {
            let view = read.get_mapped_range(..).map_err(|e| runtime("readback")(e.to_string()))?;
            let t: &[u64] = bytemuck::cast_slice(&view[..]);
            let period = f64::from(gpu.queue.get_timestamp_period());
            for (p, name) in self.timed.iter().enumerate() {
                let s = t[2 * p + 1].saturating_sub(t[2 * p]) as f64 * period * 1e-9;
                tally.kernel_gpu_s += s;
                tally.kernels.entry(name.to_string()).or_default().gpu_s += s;
            }
            drop(view);
            read.unmap();
        }
        for (s, _, _) in self.reads {
            gpu.pool.give(s);
        }
        for b in self.release {
            gpu.pool.give(b);
        }
        tally.readback_s += t1.elapsed().as_secs_f64();
        tally.kernel_and_readback_s += t0.elapsed().as_secs_f64();
        Ok(result)
    }
}
