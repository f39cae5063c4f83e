//! Facts about the machine for a benchmark receipt: OS, CPU, memory, versions, peak RSS.

use serde::Serialize;

/// The machine a receipt was measured on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub os: String,
    pub kernel: Option<String>,
    pub arch: &'static str,
    pub cpu_model: Option<String>,
    /// Logical CPUs the process may use.
    pub cores: usize,
    /// Rayon worker threads (what the CPU reference uses).
    pub threads: usize,
    pub memory_bytes: Option<u64>,
    pub faithful_version: &'static str,
    pub wgpu_version: Option<String>,
    pub git_commit: Option<String>,
    /// /proc/loadavg when the run started (other work on the machine skews timings).
    pub load_average: Option<String>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// `key: value` lines (/proc/cpuinfo, /proc/meminfo, /proc/self/status): the first value of `key`.
fn field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find(|l| l.split(':').next().is_some_and(|k| k.trim() == key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// The version of a package in this crate's Cargo.lock.
pub fn locked_version(package: &str) -> Option<String> {
    let lock = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"));
    let want = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == want {
            return lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = "))
                .map(|v| v.trim_matches('"').to_string());
        }
    }
    None
}

impl Machine {
    pub fn detect() -> Self {
        let os = read("/etc/os-release")
            .and_then(|t| field(&t.replace('=', ":"), "PRETTY_NAME"))
            .map(|s| s.trim_matches('"').to_string());
        let git_commit = std::process::Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        Machine {
            os: os.unwrap_or_else(|| std::env::consts::OS.to_string()),
            kernel: read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
            arch: std::env::consts::ARCH,
            cpu_model: read("/proc/cpuinfo").and_then(|t| field(&t, "model name")),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            threads: rayon::current_num_threads(),
            memory_bytes: read("/proc/meminfo")
                .and_then(|t| field(&t, "MemTotal"))
                .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|k| k * 1024),
            faithful_version: env!("CARGO_PKG_VERSION"),
            wgpu_version: locked_version("wgpu"),
            git_commit,
            load_average: read("/proc/loadavg").map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")),
        }
    }
}

/// Peak resident set size of this process (VmHWM), bytes; `None` where /proc is missing.
pub fn peak_rss_bytes() -> Option<u64> {
    let t = read("/proc/self/status")?;
    field(&t, "VmHWM")?.trim_end_matches("kB").trim().parse::<u64>().ok().map(|k| k * 1024)
}

/// Current resident set size (VmRSS), bytes.
pub fn rss_bytes() -> Option<u64> {
    let t = read("/proc/self/status")?;
    field(&t, "VmRSS")?.trim_end_matches("kB").trim().parse::<u64>().ok().map(|k| k * 1024)
}

/// Resets the peak RSS to the current RSS (Linux ≥ 4.0: `5` to /proc/self/clear_refs), so each
/// benchmark row reports its own peak. Returns whether it worked.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn versions_and_fields() {
        assert!(super::locked_version("wgpu").is_some_and(|v| v.starts_with("30")));
        assert_eq!(super::field("model name\t: AMD EPYC\nx: 1", "model name").as_deref(), Some("AMD EPYC"));
    }
}
