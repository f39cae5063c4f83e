//! The benchmark receipt (JSON) and its table (Markdown): written by `faithful bench` and by the
//! web page's benchmark tab (`bench` in the wasm API), in the same format.

use std::fmt::Write;

use super::kernels::{Check, Kernel, Outcome, Work, parity, work};
use super::machine::{self, Machine};
use crate::gpu::AdapterReport;
use serde::Serialize;

/// One adapter wgpu listed, whether it was benchmarked, and its known f32 peak.
#[derive(Debug, Clone, Serialize)]
pub struct AdapterEntry {
    #[serde(flatten)]
    pub report: AdapterReport,
    pub known_peak_tflops: Option<f64>,
    pub benchmarked: bool,
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub command: String,
    pub sizes: Vec<usize>,
    pub dims: Vec<usize>,
    pub low_dim: usize,
    pub k: usize,
    pub repeat: usize,
    pub seed: u64,
    pub kernels: Vec<&'static str>,
    pub distance_block_pairs: usize,
    /// The original space's metric (scipy's name; `minkowski:p=P`); the projection is Euclidean.
    pub metric: String,
}

/// One (backend, adapter, kernel, n, D) measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub backend: &'static str,
    pub adapter: String,
    pub api: Option<String>,
    /// GPU rows: the squared-distance kernel set (tiled or classic) and its tile sizes.
    pub kernel_set: Option<&'static str>,
    pub tiles: Option<crate::gpu::Tiles>,
    pub kernel: &'static str,
    pub n: usize,
    pub d: usize,
    pub low_d: usize,
    pub k: usize,
    pub cold_s: Option<f64>,
    pub warm_s: Option<f64>,
    pub warm_runs_s: Vec<f64>,
    pub device_start_s: Option<f64>,
    pub pairs: Option<f64>,
    pub flops: Option<f64>,
    /// Warm (median) rates; the `_cold` ones from the cold run.
    pub pairs_per_s: Option<f64>,
    pub pairs_per_s_cold: Option<f64>,
    pub gflops: Option<f64>,
    pub peak_tflops: Option<f64>,
    pub peak_share: Option<f64>,
    pub peak_share_cold: Option<f64>,
    pub parity: String,
    pub served: Option<String>,
    /// Device kernel time from timestamp queries (cold run; median of the warm runs), where the
    /// adapter has them; the wall times above include uploads, readbacks and host refinement.
    pub device_kernel_cold_s: Option<f64>,
    pub device_kernel_warm_s: Option<f64>,
    pub peak_rss_bytes: Option<u64>,
    /// Whether the peak RSS was reset before this row (else it is the process's peak so far).
    pub peak_rss_per_row: bool,
    pub error: Option<String>,
    /// GPU rows: where the time went in the cold run and in the last warm run (per-kernel
    /// device times from timestamp queries, submits, waits, readbacks, host refinement).
    pub gpu_cold: Option<crate::gpu::GpuStats>,
    pub gpu_warm: Option<crate::gpu::GpuStats>,
}

impl Row {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        backend: &'static str,
        adapter: &str,
        api: Option<String>,
        kernel: Kernel,
        n: usize,
        d: usize,
        low_d: usize,
        k: usize,
    ) -> Self {
        Row {
            backend,
            adapter: adapter.to_string(),
            api,
            kernel_set: None,
            tiles: None,
            kernel: kernel.name(),
            n,
            d,
            low_d,
            k,
            cold_s: None,
            warm_s: None,
            warm_runs_s: Vec::new(),
            device_start_s: None,
            pairs: None,
            flops: None,
            pairs_per_s: None,
            pairs_per_s_cold: None,
            gflops: None,
            peak_tflops: None,
            peak_share: None,
            peak_share_cold: None,
            parity: String::new(),
            served: None,
            device_kernel_cold_s: None,
            device_kernel_warm_s: None,
            peak_rss_bytes: None,
            peak_rss_per_row: false,
            error: None,
            gpu_cold: None,
            gpu_warm: None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        &mut self,
        cold: f64,
        warm: f64,
        warm_runs: Vec<f64>,
        start: Option<f64>,
        w: Work,
        parity: &str,
        served: String,
    ) {
        self.cold_s = Some(cold);
        self.warm_s = Some(warm);
        self.warm_runs_s = warm_runs;
        self.device_start_s = start;
        self.pairs = Some(w.pairs);
        self.flops = Some(w.flops);
        self.pairs_per_s = Some(w.pairs / warm);
        self.pairs_per_s_cold = Some(w.pairs / cold);
        let gflops = w.flops / warm / 1e9;
        self.gflops = Some(gflops);
        self.peak_share = self.peak_tflops.map(|p| gflops / (p * 1e3));
        self.peak_share_cold = self.peak_tflops.map(|p| w.flops / cold / (p * 1e12));
        self.parity = parity.to_string();
        self.served = Some(served);
    }

    /// Records the device kernel times of the runs (first = cold), when every run has one.
    pub fn device_times(&mut self, runs: &[Option<f64>]) {
        let Some(all) = runs.iter().copied().collect::<Option<Vec<f64>>>() else { return };
        let Some((&cold, warm)) = all.split_first() else { return };
        self.device_kernel_cold_s = Some(cold);
        if !warm.is_empty() {
            self.device_kernel_warm_s = Some(median(warm));
        }
    }

    /// Fills the row from a kernel's runs (first = cold, the rest warm): times, work, parity
    /// against the CPU reference (a CPU row sets `reference` for the GPU rows that follow).
    pub fn record(&mut self, outs: &[Outcome], gpu: bool, reference: &mut Option<Check>, kernel: Kernel, low_d: usize) {
        if !gpu {
            *reference = Some(outs[0].check);
        }
        let parities: Vec<&str> = outs.iter().map(|o| parity(!gpu, o.check, *reference)).collect();
        let warm: Vec<f64> = outs[1..].iter().map(|o| o.seconds).collect();
        self.fill(
            outs[0].seconds,
            median(&warm),
            warm,
            outs[0].device_start_s,
            work(kernel, gpu, self.n, self.d, low_d),
            parities.iter().find(|p| **p == "differs").unwrap_or(&parities[0]),
            outs[0].served.clone(),
        );
        self.device_times(&outs.iter().map(|o| o.device_kernel_s).collect::<Vec<_>>());
        self.gpu_cold = outs[0].gpu.clone();
        self.gpu_warm = outs.last().filter(|_| outs.len() > 1).and_then(|o| o.gpu.clone());
        if let Some(g) = &self.gpu_cold {
            self.kernel_set = Some(g.kernel_set.name());
            self.tiles = g.tiles;
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    pub schema: &'static str,
    pub created_unix_s: u64,
    pub machine: Machine,
    pub adapters: Vec<AdapterEntry>,
    pub settings: Settings,
    pub data: &'static str,
    pub timing: &'static str,
    pub work: &'static str,
    pub parity_rule: &'static str,
    pub rows: Vec<Row>,
    pub peak_rss_bytes: Option<u64>,
}

impl Receipt {
    pub fn new(machine: Machine, adapters: Vec<AdapterEntry>, settings: Settings, rows: Vec<Row>) -> Self {
        Receipt {
            schema: "faithful-bench/1",
            created_unix_s: web_time::SystemTime::now().duration_since(web_time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            machine,
            adapters,
            settings,
            data: "blobs: 5 Gaussian clusters (unit variance) around centres uniform in [-10,10]^D, SplitMix64 + Box-Muller from the seed; projection = the first 2 coordinates",
            timing: "wall clock (std::time::Instant) around each kernel call; cold = the first run with a fresh evaluator and, on a GPU, a fresh device (instance, adapter, device start and pipeline compilation inside the clock; drivers may keep their own on-disk shader caches); warm = the median of `repeat` further runs on the same device. wall times of GPU rows include uploads, readbacks and host refinement; device_kernel_cold_s / device_kernel_warm_s are the kernels alone, from timestamp queries, where the adapter has them",
            work: "pairs = logical point pairs (distances: rows x n; knn, ranks, evaluation: n^2; pairs: n(n-1)/2); flops = 3*dim per distance evaluation actually made (CPU: one distance row per point and space; GPU: one distance pass per space and row block, kNN and rank counts reading the resident rows; the pair pass computes whole rows in both spaces)",
            parity_rule: "cpu rows are the reference; a GPU row is identical when every run (cold and warm) gives the CPU reference's output bit for bit (neighbour indices, f64 distances, ranks, scores); for distances, when every f32 squared distance lies within its proven bound of the f64 reference (the certificate the exact kernels rely on; raw f32 values are not meant to equal f64)",
            rows,
            peak_rss_bytes: machine::peak_rss_bytes(),
        }
    }

    /// The rows as a Markdown table, with the machine in a header line.
    pub fn table(&self) -> String {
        let m = &self.machine;
        let mut s = String::new();
        let gib = |b: Option<u64>| b.map_or("?".into(), |b| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64));
        let _ = writeln!(
            s,
            "machine: {} · {} · {} logical CPUs ({} threads) · {} · load {} · faithful {} ({}) · wgpu {}",
            m.os,
            m.cpu_model.as_deref().unwrap_or("?"),
            m.cores,
            m.threads,
            gib(m.memory_bytes),
            m.load_average.as_deref().unwrap_or("?"),
            m.faithful_version,
            m.git_commit.as_deref().unwrap_or("?"),
            m.wgpu_version.as_deref().unwrap_or("?")
        );
        for a in &self.adapters {
            let state = a.skipped.as_deref().map_or("benchmarked".to_string(), |r| format!("skipped: {r}"));
            let _ = writeln!(
                s,
                "adapter: {} [{} {}, {}] {state}",
                a.report.name, a.report.backend, a.report.device_type, a.report.driver_info
            );
        }
        let _ = writeln!(
            s,
            "k = {}, original-space metric {}, warm = median of {} runs, wall-clock times (device kernel times from timestamp queries are in the JSON)\n",
            self.settings.k, self.settings.metric, self.settings.repeat
        );
        let _ = writeln!(
            s,
            "| backend | adapter | kernel | set | n | D | k | cold s | warm s | Mpairs/s cold | Mpairs/s warm | GFLOP/s | % of f32 peak cold | % warm | peak RSS MiB | parity | served |"
        );
        let _ = writeln!(s, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|");
        for r in &self.rows {
            let f = |v: Option<f64>, p: usize| v.map_or("–".into(), |v| format!("{v:.p$}"));
            let adapter = match &r.api {
                Some(api) => format!("{} ({api})", r.adapter),
                None => r.adapter.clone(),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.backend,
                adapter,
                r.kernel,
                r.kernel_set.unwrap_or("–"),
                r.n,
                r.d,
                r.k,
                f(r.cold_s, 4),
                f(r.warm_s, 4),
                f(r.pairs_per_s_cold.map(|p| p / 1e6), 1),
                f(r.pairs_per_s.map(|p| p / 1e6), 1),
                f(r.gflops, 2),
                f(r.peak_share_cold.map(|p| p * 100.0), 1),
                f(r.peak_share.map(|p| p * 100.0), 1),
                r.peak_rss_bytes.map_or("–".into(), |b| format!("{:.0}", b as f64 / (1u64 << 20) as f64)),
                r.parity,
                r.error.as_deref().map_or_else(|| r.served.clone().unwrap_or_default(), |e| format!("error: {e}")),
            );
        }
        s.push_str(&self.phases_table());
        s.push_str(&self.work_table());
        s
    }

    /// The GPU rows' work per kernel (last warm run, else the cold run), counted rather than
    /// timed, so it holds on a software adapter too: dispatches, (row, point) pairs covered,
    /// comparisons from the witness counters and per pair, bytes read back, the host's f64
    /// distances and whole rows recomputed.
    fn work_table(&self) -> String {
        let mut s = String::new();
        let rows: Vec<(&Row, &crate::gpu::GpuStats)> =
            self.rows.iter().filter_map(|r| r.gpu_warm.as_ref().or(r.gpu_cold.as_ref()).map(|g| (r, g))).collect();
        if rows.is_empty() {
            return s;
        }
        let _ = writeln!(s, "\nWork per kernel (last warm run; counted by the kernels' witnesses and the host):\n");
        let _ = writeln!(
            s,
            "| adapter | kernel | n | device kernel | dispatches | pairs | comparisons | per pair | MiB read back | host f64 distances | rows recomputed |"
        );
        let _ = writeln!(s, "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        for (r, g) in rows {
            for (name, k) in &g.transfers.kernels {
                let per_pair = if k.pairs > 0 && k.comparisons > 0 {
                    format!("{:.2}", k.comparisons as f64 / k.pairs as f64)
                } else {
                    "–".into()
                };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2} | {} | {} |",
                    r.adapter,
                    r.kernel,
                    r.n,
                    name,
                    k.dispatches,
                    k.pairs,
                    k.comparisons,
                    per_pair,
                    k.bytes_read_back as f64 / (1u64 << 20) as f64,
                    k.host_f64_distances,
                    k.host_rows_recomputed,
                );
            }
        }
        s
    }

    /// Where the GPU rows' time went (last warm run, else the cold run): device time per kernel
    /// (timestamp queries), host time blocked on the device, recording, readback copies, host
    /// refinement, submits and bytes read back.
    fn phases_table(&self) -> String {
        let mut s = String::new();
        let rows: Vec<(&Row, &crate::gpu::GpuStats)> =
            self.rows.iter().filter_map(|r| r.gpu_warm.as_ref().or(r.gpu_cold.as_ref()).map(|g| (r, g))).collect();
        if rows.is_empty() {
            return s;
        }
        let _ = writeln!(
            s,
            "\nWhere the GPU time went (last warm run; device times from timestamp queries where the adapter has them):\n"
        );
        let _ = writeln!(
            s,
            "| adapter | kernel | set | n | wall s | device s per kernel | wait s | encode s | readback s | upload s | refine s | submits | MiB read back | tiles |"
        );
        let _ = writeln!(s, "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
        for (r, g) in rows {
            let t = &g.transfers;
            let kernels: Vec<String> =
                t.kernels.iter().map(|(k, v)| format!("{k} {:.4} ({}×)", v.gpu_s, v.dispatches)).collect();
            let wall = r.warm_runs_s.last().copied().or(r.cold_s);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {:.4} | {} | {:.1} | {} |",
                r.adapter,
                r.kernel,
                r.kernel_set.unwrap_or("–"),
                r.n,
                wall.map_or("–".into(), |w| format!("{w:.4}")),
                kernels.join(", "),
                t.wait_s,
                t.encode_s,
                t.readback_s,
                t.upload_s,
                g.refine_s,
                t.submits,
                t.bytes_read_back as f64 / (1u64 << 20) as f64,
                g.tiles.map_or("–".into(), |t| format!(
                    "{}×{} rows×points, {} coords, {}×{} per invocation",
                    t.rows(),
                    t.points(),
                    t.coords,
                    t.row_block,
                    crate::gpu::distances_tiled::REGISTER_BLOCK
                )) + &g.streamed.map_or(String::new(), |s| format!(
                    "; streamed: {}-row blocks × {} tiles of ≤ {} points",
                    s.rows, s.tiles, s.width
                )) + if g.refine == crate::gpu::Refine::Device { "; refined on the device" } else { "" },
            );
        }
        s
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 { s[m] } else { 0.5 * (s[m - 1] + s[m]) }
}
