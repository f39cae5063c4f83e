//! How much more memory this process may take under its limits: `RLIMIT_AS` less its address
//! space, `RLIMIT_DATA` less its data segment, and each enclosing cgroup's `memory.max` less
//! that cgroup's use. The default memory budget is the smallest of these and half the physical
//! memory ([`crate::resources::default_memory_budget`]), so that a run planned within it is not
//! killed by a limit the machine's size does not show (`ulimit -v`, a container).

/// The least headroom under the process's limits, in bytes; `None` when nothing limits it (or
/// on a system where the limits cannot be read).
pub fn headroom() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib = |key: &str| -> u64 {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
                .map_or(0, |k| k.saturating_mul(1024))
        };
        [
            rlimit(libc::RLIMIT_AS).map(|lim| lim.saturating_sub(kib("VmSize:"))),
            rlimit(libc::RLIMIT_DATA).map(|lim| lim.saturating_sub(kib("VmData:"))),
            cgroup_headroom(),
        ]
        .into_iter()
        .flatten()
        .min()
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The soft limit of `resource`; `None` when unlimited.
#[cfg(target_os = "linux")]
fn rlimit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the limit into `lim`, a valid rlimit.
    if unsafe { libc::getrlimit(resource, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is u64 on 64-bit Linux, not everywhere
    Some(lim.rlim_cur as u64)
}

/// The least `limit − usage` over the process's memory cgroup and its ancestors (cgroup v2's
/// `memory.max` and `memory.current`, or v1's `memory.limit_in_bytes` and
/// `memory.usage_in_bytes`); `None` when no cgroup limits memory.
#[cfg(target_os = "linux")]
fn cgroup_headroom() -> Option<u64> {
    use std::path::{Path, PathBuf};
    let read = |p: &Path| std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse::<u64>().ok());
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut best: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (root, limit, usage) = match controllers {
            "" => (PathBuf::from("/sys/fs/cgroup"), "memory.max", "memory.current"),
            c if c.split(',').any(|c| c == "memory") => {
                (PathBuf::from("/sys/fs/cgroup/memory"), "memory.limit_in_bytes", "memory.usage_in_bytes")
            }
            _ => continue,
        };
        // The cgroup and every ancestor up to the root: a parent's limit binds too.
        let mut dir = root.join(path.trim_start_matches('/'));
        loop {
            // "max" (v2) does not parse: no limit; v1 writes a huge number for none.
            if let Some(max) = read(&dir.join(limit)).filter(|&m| m < (1 << 60)) {
                let used = read(&dir.join(usage)).unwrap_or(0);
                let room = max.saturating_sub(used);
                best = Some(best.map_or(room, |b| b.min(room)));
            }
            if dir == root || !dir.pop() || !dir.starts_with(&root) {
                break;
            }
        }
    }
    best
}
