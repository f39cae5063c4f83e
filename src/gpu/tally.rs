//! The tally of one GPU run, for the run report: dispatches, submits, bytes moved, host phases
//! and device time per kernel (where the time went).

use std::collections::BTreeMap;

use serde::Serialize;

/// One kernel's share of a run: dispatches, device time (timestamp queries; 0 without), and
/// its work as counted, not modelled: the (row, point) pairs its dispatches covered, the
/// comparisons its witness counters recorded, the bytes of its outputs read back, and the f64
/// work its results cost the host.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelTime {
    pub dispatches: u64,
    pub gpu_s: f64,
    /// (row, point) pairs covered: a distance kernel counts each pair once per pass over the
    /// coordinates (not per chunk), a selection kernel once per pair it classified.
    pub pairs: u64,
    /// Comparisons of point intervals the device made, summed from the kernel's completeness
    /// witness (trips of its comparison loops): `knn_candidates` its j passes and pool ranking,
    /// `rank_counts` its (point, query) comparisons. 0 for the distance kernels.
    pub comparisons: u64,
    /// Bytes of this kernel's outputs (witnesses included) read back to the host.
    pub bytes_read_back: u64,
    /// f64 distances the host computed for this kernel's results: candidates re-keyed,
    /// query distances, overlaps decided, and whole rows recomputed.
    pub host_f64_distances: u64,
    /// Of the kernel's rows, those recomputed whole on the CPU (overflow, short witness).
    pub host_rows_recomputed: u64,
}

/// Adds `o` into `into`, kernel by kernel.
fn add_kernel_times(into: &mut BTreeMap<String, KernelTime>, o: &BTreeMap<String, KernelTime>) {
    for (k, t) in o {
        let e = into.entry(k.clone()).or_default();
        e.dispatches += t.dispatches;
        e.gpu_s += t.gpu_s;
        e.pairs += t.pairs;
        e.comparisons += t.comparisons;
        e.bytes_read_back += t.bytes_read_back;
        e.host_f64_distances += t.host_f64_distances;
        e.host_rows_recomputed += t.host_rows_recomputed;
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
    /// The entry of kernel `name` (created empty).
    pub fn kernel(&mut self, name: &str) -> &mut KernelTime {
        self.kernels.entry(name.to_string()).or_default()
    }

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
