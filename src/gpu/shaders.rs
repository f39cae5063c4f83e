//! The WGSL sources, written once under `shaders/`; each kernel is compiled with the shared
//! prelude (`bound.wgsl`) in front.

/// A compute kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    SqDist,
    KnnCandidates,
    RankCounts,
    PairStats,
    Density,
}

const PRELUDE: &str = include_str!("../../shaders/bound.wgsl");

impl Kernel {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::SqDist => "sqdist",
            Kernel::KnnCandidates => "knn_candidates",
            Kernel::RankCounts => "rank_counts",
            Kernel::PairStats => "pair_stats",
            Kernel::Density => "density",
        }
    }
    /// Full WGSL source: prelude + kernel.
    pub fn source(self) -> String {
        let body = match self {
            Kernel::SqDist => include_str!("../../shaders/sqdist.wgsl"),
            Kernel::KnnCandidates => include_str!("../../shaders/knn_candidates.wgsl"),
            Kernel::RankCounts => include_str!("../../shaders/rank_counts.wgsl"),
            Kernel::PairStats => include_str!("../../shaders/pair_stats.wgsl"),
            Kernel::Density => include_str!("../../shaders/density.wgsl"),
        };
        format!("{PRELUDE}\n{body}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel parses and validates with naga (what wgpu does before compiling).
    #[test]
    fn kernels_validate() {
        for k in [Kernel::SqDist, Kernel::KnnCandidates, Kernel::RankCounts, Kernel::PairStats, Kernel::Density] {
            let module = naga::front::wgsl::parse_str(&k.source()).unwrap_or_else(|e| panic!("{}: {}", k.name(), e.emit_to_string(&k.source())));
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
                .validate(&module)
                .unwrap_or_else(|e| panic!("{}: {e:?}", k.name()));
        }
    }
}
