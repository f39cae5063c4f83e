//! The public adapter listing ([`gpu_adapters`]): every adapter wgpu sees, with whether
//! faithful's kernels can run on it and why not, and the reopening of a listed adapter for an
//! evaluation (`EvaluatorBuilder::gpu_adapter`).

use super::GpuError;
use super::shaders::{RANK_WG, WG, WORKGROUP_BYTES, storage_buffers};

/// One GPU adapter, as [`gpu_adapters`] lists it. Pass it to
/// [`crate::EvaluatorBuilder::gpu_adapter`] to evaluate on exactly this adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdapterInfo {
    /// The adapter's name (`NVIDIA H200`, `llvmpipe (LLVM 19.1.7, 256 bits)`).
    pub name: String,
    /// The graphics API wgpu reaches it through: `Vulkan`, `Metal`, `Dx12`, `Gl` or
    /// `BrowserWebGpu`.
    pub backend: String,
    /// `DiscreteGpu`, `IntegratedGpu`, `VirtualGpu`, `Cpu` (a software rasteriser) or `Other`.
    pub device_type: String,
    /// A hardware GPU (discrete or integrated); `auto` serves only on one.
    pub hardware: bool,
    /// `None` when the adapter meets what faithful's kernels need (compute shaders, the
    /// workgroup size, storage buffers per stage, workgroup memory) and a device faithful asks
    /// for could be created on it when it was listed; else why not (an adapter whose device
    /// cannot be created, such as NVIDIA's GL adapter on a headless EGL, "Parent device is
    /// lost", is listed unusable, never offered). A device that fails later (a driver fault)
    /// is reported by an evaluation as [`crate::GpuError::Device`].
    pub unusable: Option<String>,
    /// Its position in wgpu's enumeration (with the same `WGPU_BACKEND`), to reopen it.
    index: usize,
}

impl AdapterInfo {
    /// faithful's kernels can run on it ([`AdapterInfo::unusable`] is `None`).
    pub fn is_usable(&self) -> bool {
        self.unusable.is_none()
    }

    fn new(index: usize, adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        AdapterInfo {
            name: info.name.clone(),
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            hardware: matches!(info.device_type, wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu),
            unusable: unusable(adapter),
            index,
        }
    }
}

/// An instance over `backends`, unless `WGPU_BACKEND` names others (the user's choice wins).
pub(super) fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = backends;
    }
    wgpu::Instance::new(desc)
}

/// Every adapter wgpu sees (after `WGPU_BACKEND`), in wgpu's order: the one enumeration the
/// listing, the reopening and the choice by name share.
pub(super) async fn all_adapters() -> Vec<wgpu::Adapter> {
    instance(wgpu::Backends::all()).enumerate_adapters(wgpu::Backends::all()).await
}

/// Why faithful cannot start a device on `adapter` with `limits` (the adapter's own, as
/// `Gpu::new_async` asks), or `None`; the device, when created, is dropped at once.
#[cfg(not(target_arch = "wasm32"))]
async fn device_fails(adapter: &wgpu::Adapter, limits: &wgpu::Limits) -> Option<String> {
    let timestamps = adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
    match adapter.request_device(&device_descriptor(limits, timestamps)).await {
        Ok(_) => None,
        Err(e) => Some(format!("its device could not be created: {e}")),
    }
}

/// Every adapter in wgpu's order, each meeting the kernels' needs probed by starting a device.
#[cfg(not(target_arch = "wasm32"))]
pub(super) async fn listed() -> Vec<AdapterInfo> {
    let mut out = Vec::new();
    for (i, a) in all_adapters().await.iter().enumerate() {
        let mut info = AdapterInfo::new(i, a);
        if info.unusable.is_none() {
            info.unusable = device_fails(a, &a.limits()).await;
        }
        out.push(info);
    }
    out
}

/// Why faithful's kernels cannot run on `adapter`, or `None`.
fn unusable(adapter: &wgpu::Adapter) -> Option<String> {
    let compute = adapter.get_downlevel_capabilities().flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
    unmet(compute, &adapter.limits())
}

/// What an adapter with these capabilities lacks for faithful's kernels, or `None`. The
/// requirements come from the kernels themselves (`shaders.rs`: the workgroup size, the storage
/// buffers the binding tables hold, the workgroup memory naga lays out).
fn unmet(compute_shaders: bool, limits: &wgpu::Limits) -> Option<String> {
    let mut why = Vec::new();
    if !compute_shaders {
        why.push("it has no compute shaders".to_string());
    }
    let wg = WG.max(RANK_WG) as u32;
    let needs = [
        ("invocations per workgroup", limits.max_compute_invocations_per_workgroup, wg),
        ("workgroup width", limits.max_compute_workgroup_size_x, wg),
        ("storage buffers per shader stage", limits.max_storage_buffers_per_shader_stage, storage_buffers()),
        ("bytes of workgroup memory", limits.max_compute_workgroup_storage_size, WORKGROUP_BYTES),
    ];
    for (what, has, need) in needs {
        if has < need {
            why.push(format!("it allows {has} {what}, faithful's kernels need {need}"));
        }
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Every adapter wgpu sees (honouring `WGPU_BACKEND`), in wgpu's order, with whether
/// faithful can use it: its kernels' needs met, and a device started on it (then dropped) when
/// listed. Empty when there is none (no driver, or a build for a machine without one).
///
/// ```
/// for adapter in faithful::gpu_adapters() {
///     match &adapter.unusable {
///         None => println!("{} ({}, {}): usable", adapter.name, adapter.backend, adapter.device_type),
///         Some(why) => println!("{} ({}): not usable: {why}", adapter.name, adapter.backend),
///     }
///     assert_eq!(adapter.is_usable(), adapter.unusable.is_none());
/// }
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu_adapters() -> Vec<AdapterInfo> {
    super::block_on(async {
        let _quiet = super::quiet::Quiet::new();
        listed().await
    })
}

/// The adapter `chosen` describes, enumerated again: the same position, name and backend, and
/// usable, or why not.
pub(super) async fn reopen(chosen: &AdapterInfo) -> Result<wgpu::Adapter, GpuError> {
    let same = all_adapters().await.into_iter().enumerate().find(|(i, a)| {
        let now = AdapterInfo::new(*i, a);
        (now.index, &now.name, &now.backend) == (chosen.index, &chosen.name, &chosen.backend)
    });
    let (_, adapter) = same.ok_or_else(|| {
        GpuError::NoAdapter(format!("adapter '{}' ({}) is no longer listed", chosen.name, chosen.backend))
    })?;
    match unusable(&adapter) {
        None => Ok(adapter),
        Some(why) => Err(GpuError::Unsupported { adapter: chosen.name.clone(), reason: why }),
    }
}

/// The device faithful asks of an adapter: its own limits, and timestamp queries where it has
/// them (the listing's probe asks the same, so an adapter it marks usable can start one).
pub(super) fn device_descriptor(limits: &wgpu::Limits, timestamps: bool) -> wgpu::DeviceDescriptor<'static> {
    wgpu::DeviceDescriptor {
        label: Some("faithful"),
        required_features: if timestamps { wgpu::Features::TIMESTAMP_QUERY } else { wgpu::Features::empty() },
        required_limits: limits.clone(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// WebGPU's default limits hold every kernel; WebGL2's (no compute, no storage buffers) and
    /// a limit one short of a kernel's need do not, and the reason names what is short.
    #[test]
    fn requirements_are_checked_against_the_limits() {
        assert_eq!(unmet(true, &wgpu::Limits::default()), None);
        let webgl2 = unmet(false, &wgpu::Limits::downlevel_webgl2_defaults()).expect("unusable");
        assert!(webgl2.starts_with("it has no compute shaders; "), "{webgl2}");
        assert!(webgl2.contains("it allows 0 storage buffers per shader stage, faithful's kernels need 8"), "{webgl2}");
        let short = wgpu::Limits { max_compute_workgroup_storage_size: WORKGROUP_BYTES - 1, ..Default::default() };
        assert_eq!(
            unmet(true, &short),
            Some(format!(
                "it allows {} bytes of workgroup memory, faithful's kernels need {WORKGROUP_BYTES}",
                WORKGROUP_BYTES - 1
            ))
        );
    }

    /// An adapter whose device cannot be created is marked unusable with the driver's reason,
    /// never offered (the NVIDIA GL "Parent device is lost" case): asking a real adapter for
    /// more than it allows makes the same request fail. Without an adapter there is nothing to
    /// probe (the listing is empty).
    #[test]
    fn an_adapter_whose_device_fails_is_marked_unusable() {
        super::super::block_on(async {
            let _quiet = super::super::quiet::Quiet::new();
            let all = all_adapters().await;
            for a in all.iter().filter(|a| unusable(a).is_none()) {
                assert_eq!(device_fails(a, &a.limits()).await, None, "{:?}", a.get_info().name);
                let over = wgpu::Limits {
                    max_compute_workgroup_storage_size: a.limits().max_compute_workgroup_storage_size + 1,
                    ..a.limits()
                };
                let why = device_fails(a, &over).await.expect("a device beyond the adapter's limits fails");
                assert!(why.starts_with("its device could not be created: "), "{why}");
            }
            let listed = listed().await;
            assert_eq!(listed.len(), all.len());
        });
    }
}
