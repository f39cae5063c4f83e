//! `faithful backends`: every backend and adapter with its status, limits and features.

use std::fmt::Write as _;

use faithful::Result;
use faithful::backend::AUTO_MIN_PAIRS;
use faithful::gpu::adapters_report;

#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let adapters = adapters_report();
    // The listing's verdict by position (the same enumeration): kernels' needs and a device
    // started on the adapter.
    let listed = faithful::gpu_adapters();
    let verdict = |i: usize, a: &faithful::gpu::AdapterReport| -> Option<String> {
        listed.get(i).filter(|u| (&u.name, &u.backend) == (&a.name, &a.backend)).map(|u| match &u.unusable {
            None => "usable".to_string(),
            Some(why) => format!("not usable: {why}"),
        })
    };
    let env = std::env::var("WGPU_BACKEND").ok();
    let gpu_status = if adapters.is_empty() {
        format!(
            "unavailable: wgpu found no adapter{} (install a Vulkan, Metal, DX12 or GL driver; on Linux without a GPU, Mesa's lavapipe: mesa-vulkan-drivers)",
            env.as_ref().map(|e| format!(" for WGPU_BACKEND={e}")).unwrap_or_default()
        )
    } else {
        "available".to_string()
    };
    if args.json {
        let body = serde_json::json!({
            "backends": [
                {"backend": "cpu", "status": "available", "threads": rayon::current_num_threads(), "numerics": ["exact"]},
                {"backend": "gpu", "status": gpu_status, "numerics": ["exact", "fast"], "adapters": adapters, "usable": adapters.iter().enumerate().map(|(i, a)| verdict(i, a)).collect::<Vec<_>>()},
            ],
            "wgpu_backend_env": env,
            "auto_policy": format!("gpu when the adapter is a hardware GPU and n² ≥ {AUTO_MIN_PAIRS:e}, else cpu"),
        });
        return crate::output::print(&format!("{body}\n"));
    }
    let mut text = format!("cpu   available, {} threads, exact\n", rayon::current_num_threads());
    let _ = writeln!(text, "gpu   {gpu_status}");
    for (i, a) in adapters.iter().enumerate() {
        let _ = writeln!(
            text,
            "      - {} [{} {}, driver {}] hardware={} max storage binding {} MiB, max buffer {} MiB, workgroup memory {} KiB; {}",
            a.name,
            a.backend,
            a.device_type,
            driver_words(&a.driver, &a.driver_info),
            a.hardware,
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroup_storage_size >> 10,
            verdict(i, a).unwrap_or_else(|| "not listed".into())
        );
    }
    let _ = writeln!(text, "auto  gpu when the adapter is a hardware GPU and n² ≥ {AUTO_MIN_PAIRS:e}, else cpu");
    crate::output::print(&text)
}

/// The driver's name and version as one phrase: GL adapters report no name, which left two
/// spaces; "unknown" when neither is given.
fn driver_words(driver: &str, info: &str) -> String {
    let words: Vec<&str> = [driver.trim(), info.trim()].into_iter().filter(|w| !w.is_empty()).collect();
    if words.is_empty() { "unknown".into() } else { words.join(" ") }
}

#[cfg(test)]
mod tests {
    use super::driver_words;

    #[test]
    fn a_missing_driver_name_leaves_no_double_space() {
        assert_eq!(driver_words("", "4.5 (Core Profile) Mesa 24.2"), "4.5 (Core Profile) Mesa 24.2");
        assert_eq!(driver_words("llvmpipe", "Mesa 24.2"), "llvmpipe Mesa 24.2");
        assert_eq!(driver_words(" ", ""), "unknown");
    }
}
