//! The WGSL sources, written once under `shaders/`; each kernel is compiled with the constants
//! shared with Rust (written once, here) and the shared prelude (`bound.wgsl`) in front. Each
//! kernel's bindings are a table here ([`Kernel::bindings`]) that the host binds from, and that
//! a test checks against the WGSL by naga reflection, so a mismatch fails `cargo test`.

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
    ExactSqDist,
}

/// Threads per workgroup of every kernel but `rank_counts` and `distances_tiled`.
pub const WG: usize = 64;
/// Threads per workgroup of `rank_counts` (one workgroup per row): a row's l loop is a chain
/// of dependent loads, and more threads per row keep more of them in flight (a block of
/// 1 342 rows gave an H200 one 64-thread workgroup per row, a third of its thread slots). Its
/// witness sums are the same for any count. WebGPU's floor allows 256.
pub const RANK_WG: usize = 256;
/// The distance forms' codes in `Params.form` (`bound::Form`'s discriminants), defined with
/// the bound.
pub use crate::certify::bound::{FORM_CHEBYSHEV, FORM_CITYBLOCK, FORM_SQUARED};
/// `knn_candidates`: per-thread list length (k ≤ 64 · KT_MAX) and the workgroup pool of U values.
pub const KT_MAX: usize = 8;
pub const POOL: usize = 1024;
/// `rank_counts`: most queries per row in workgroup memory.
pub const KQ_MAX: usize = 128;
/// `rank_counts`: words of its completeness witness per row (the workgroup's sums of its loop
/// trips, `rank_counts::rank_witness_complete`), the first of the row's `RANK_INFO` words (then
/// the comparisons made outside loops, the overlap count, the dense base).
pub const RANK_WITNESS: usize = 8;
pub const RANK_INFO: usize = 11;
/// `knn_candidates`: words per row of its `info` (count, pool size, dense base, whether τ' came
/// from the tile minima, then the witness sums of its s̃ loops, minima loop, pool ranking, copy).
pub const KNN_INFO: usize = 8;
/// `pair_stats`: values per row (Σx, Σy, Σx², Σy², Σxy, Σ(x−y)², the scaled residual, the
/// three centred moments, and the extremes of both spaces).
pub const ROW_VALUES: usize = 14;
/// `density`: most bandwidths one dispatch handles (a multiple of 4: they travel as vec4).
pub const MAX_SIGMAS: usize = 8;

/// Every kernel of fixed size (`distances_tiled` takes its tiles from the adapter's limits,
/// `Tiles::choose`, so it asks nothing an adapter must be checked for beforehand).
pub const ALL: [Kernel; 7] = [
    Kernel::Distances,
    Kernel::SqDist,
    Kernel::KnnCandidates,
    Kernel::RankCounts,
    Kernel::PairStats,
    Kernel::Density,
    Kernel::ExactSqDist,
];

/// The most workgroup memory one kernel declares, in bytes (`rank_counts`: seven query arrays
/// and two atomic count arrays of `KQ_MAX` words, the overlap counter, the dense base, the
/// witness sums); a
/// test checks it against naga's layout of every kernel.
pub const WORKGROUP_BYTES: u32 = ((9 * KQ_MAX + 2 + RANK_INFO) * 4) as u32;

/// The most storage buffers one kernel binds (an adapter must allow as many per stage).
pub fn storage_buffers() -> u32 {
    ALL.iter().map(|k| k.bindings().iter().filter(|(_, a)| *a != Access::Uniform).count() as u32).max().unwrap_or(0)
}

/// How a kernel binds one buffer of group 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The kernel's `Params` (binding 0).
    Uniform,
    /// A read-only storage buffer.
    Read,
    /// A read-write storage buffer (the kernel's outputs).
    ReadWrite,
}

use Access::{Read, ReadWrite, Uniform};

/// The host's bindings, by kernel: 0 the parameters, 1 the prepared points, 2 the row norms,
/// then from 3 on the resident buffers and inputs (read), then the outputs (read-write).
const DISTANCES: &[(u32, Access)] = &[(0, Uniform), (1, Read), (3, ReadWrite), (4, ReadWrite)];
const DISTANCES_TILED: &[(u32, Access)] =
    &[(0, Uniform), (1, Read), (2, Read), (3, ReadWrite), (4, ReadWrite), (5, ReadWrite)];
const SQDIST: &[(u32, Access)] = &[(0, Uniform), (2, Read), (3, Read), (4, ReadWrite), (5, ReadWrite)];
const KNN_CANDIDATES: &[(u32, Access)] = &[
    (0, Uniform),
    (2, Read),
    (3, Read),
    (4, Read),
    (5, ReadWrite),
    (6, ReadWrite),
    (7, ReadWrite),
    (8, ReadWrite),
    (9, ReadWrite),
];
const RANK_COUNTS: &[(u32, Access)] = &[
    (0, Uniform),
    (2, Read),
    (3, Read),
    (4, Read),
    (5, ReadWrite),
    (6, ReadWrite),
    (7, ReadWrite),
    (8, ReadWrite),
    (9, ReadWrite),
];
const PAIR_STATS: &[(u32, Access)] =
    &[(0, Uniform), (2, Read), (3, Read), (4, Read), (5, Read), (6, ReadWrite), (7, ReadWrite)];
const DENSITY: &[(u32, Access)] = &[(0, Uniform), (2, Read), (3, Read), (4, Read), (5, ReadWrite), (6, ReadWrite)];
const EXACT_SQDIST: &[(u32, Access)] = &[(0, Uniform), (3, Read), (4, Read), (5, Read), (6, ReadWrite), (7, ReadWrite)];

/// The constants above as WGSL, in front of every kernel (written once, here).
fn constants() -> String {
    let (sq, l1, linf) = (FORM_SQUARED, FORM_CITYBLOCK, FORM_CHEBYSHEV);
    format!(
        "const WG: u32 = {WG}u;\nconst RANK_WG: u32 = {RANK_WG}u;\nconst KT_MAX: u32 = {KT_MAX}u;\nconst POOL: u32 = {POOL}u;\nconst KQ_MAX: u32 = {KQ_MAX}u;\nconst RANK_WITNESS: u32 = {RANK_WITNESS}u;\nconst RANK_INFO: u32 = {RANK_INFO}u;\nconst KNN_INFO: u32 = {KNN_INFO}u;\nconst ROW_VALUES: u32 = {ROW_VALUES}u;\nconst MAX_SIGMAS: u32 = {MAX_SIGMAS}u;\nconst FORM_SQUARED: u32 = {sq}u;\nconst FORM_CITYBLOCK: u32 = {l1}u;\nconst FORM_CHEBYSHEV: u32 = {linf}u;\n"
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
            Kernel::ExactSqDist => "exact_sqdist",
        }
    }
    /// The kernel's bindings of group 0, in binding order: (binding, access).
    pub fn bindings(self) -> &'static [(u32, Access)] {
        match self {
            Kernel::Distances => DISTANCES,
            Kernel::DistancesTiled(_) => DISTANCES_TILED,
            Kernel::SqDist => SQDIST,
            Kernel::KnnCandidates => KNN_CANDIDATES,
            Kernel::RankCounts => RANK_COUNTS,
            Kernel::PairStats => PAIR_STATS,
            Kernel::Density => DENSITY,
            Kernel::ExactSqDist => EXACT_SQDIST,
        }
    }
    /// The kernel reads the prepared points (binding 1); every kernel after `distances`
    /// (certified or Fast) reads only its output.
    pub fn reads_points(self) -> bool {
        self.bindings().iter().any(|&(b, _)| b == 1)
    }
    /// The kernel reads the row norms (binding 2).
    pub fn reads_norms(self) -> bool {
        self.bindings().iter().any(|&(b, _)| b == 2)
    }
    /// Checks the buffers the host passes from binding 3 on against the table: `resident`
    /// buffers already on the device (read, or accumulated into), then `inputs` (read), then
    /// `outputs` (read-write), one binding each.
    pub fn check_buffers(self, resident: usize, inputs: usize, outputs: usize) -> Result<(), String> {
        let from_3: Vec<Access> = self.bindings().iter().filter(|&&(b, _)| b >= 3).map(|&(_, a)| a).collect();
        let fits = from_3.len() == resident + inputs + outputs
            && from_3[resident..resident + inputs].iter().all(|&a| a == Read)
            && from_3[resident + inputs..].iter().all(|&a| a == ReadWrite);
        if fits {
            Ok(())
        } else {
            Err(format!(
                "{} binds {from_3:?} after the norms; the host passed {resident} resident buffers, {inputs} inputs and {outputs} outputs",
                self.name()
            ))
        }
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
            Kernel::ExactSqDist => include_str!("../../shaders/exact_sqdist.wgsl"),
        };
        format!("{}{PRELUDE}\n{body}", constants())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel, the tiled one at WebGPU's floor tiles, at the tiles of an adapter with
    /// 48 KiB of workgroup memory, and with that and 1024 invocations (8-row register blocks).
    fn all() -> Vec<Kernel> {
        let tiled = |l: &wgpu::Limits| Kernel::DistancesTiled(super::super::distances_tiled::Tiles::choose(l));
        let large = wgpu::Limits { max_compute_workgroup_storage_size: 48 << 10, ..Default::default() };
        let desktop = wgpu::Limits { max_compute_invocations_per_workgroup: 1024, ..large.clone() };
        let mut all = ALL.to_vec();
        all.extend([tiled(&wgpu::Limits::default()), tiled(&large), tiled(&desktop)]);
        all
    }

    /// The kernel's final source, parsed and validated by naga (what wgpu does before compiling).
    fn module(k: Kernel) -> (naga::Module, naga::valid::ModuleInfo) {
        let src = k.source();
        let module =
            naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{}: {}", k.name(), e.emit_to_string(&src)));
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {e:?}", k.name()));
        (module, info)
    }

    /// The bindings the entry point uses, as naga reflects them (what wgpu's automatic layout
    /// holds): (binding, access), in binding order, all in group 0.
    fn reflected(k: Kernel) -> Vec<(u32, Access)> {
        use naga::{AddressSpace, StorageAccess};
        let (module, info) = module(k);
        assert_eq!(module.entry_points.len(), 1, "{}: one entry point", k.name());
        let uses = info.get_entry_point(0);
        let mut out: Vec<(u32, Access)> = module
            .global_variables
            .iter()
            .filter(|(h, _)| !uses[*h].is_empty())
            .filter_map(|(_, g)| {
                let b = g.binding.as_ref()?;
                assert_eq!(b.group, 0, "{}: {:?} outside group 0", k.name(), g.name);
                let access = match g.space {
                    AddressSpace::Uniform => Access::Uniform,
                    AddressSpace::Storage { access } if access.contains(StorageAccess::STORE) => Access::ReadWrite,
                    AddressSpace::Storage { .. } => Access::Read,
                    other => panic!("{}: {:?} in {other:?}", k.name(), g.name),
                };
                Some((b.binding, access))
            })
            .collect();
        out.sort_by_key(|&(b, _)| b);
        out
    }

    /// Every kernel parses and validates with naga.
    #[test]
    fn kernels_validate() {
        for k in all() {
            module(k);
        }
    }

    /// The host's binding table of every kernel is what its WGSL declares and uses.
    #[test]
    fn binding_tables_match_the_wgsl() {
        for k in all() {
            assert_eq!(k.bindings(), reflected(k).as_slice(), "{}: host table vs WGSL", k.name());
        }
    }

    /// The reflection sees what it must (else an empty table would pass): a read-only input,
    /// the uniform, and an atomic output.
    #[test]
    fn reflection_sees_access_modes() {
        assert_eq!(reflected(Kernel::Distances), [(0, Uniform), (1, Read), (3, ReadWrite), (4, ReadWrite)]);
        assert!(reflected(Kernel::RankCounts).contains(&(4, Read)));
    }

    /// [`WORKGROUP_BYTES`], which adapters are checked against, is the largest workgroup memory
    /// a kernel declares, as naga lays it out; [`storage_buffers`] counts what the tables bind.
    #[test]
    fn adapter_requirements_are_what_the_kernels_declare() {
        let workgroup_bytes = |k: Kernel| -> u32 {
            let (module, _) = module(k);
            module
                .global_variables
                .iter()
                .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
                .map(|(_, g)| module.types[g.ty].inner.size(module.to_ctx()))
                .sum()
        };
        assert_eq!(ALL.iter().map(|&k| workgroup_bytes(k)).max(), Some(WORKGROUP_BYTES));
        assert_eq!(storage_buffers(), 8, "rank_counts binds 8 storage buffers");
    }

    /// The host's buffer counts are checked against the table.
    #[test]
    fn buffer_counts_are_checked() {
        assert!(Kernel::KnnCandidates.check_buffers(2, 0, 5).is_ok(), "s̃ and the tile minima resident");
        assert!(Kernel::KnnCandidates.check_buffers(2, 0, 4).is_err());
        assert!(Kernel::KnnCandidates.check_buffers(1, 0, 6).is_err(), "the minima bound as an output");
        assert!(
            Kernel::DistancesTiled(super::super::distances_tiled::Tiles::choose(&wgpu::Limits::default()))
                .check_buffers(1, 0, 2)
                .is_ok(),
            "s̃ and the epilogue's minima"
        );
        assert!(Kernel::PairStats.check_buffers(2, 1, 2).is_ok());
        assert!(Kernel::PairStats.check_buffers(1, 2, 2).is_ok());
        assert!(Kernel::PairStats.check_buffers(2, 2, 1).is_err(), "an output bound read-only");
        assert!(Kernel::Distances.check_buffers(1, 0, 1).is_ok(), "s accumulated in a resident buffer");
        assert!(Kernel::Distances.check_buffers(0, 1, 1).is_err(), "an input bound read-write");
        assert!(Kernel::Distances.reads_points() && !Kernel::Distances.reads_norms());
        assert!(Kernel::Density.reads_norms() && !Kernel::Density.reads_points());
    }

    /// The shared constants are injected, not written into the kernels: no kernel declares
    /// them or writes a literal workgroup size.
    #[test]
    fn kernels_take_the_shared_constants_from_rust() {
        let bodies = [
            ("bound", PRELUDE),
            ("distances", include_str!("../../shaders/distances.wgsl")),
            ("distances_tiled", include_str!("../../shaders/distances_tiled.wgsl")),
            ("sqdist", include_str!("../../shaders/sqdist.wgsl")),
            ("knn_candidates", include_str!("../../shaders/knn_candidates.wgsl")),
            ("rank_counts", include_str!("../../shaders/rank_counts.wgsl")),
            ("pair_stats", include_str!("../../shaders/pair_stats.wgsl")),
            ("density", include_str!("../../shaders/density.wgsl")),
            ("exact_sqdist", include_str!("../../shaders/exact_sqdist.wgsl")),
        ];
        for (name, body) in bodies {
            // The tiled kernel's workgroup is its tiles' (TW_P × TW_R, injected from `Tiles`).
            let size = match name {
                "distances_tiled" => "@workgroup_size(TW_P, TW_R)",
                "rank_counts" => "@workgroup_size(RANK_WG)",
                _ => "@workgroup_size(WG)",
            };
            assert!(body.contains(size) || name == "bound", "{name}: {size}");
            for c in [
                "WG",
                "RANK_WG",
                "KT_MAX",
                "POOL",
                "KQ_MAX",
                "RANK_WITNESS",
                "RANK_INFO",
                "KNN_INFO",
                "ROW_VALUES",
                "MAX_SIGMAS",
                "FORM_SQUARED",
                "FORM_CITYBLOCK",
                "FORM_CHEBYSHEV",
                "TW_P",
                "TW_R",
                "TKC",
                "RBQ",
            ] {
                assert!(!body.contains(&format!("const {c}:")), "{name} declares {c}");
            }
        }
        for k in all() {
            assert!(k.source().starts_with(&constants()), "{}", k.name());
        }
    }
}
