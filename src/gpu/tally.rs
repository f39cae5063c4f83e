//! The tally of one GPU run, for the run report: dispatches, submits, bytes moved, host phases
//! and device time per kernel (where the time went).

use std::collections::BTreeMap;

use serde::Serialize;

/// One kernel's share of a run: dispatches and device time (timestamp queries; 0 without).
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelTime {
    pub dispatches: u64,
    pub gpu_s: f64,
}

/// Adds `o` into `into`, kernel by kernel.
fn add_kernel_times(into: &mut BTreeMap<String, KernelTime>, o: &BTreeMap<String, KernelTime>) {
    for (k, t) in o {
        let e = into.entry(k.clone()).or_default();
        e.dispatches += t.dispatches;
        e.gpu_s += t.gpu_s;
    }
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
