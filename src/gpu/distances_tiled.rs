//! Host side of `distances_tiled.wgsl`: the tiled squared-distance kernel (a GEMM-like walk over
//! tiles of rows and points staged in workgroup memory, 4 × 4 register blocks, no norm trick),
//! its tile sizes chosen from the adapter's limits, and the kernel set that picks it or the
//! classic `distances.wgsl`. The output layout (a block's rows × n f32, row-major) and the
//! witness check are the classic kernel's, so `knn_candidates`, `rank_counts` and the Fast
//! reductions read either.

use serde::Serialize;

/// Which squared-distance kernel feeds the certified and Fast kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelSet {
    /// `distances.wgsl`: one invocation per (row, point), points re-read from cache by every row.
    Classic,
    /// `distances_tiled.wgsl`: tiles of rows and points staged in workgroup memory.
    #[default]
    Tiled,
}

impl KernelSet {
    pub fn name(self) -> &'static str {
        match self {
            KernelSet::Classic => "classic",
            KernelSet::Tiled => "tiled",
        }
    }
}

/// Points of an invocation's register block (one vec4 per row); its rows are
/// [`Tiles::row_block`], 4 or 8.
pub const REGISTER_BLOCK: u32 = 4;

/// Tile sizes of `distances_tiled.wgsl`, written into its source as constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Tiles {
    /// Invocations along the rows (TW_R) and along the points (TW_P) of a workgroup.
    pub threads_rows: u32,
    pub threads_points: u32,
    /// Coordinates staged per sub-chunk (TKC).
    pub coords: u32,
    /// Rows of an invocation's register block (4 or 8; × [`REGISTER_BLOCK`] points): 8 halves
    /// the workgroup-memory reads per pair, at 32 sums held per invocation instead of 16.
    pub row_block: u32,
}

/// WebGPU's guaranteed limits, the floor every adapter meets.
pub const FLOOR_STORAGE: u32 = 16 << 10;
pub const FLOOR_INVOCATIONS: u32 = 256;

impl Tiles {
    /// Rows of the block per workgroup (TR).
    pub fn rows(self) -> u32 {
        self.row_block * self.threads_rows
    }
    /// Points per workgroup (TP).
    pub fn points(self) -> u32 {
        REGISTER_BLOCK * self.threads_points
    }
    /// Invocations per workgroup (NT).
    pub fn invocations(self) -> u32 {
        self.threads_rows * self.threads_points
    }
    /// Workgroup memory the kernel declares: the staged rows and points, the witness counter,
    /// and the epilogue's smallest U per row.
    pub fn workgroup_bytes(self) -> u32 {
        (self.rows() + self.points()) * self.coords * 4 + 4 + self.rows() * 4
    }

    /// Tile minima per row that the epilogue writes for n points: one per tile of points.
    pub fn minima(self, n: usize) -> usize {
        n.div_ceil(self.points() as usize)
    }

    /// The largest tiles the limits allow, from WebGPU's floor (16 KiB of workgroup memory,
    /// 256 invocations of at most 256 × 256 × 64) up: 16 × 16 invocations (64 × 64 pairs per
    /// workgroup) where 256 invocations fit, else 8 × 8; then as many staged coordinates per
    /// sub-chunk (a power of two, 4 to 64) as the workgroup memory holds. More invocations per
    /// workgroup would not add reuse per invocation; more coordinates per sub-chunk halve the
    /// barriers per coordinate. Register blocks of 8 rows (128 × 64 pairs per workgroup) on an
    /// adapter of a desktop GPU's class (1 024 invocations per workgroup and 32 KiB of
    /// workgroup memory: NVIDIA, AMD, Apple, lavapipe), whose register files hold the 32 sums;
    /// wgpu reports no register count, so this class stands for it. 4 rows elsewhere.
    pub fn choose(limits: &wgpu::Limits) -> Tiles {
        let side = if limits.max_compute_invocations_per_workgroup >= 256
            && limits.max_compute_workgroup_size_x >= 16
            && limits.max_compute_workgroup_size_y >= 16
        {
            16
        } else {
            8
        };
        let large = side == 16
            && limits.max_compute_invocations_per_workgroup >= 1024
            && limits.max_compute_workgroup_storage_size >= 32 << 10;
        let row_block = if large { 8 } else { REGISTER_BLOCK };
        let mut t = Tiles { threads_rows: side, threads_points: side, coords: 64, row_block };
        while t.coords > 4 && t.workgroup_bytes() > limits.max_compute_workgroup_storage_size {
            t.coords /= 2;
        }
        t
    }

    /// The constants `distances_tiled.wgsl` is compiled with.
    pub fn wgsl_constants(self) -> String {
        format!(
            "const TW_R: u32 = {}u;\nconst TW_P: u32 = {}u;\nconst TKC: u32 = {}u;\nconst RBQ: u32 = {}u;\n",
            self.threads_rows,
            self.threads_points,
            self.coords,
            self.row_block / REGISTER_BLOCK
        )
    }

    /// Workgroups of one dispatch over `rows` block rows and n points: (point tiles, row tiles).
    pub fn groups(self, rows: usize, n: usize) -> (u32, u32) {
        (n.div_ceil(self.points() as usize) as u32, rows.div_ceil(self.rows() as usize) as u32)
    }

    /// What a complete dispatch adds to each row's witness counter per coordinate: every
    /// invocation of the ⌈n/TP⌉ workgroups that touch the row counts each coordinate once.
    pub fn trips_per_coordinate(self, n: usize) -> u64 {
        n.div_ceil(self.points() as usize) as u64 * u64::from(self.invocations())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(storage: u32, invocations: u32, size: u32) -> wgpu::Limits {
        wgpu::Limits {
            max_compute_workgroup_storage_size: storage,
            max_compute_invocations_per_workgroup: invocations,
            max_compute_workgroup_size_x: size,
            max_compute_workgroup_size_y: size,
            ..wgpu::Limits::default()
        }
    }

    #[test]
    fn distances_tiled_tiles_at_webgpu_floor_limits() {
        let t = Tiles::choose(&wgpu::Limits::default());
        assert_eq!(wgpu::Limits::default().max_compute_workgroup_storage_size, FLOOR_STORAGE);
        assert_eq!(wgpu::Limits::default().max_compute_invocations_per_workgroup, FLOOR_INVOCATIONS);
        assert_eq!((t.rows(), t.points(), t.invocations(), t.coords, t.row_block), (64, 64, 256, 16, 4));
        assert!(t.workgroup_bytes() <= FLOOR_STORAGE);
        // The downlevel floor (WebGL-class) is the same for compute.
        assert_eq!(Tiles::choose(&wgpu::Limits::downlevel_defaults()), t);
    }

    #[test]
    fn distances_tiled_tiles_at_large_limits() {
        // An NVIDIA-class adapter: 48 KiB, 1024 invocations: 8-row register blocks.
        let t = Tiles::choose(&limits(48 << 10, 1024, 1024));
        assert_eq!((t.rows(), t.points(), t.coords, t.row_block), (128, 64, 32, 8));
        assert!(t.workgroup_bytes() <= 48 << 10);
        // 32 KiB exactly (lavapipe, Apple): 8-row blocks, 32 coordinates staged.
        let t = Tiles::choose(&limits(32 << 10, 1024, 1024));
        assert_eq!((t.row_block, t.coords), (8, 32));
        assert!(t.workgroup_bytes() <= 32 << 10);
        // 256 invocations (WebGPU's floor) with more memory: 4-row blocks.
        assert_eq!(Tiles::choose(&limits(48 << 10, 256, 256)).row_block, 4);
        // Below the floor (non-conformant adapters): smaller tiles, still valid.
        let small = Tiles::choose(&limits(4 << 10, 64, 64));
        assert_eq!((small.rows(), small.invocations()), (32, 64));
        assert!(small.workgroup_bytes() <= 4 << 10, "{small:?}");
    }

    /// The twin's tile walk sums every pair in coordinate order (bit for bit the sequential
    /// `twin::sqdist`), and its witness counts are what the host expects of a complete dispatch.
    #[test]
    fn distances_tiled_twin_is_the_sequential_sum_and_its_witness_complete() {
        let mut rng = crate::splitmix::SplitMix64(5);
        for (n, dim, tiles) in [
            (70, 37, Tiles::choose(&wgpu::Limits::default())),
            (130, 5, Tiles { threads_rows: 8, threads_points: 8, coords: 4, row_block: 4 }),
            (200, 9, Tiles { threads_rows: 4, threads_points: 8, coords: 4, row_block: 8 }),
        ] {
            let data: Vec<f64> = (0..n * dim).map(|_| rng.uniform() - 0.5).collect();
            // Every distance form: squared, cityblock's sums and chebyshev's maxima.
            for metric in [crate::Metric::Euclidean, crate::Metric::Cityblock, crate::Metric::Chebyshev] {
                let points = crate::Points::from_vec("t", n, dim, data.clone()).unwrap().with_metric(metric).unwrap();
                let prep = super::super::prepare::prepare(&points);
                for (row0, rows) in [(0, n), (3, 1), (n - 65, 65)] {
                    let (s, trips) = super::super::twin::distances_tiled(&prep, tiles, row0, rows);
                    for r in 0..rows {
                        for j in 0..n {
                            let want = super::super::twin::sqdist(&prep, row0 + r, j);
                            assert_eq!(s[r * n + j].to_bits(), want.to_bits(), "n={n} row {} point {j}", row0 + r);
                        }
                    }
                    let per_row = tiles.trips_per_coordinate(n) * dim as u64;
                    assert!(trips.iter().all(|&t| u64::from(t) == per_row), "{trips:?} vs {per_row}");
                }
            }
        }
    }

    #[test]
    fn distances_tiled_witness_and_grid_cover_every_pair() {
        let t = Tiles { threads_rows: 16, threads_points: 16, coords: 16, row_block: 4 };
        assert_eq!(t.groups(1, 1), (1, 1));
        assert_eq!(t.groups(65, 129), (3, 2));
        assert_eq!(t.trips_per_coordinate(100), 2 * 256);
        assert_eq!(t.trips_per_coordinate(64), 256);
    }
}
