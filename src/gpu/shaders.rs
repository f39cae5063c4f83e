//! The WGSL sources, written once under `shaders/`; each kernel is compiled with the shared
//! prelude (`bound.wgsl`) in front.

/// A compute kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    Distances,
    /// `distances_tiled.wgsl`, compiled with these tile sizes.
    DistancesTiled(super::distances_tiled::Tiles),
    SqDist,
    KnnCandidates,
    RankCounts,
    PairStats,
    Density,
}

/// Threads per workgroup of every kernel.
pub const WG: usize = 64;
/// `knn_candidates`: per-thread list length (k ≤ 64 · KT_MAX) and the workgroup pool of U values.
pub const KT_MAX: usize = 8;
pub const POOL: usize = 1024;
/// `rank_counts`: most queries per row in workgroup memory.
pub const KQ_MAX: usize = 128;
/// `rank_counts`: points l per tile in workgroup memory (4 per invocation: a quarter of the
/// barriers of one per invocation).
pub const RANK_TILE: usize = 4 * WG;

/// The constants above as WGSL, in front of every kernel (written once, here).
fn constants() -> String {
    format!(
        "const WG: u32 = {WG}u;\nconst KT_MAX: u32 = {KT_MAX}u;\nconst POOL: u32 = {POOL}u;\nconst KQ_MAX: u32 = {KQ_MAX}u;\nconst RANK_TILE: u32 = {RANK_TILE}u;\n"
    )
}

const PRELUDE: &str = include_str!("../../shaders/bound.wgsl");

impl Kernel {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Distances => "distances",
            Kernel::DistancesTiled(_) => "distances_tiled",
            Kernel::SqDist => "sqdist",
            Kernel::KnnCandidates => "knn_candidates",
            Kernel::RankCounts => "rank_counts",
            Kernel::PairStats => "pair_stats",
            Kernel::Density => "density",
        }
    }
    /// The kernel reads the prepared points (binding 1); every kernel after `distances`
    /// (certified or Fast) reads only its output.
    pub fn reads_points(self) -> bool {
        matches!(self, Kernel::Distances | Kernel::DistancesTiled(_))
    }
    /// The kernel reads the row norms (binding 2).
    pub fn reads_norms(self) -> bool {
        !self.reads_points()
    }
    /// Full WGSL source: prelude + kernel.
    pub fn source(self) -> String {
        let body = match self {
            Kernel::Distances => include_str!("../../shaders/distances.wgsl"),
            Kernel::DistancesTiled(t) => {
                return format!(
                    "{}{}{PRELUDE}\n{}",
                    constants(),
                    t.wgsl_constants(),
                    include_str!("../../shaders/distances_tiled.wgsl")
                );
            }
            Kernel::SqDist => include_str!("../../shaders/sqdist.wgsl"),
            Kernel::KnnCandidates => include_str!("../../shaders/knn_candidates.wgsl"),
            Kernel::RankCounts => include_str!("../../shaders/rank_counts.wgsl"),
            Kernel::PairStats => include_str!("../../shaders/pair_stats.wgsl"),
            Kernel::Density => include_str!("../../shaders/density.wgsl"),
        };
        format!("{}{PRELUDE}\n{body}", constants())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel parses and validates with naga (what wgpu does before compiling).
    #[test]
    fn kernels_validate() {
        let tiled = |l: &wgpu::Limits| Kernel::DistancesTiled(super::super::distances_tiled::Tiles::choose(l));
        let large = wgpu::Limits { max_compute_workgroup_storage_size: 48 << 10, ..Default::default() };
        for k in [
            Kernel::Distances,
            tiled(&wgpu::Limits::default()),
            tiled(&large),
            Kernel::SqDist,
            Kernel::KnnCandidates,
            Kernel::RankCounts,
            Kernel::PairStats,
            Kernel::Density,
        ] {
            let module = naga::front::wgsl::parse_str(&k.source())
                .unwrap_or_else(|e| panic!("{}: {}", k.name(), e.emit_to_string(&k.source())));
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                .validate(&module)
                .unwrap_or_else(|e| panic!("{}: {e:?}", k.name()));
        }
    }
}
