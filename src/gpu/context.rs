//! [`Gpu`]: the one place that owns wgpu's device — adapter choice (one listed by
//! `adapters.rs`, which also owns the instance and enumeration under `WGPU_BACKEND`; by name
//! substring; or wgpu's default), device with the adapter's real limits, pipeline cache and
//! readback.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::GpuError;
use super::adapters::{all_adapters, device_descriptor, instance};
use super::shaders::Kernel;

/// Largest block of distances (rows × n f32) per buffer: 1 GiB, so that a block covers
/// thousands of rows at n = 100 000 (few submits) while two in flight stay small next to a
/// discrete GPU's memory; adapters with smaller binding limits get their limit.
pub const MAX_BLOCK_BYTES: u64 = 1 << 30;

/// What the caller asks of the GPU.
#[derive(Debug, Clone, Default)]
pub struct GpuRequest {
    /// Use the first adapter whose name contains this (case-insensitive).
    pub adapter: Option<String>,
    /// Use exactly this adapter of [`super::gpu_adapters`] (before `adapter`).
    pub chosen: Option<super::AdapterInfo>,
    /// Cap on rows per dispatch (tests force small block plans with it).
    pub max_rows_per_dispatch: Option<u32>,
    /// Cap on the bytes of one output buffer (tests force small block plans with it).
    pub max_buffer_bytes: Option<u64>,
    /// Tests only: the first this-many dispatches fail as a lost device would, to exercise the
    /// retry with smaller blocks and the fallback to the CPU.
    pub fail_dispatches: u32,
    /// Tests only: coordinates per `distances` dispatch instead of `bound::DIM_CHUNK` (a chunk
    /// beyond a driver's loop budget shows the completeness witness at work).
    pub dim_chunk: Option<u32>,
    /// Tests only: a NaN in the bound's constants after the domain checks, so that every ε is
    /// NaN; the kernels must then decide nothing and the host refine everything.
    pub poison_bound: bool,
    /// The squared-distance kernel: tiled (default) or the classic one.
    pub kernels: super::KernelSet,
    /// Tests only: these tile sizes instead of the ones chosen from the adapter's limits.
    pub tiles: Option<super::Tiles>,
    /// Tests only: points per `rank_counts` dispatch instead of the adapter's choice
    /// (`rank_counts::point_chunk`: one range on a hardware GPU, ranges of 6144 on software).
    pub rank_chunk: Option<u32>,
    /// Device memory for the row blocks' resident distances (two blocks in flight, each with
    /// every space of the pass) instead of [`RESIDENT_BYTES`]: larger blocks fill a large GPU
    /// (`faithful bench --gpu-resident`); each buffer stays within the binding limit.
    pub resident_bytes: Option<u64>,
    /// Points per tile of a streamed plan (row blocks × point tiles) instead of the planner's
    /// choice, which streams only when whole rows would leave blocks of few rows
    /// (`faithful bench --gpu-point-tile`; tests force the streamed code path with it).
    pub point_tile: Option<u32>,
    /// Where the f64 distances of the pairs f32 left undecided are computed: on the host
    /// (default) or their sums of squares on the device (`exact_sqdist.wgsl`; Euclidean
    /// spaces of the row plan, else the host, with the reason in the run report).
    pub refine: Refine,
}

/// Where the f64 distances of the pairs to refine are computed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Refine {
    /// On the host (`reference::distance_pair`), the measured default.
    #[default]
    Host,
    /// Their sums of squares on the device (`exact_sqdist.wgsl`), the roots on the host.
    Device,
}

/// Default device memory for the row blocks' resident distances ([`GpuRequest::resident_bytes`]).
pub const RESIDENT_BYTES: u64 = 2 * MAX_BLOCK_BYTES;

/// One adapter as `faithful backends` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct AdapterReport {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub vendor: u32,
    pub device: u32,
    pub hardware: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroup_storage_size: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub features: Vec<String>,
}

impl AdapterReport {
    fn new(info: &wgpu::AdapterInfo, limits: &wgpu::Limits, features: wgpu::Features) -> Self {
        AdapterReport {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            vendor: info.vendor,
            device: info.device,
            hardware: matches!(info.device_type, wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu),
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_buffer_size: limits.max_buffer_size,
            max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
            max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
            max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            features: features.iter_names().map(|(n, _)| n.to_string()).collect(),
        }
    }
}

/// wgpu's high-performance adapter among the primary backends (Vulkan, Metal, DX12, browser
/// WebGPU), and only where they have none among the secondary ones (GL). Probing GL when a
/// primary adapter exists costs start time and, on NVIDIA's headless EGL, gives an adapter whose
/// device cannot be created ("Parent device is lost", H200 receipt of 2026-11-30).
async fn default_adapter() -> Result<wgpu::Adapter, GpuError> {
    let options =
        wgpu::RequestAdapterOptions { power_preference: wgpu::PowerPreference::HighPerformance, ..Default::default() };
    let primary = instance(wgpu::Backends::PRIMARY).request_adapter(&options).await;
    match primary {
        Ok(a) => Ok(a),
        Err(first) => instance(wgpu::Backends::SECONDARY)
            .request_adapter(&options)
            .await
            .map_err(|e| GpuError::NoAdapter(format!("{first}; {e}"))),
    }
}

/// Every adapter wgpu can see (after `WGPU_BACKEND`), for `faithful backends`.
pub async fn adapters_report_async() -> Vec<AdapterReport> {
    let _quiet = super::quiet::Quiet::new();
    all_adapters().await.iter().map(|a| AdapterReport::new(&a.get_info(), &a.limits(), a.features())).collect()
}

/// Every adapter wgpu can see (blocking).
#[cfg(not(target_arch = "wasm32"))]
pub fn adapters_report() -> Vec<AdapterReport> {
    super::block_on(adapters_report_async())
}

/// A started device with its pipelines.
pub struct Gpu {
    pub report: AdapterReport,
    pub limits: wgpu::Limits,
    pub request: GpuRequest,
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    pipelines: Mutex<HashMap<Kernel, Arc<wgpu::ComputePipeline>>>,
    /// The device measures each dispatch with timestamp queries.
    pub timestamps: bool,
    /// Output and readback buffers for reuse.
    pub(super) pool: super::pool::BufferPool,
    /// Dispatches started (for `GpuRequest::fail_dispatches`).
    pub(super) dispatched: AtomicU32,
    /// Each step halves the rows per dispatch (after a device error).
    shrink: AtomicU32,
    /// Seconds spent starting the device.
    pub start_s: f64,
    /// Tile sizes of `distances_tiled` (from the limits, or `GpuRequest::tiles`).
    pub tiles: super::Tiles,
}

impl Gpu {
    /// Picks an adapter (the one chosen from the listing, by name substring, else wgpu's
    /// high-performance choice) and starts a
    /// device with the adapter's own limits.
    pub async fn new_async(req: &GpuRequest) -> Result<Gpu, GpuError> {
        let t0 = web_time::Instant::now();
        // Drivers may print while they are probed (see `quiet`); declared first, dropped last.
        let _quiet = super::quiet::Quiet::new();
        let adapter = match (&req.chosen, &req.adapter) {
            (Some(chosen), _) => super::adapters::reopen(chosen).await?,
            (None, Some(sub)) => {
                let all = all_adapters().await;
                let names: Vec<String> = all.iter().map(|a| a.get_info().name).collect();
                let want = sub.to_lowercase();
                all.into_iter().find(|a| a.get_info().name.to_lowercase().contains(&want)).ok_or_else(|| {
                    GpuError::NoAdapter(format!(
                        "no adapter name contains '{sub}' (adapters: {})",
                        if names.is_empty() { "none".into() } else { names.join(", ") }
                    ))
                })?
            }
            (None, None) => default_adapter().await?,
        };
        let limits = adapter.limits();
        let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let report = AdapterReport::new(&adapter.get_info(), &limits, adapter.features());
        let (device, queue) = adapter
            .request_device(&device_descriptor(&limits, timestamps))
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(Gpu {
            report,
            limits: limits.clone(),
            request: req.clone(),
            device,
            queue,
            pipelines: Mutex::new(HashMap::new()),
            pool: Default::default(),
            timestamps,
            dispatched: AtomicU32::new(0),
            shrink: AtomicU32::new(0),
            start_s: t0.elapsed().as_secs_f64(),
            tiles: req.tiles.unwrap_or_else(|| super::Tiles::choose(&limits)),
        })
    }

    /// [`Gpu::new_async`], blocking.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn new(req: &GpuRequest) -> Result<Gpu, GpuError> {
        super::block_on(Self::new_async(req))
    }

    /// The compiled pipeline of `kernel` (compiled once, then cached).
    pub(super) async fn pipeline(&self, kernel: Kernel) -> Result<Arc<wgpu::ComputePipeline>, GpuError> {
        if let Some(p) = self.pipelines.lock().expect("pipeline cache").get(&kernel) {
            return Ok(p.clone());
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel.name()),
            source: wgpu::ShaderSource::Wgsl(kernel.source().into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel.name()),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Runtime { stage: "pipeline compilation", message: e.to_string() });
        }
        let p = Arc::new(pipeline);
        self.pipelines.lock().expect("pipeline cache").insert(kernel, p.clone());
        Ok(p)
    }

    /// Largest single output buffer to allocate: the adapter's binding limit, at most
    /// [`MAX_BLOCK_BYTES`] (two blocks are in flight at a time).
    pub(super) fn max_output_bytes(&self) -> u64 {
        let lim = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size).min(MAX_BLOCK_BYTES);
        let lim = self.request.max_buffer_bytes.map_or(lim, |m| m.min(lim)).max(4);
        // A power of two: pooled buffers are rounded up to one and must stay within the limit.
        1 << (63 - lim.leading_zeros())
    }

    /// Most rows one dispatch may cover.
    pub(super) fn max_rows(&self) -> u32 {
        let lim = self.limits.max_compute_workgroups_per_dimension;
        let rows = self.request.max_rows_per_dispatch.map_or(lim, |m| m.min(lim));
        (rows >> self.shrink.load(Ordering::Relaxed).min(31)).max(1)
    }

    /// Halves the rows per dispatch from now on (after an out-of-memory or lost-device error).
    pub fn shrink_blocks(&self) {
        self.shrink.fetch_add(1, Ordering::Relaxed);
    }
}
