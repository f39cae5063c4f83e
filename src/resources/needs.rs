//! [`Needs`]: what a measure asks of the planner.

use super::Neighbours;
use super::pairs::{CcaJob, NervJob};

/// What a measure needs; 0, `false` or empty means "not needed". Merging takes the maximum of
/// the neighbour counts (a kNN list of k rows holds every smaller k as a prefix and ranks do
/// not depend on k), ORs the flags and unites the density bandwidths.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Needs {
    /// kNN in the original space.
    pub knn_high: usize,
    /// kNN in the projection.
    pub knn_low: usize,
    /// Ranks and distances across spaces of each space's first `cross` neighbours.
    pub cross: usize,
    /// The distances of the cross-rank pairs too (the topographic product): without it the CPU
    /// row pass leaves [`super::CrossRanks`]' distance lists empty and reads no original
    /// distance of a projection's neighbour whose rank the resident table gives.
    pub cross_dists: bool,
    /// Ranks and distances in each projection of the original space's first `cross_low`
    /// neighbours only (continuity, mrre_missing): no original distance row is read, so a kNN
    /// graph serves it. Within `cross`, when that is also needed.
    pub cross_low: usize,
    /// Sums over all pairs i < j (stress, scale-normalised stress, Pearson).
    pub pair_sums: bool,
    /// Gaussian densities of both spaces, one per bandwidth σ (sorted, distinct).
    pub density_sigmas: Vec<f64>,
    /// The pairs sorted by distance in each space, with average ranks in both (Spearman).
    pub pair_ranks: bool,
    /// The pairs sorted by original distance, with the isotonic fit (non-metric stress).
    pub pair_isotonic: bool,
    /// Sammon's sums over full rows.
    pub sammon: bool,
    /// CCA's sums over full rows, one per weighting (distinct).
    pub cca: Vec<CcaJob>,
    /// The average local error over full rows, of the distances (`false`) and/or of their
    /// squares (`true`, tf-projection-qm's).
    pub ale: Vec<bool>,
    /// NeRV's per-point divergences, one per neighbourhood (distinct).
    pub nerv: Vec<NervJob>,
}

impl Needs {
    /// kNN in both spaces.
    pub fn knn_both(k: usize) -> Self {
        Needs { knn_high: k, knn_low: k, ..Default::default() }
    }
    /// kNN in both spaces plus cross-space ranks and distances.
    pub fn cross(k: usize) -> Self {
        Needs { knn_high: k, knn_low: k, cross: k, ..Default::default() }
    }
    /// [`Needs::cross`] with the distances of the cross-rank pairs.
    pub fn cross_with_dists(k: usize) -> Self {
        Needs { cross_dists: true, ..Needs::cross(k) }
    }
    /// kNN in both spaces plus the projection's ranks of the original neighbours only.
    pub fn cross_low(k: usize) -> Self {
        Needs { knn_high: k, knn_low: k, cross_low: k, ..Default::default() }
    }
    /// kNN in the projection only.
    pub fn knn_low(k: usize) -> Self {
        Needs { knn_low: k, ..Default::default() }
    }
    /// Sums over all pairs.
    pub fn pair_sums() -> Self {
        Needs { pair_sums: true, ..Default::default() }
    }
    /// The densities of both spaces for bandwidth `sigma`.
    pub fn density(sigma: f64) -> Self {
        Needs { density_sigmas: vec![sigma], ..Default::default() }
    }
    /// The pair order with average ranks in both spaces.
    pub fn pair_ranks() -> Self {
        Needs { pair_ranks: true, ..Default::default() }
    }
    /// The pair order with the isotonic fit.
    pub fn pair_isotonic() -> Self {
        Needs { pair_isotonic: true, ..Default::default() }
    }
    /// Sammon's sums.
    pub fn sammon() -> Self {
        Needs { sammon: true, ..Default::default() }
    }
    /// CCA's sums for one weighting.
    pub fn cca(job: CcaJob) -> Self {
        Needs { cca: vec![job], ..Default::default() }
    }
    /// The average local error of the distances or (`squared`) of their squares.
    pub fn ale(squared: bool) -> Self {
        Needs { ale: vec![squared], ..Default::default() }
    }
    /// NeRV's divergences for one neighbourhood.
    pub fn nerv(job: NervJob) -> Self {
        Needs { nerv: vec![job], ..Default::default() }
    }
    /// The union of two needs.
    pub fn merge(self, o: Needs) -> Needs {
        let mut cca = self.cca;
        for c in o.cca {
            if !cca.iter().any(|d| d.kernel == c.kernel && d.lambda.to_bits() == c.lambda.to_bits()) {
                cca.push(c);
            }
        }
        let mut nerv = self.nerv;
        for j in o.nerv {
            if !nerv.iter().any(|d| d.shared == j.shared && d.perplexity.to_bits() == j.perplexity.to_bits()) {
                nerv.push(j);
            }
        }
        let mut sigmas = self.density_sigmas;
        sigmas.extend(o.density_sigmas);
        sigmas.sort_by(f64::total_cmp);
        sigmas.dedup_by(|a, b| a.to_bits() == b.to_bits());
        Needs {
            knn_high: self.knn_high.max(o.knn_high),
            knn_low: self.knn_low.max(o.knn_low),
            cross: self.cross.max(o.cross),
            cross_low: self.cross_low.max(o.cross_low),
            cross_dists: self.cross_dists || o.cross_dists,
            pair_sums: self.pair_sums || o.pair_sums,
            density_sigmas: sigmas,
            pair_ranks: self.pair_ranks || o.pair_ranks,
            pair_isotonic: self.pair_isotonic || o.pair_isotonic,
            sammon: self.sammon || o.sammon,
            cca,
            ale: {
                let mut a = self.ale;
                a.extend(o.ale);
                a.sort();
                a.dedup();
                a
            },
            nerv,
        }
    }
    /// Whether a measure needs full distance rows (the all-pairs sweep of Sammon, CCA, the
    /// average local error and NeRV).
    pub fn full_rows(&self) -> bool {
        self.sammon || !self.cca.is_empty() || !self.ale.is_empty() || !self.nerv.is_empty()
    }
    /// Whether any all-pairs resource (sums, densities, order) is needed.
    pub fn any_pairwise(&self) -> bool {
        self.pair_sums || !self.density_sigmas.is_empty() || self.pair_order() || self.full_rows()
    }
    /// Bytes of the neighbour lists and cross ranks these needs size for `n` points and
    /// `projections` projections (4-byte indices or ranks, 8-byte distances; saturating).
    pub fn list_bytes(&self, n: usize, projections: usize) -> u64 {
        let per = |k: usize, bytes: u64| (n as u64).saturating_mul(k as u64).saturating_mul(bytes);
        let p = projections as u64;
        per(self.knn_high, 12)
            .saturating_add(per(self.knn_low, 12).saturating_mul(p))
            .saturating_add(per(self.cross.max(self.cross_low), 24).saturating_mul(p))
    }
    /// Whether a GPU has anything to serve: neighbours or cross ranks, or (`fast`) the pair
    /// sums and densities of the Fast posture.
    pub fn gpu_work(&self, fast: bool) -> bool {
        self.knn_high > 0
            || self.knn_low > 0
            || self.cross > 0
            || self.cross_low > 0
            || (fast && (self.pair_sums || !self.density_sigmas.is_empty()))
    }
    /// Whether the pairs must be sorted.
    pub fn pair_order(&self) -> bool {
        self.pair_ranks || self.pair_isotonic
    }
    /// The list lengths a row pass over `projections` projections builds (CPU and GPU alike).
    /// Cross ranks in both directions cover `cross_low` when both are needed (at the larger k).
    pub(crate) fn pass_ks(&self, projections: usize) -> PassKs {
        let lows = projections > 0;
        let (kc, kcl) = if self.cross > 0 { (self.cross.max(self.cross_low), 0) } else { (0, self.cross_low) };
        PassKs {
            kh: self.knn_high.max(kc).max(kcl),
            kl: if lows { self.knn_low.max(kc).max(kcl) } else { 0 },
            kc: if lows { kc } else { 0 },
            kcl: if lows { kcl } else { 0 },
        }
    }
    /// These needs with the projection-only cross ranks served as full cross ranks (a pass that
    /// builds both directions at once: the GPU's).
    pub(crate) fn cross_both(&self) -> Needs {
        Needs { cross: self.cross.max(self.cross_low), cross_low: 0, ..self.clone() }
    }
}

/// A row pass's list lengths: the original space's kNN (cross ranks need its first `kc`), each
/// projection's kNN, the cross ranks in both directions, and (`kcl`, when `kc` is 0) the
/// projection's ranks of the original neighbours only; the projections' are 0 when there are
/// none.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PassKs {
    pub kh: usize,
    pub kl: usize,
    pub kc: usize,
    pub kcl: usize,
}

impl PassKs {
    /// `cached` when it serves as the original kNN (the pass needs one and it is long enough).
    pub fn usable<'a>(&self, cached: Option<&'a Neighbours>) -> Option<&'a Neighbours> {
        cached.filter(|c| self.kh > 0 && c.k >= self.kh)
    }
}
