//! The measures, with ZADU 0.5.4's ids, parameters, defaults, validation and output keys.
//!
//! Each measure is a [`MeasureDef`] in [`REGISTRY`]: it declares its parameters and the
//! resources it needs, and computes from a [`Ctx`] that holds those resources. Measures never
//! compute distances themselves and never know which backend built their resources.

mod ale;
mod c_evm;
mod ca_tnc;
mod cadi;
mod cca_stress;
mod class_distances;
pub mod coranking;
mod def;
mod density_preservation;
mod dsc;
mod dtm;
mod gce;
mod gi;
mod global_score;
mod hypothesis_margin;
mod ivm;
mod kl_div;
mod knn_classification;
mod knn_overlap;
mod l_tnc;
mod lcmc;
mod mrre;
mod nd;
mod nerv;
mod nh;
mod nm_stress;
mod pr;
mod proc;
mod registry;
mod residual_variance;
mod sammon;
mod scagnostics;
mod sn_stress;
mod snc;
mod srho;
mod stress;
mod support;
mod tnc;
mod topo;
mod topology;
mod triplet_accuracy;

pub use def::{HighReads, KRule, LocalDef, LocalKind, MeasureDef, ParamDef, ParamKind, Resolved};
pub use registry::{REGISTRY, ZADU_PENDING, find, graph_measures};

use crate::control::Control;
use crate::data::{Labels, Points};
use crate::resources::{CoRankCounts, CrossRanks, Neighbours, Pairwise, RowSweep};

/// What a measure reads: the two point sets, labels, and the resources it declared.
pub struct Ctx<'a> {
    pub high: &'a Points,
    pub low: &'a Points,
    pub labels: Option<&'a Labels>,
    pub knn_high: Option<&'a Neighbours>,
    pub knn_low: Option<&'a Neighbours>,
    pub cross: Option<&'a CrossRanks>,
    /// All-pairs resources: extents, pair sums, densities, pair order.
    pub pairwise: Option<&'a Pairwise>,
    /// Rows per task of a measure's own pass over rows (coranking); results do not depend on it.
    pub block_rows: usize,
    /// Whether local values are returned; a measure whose local values cost extra work (snc)
    /// may then leave them empty.
    pub local: bool,
    /// Progress and cancellation for a measure's own pass (coranking).
    pub ctl: &'a Control,
    /// The co-ranking counts of a pass fused with the row pass, when one ran (coranking reads
    /// them instead of its own pass).
    pub coranking: Option<&'a CoRankCounts>,
    /// The memory budget in bytes, for a measure whose memory depends on the data (topology's
    /// H1 reduction counts what it grows against it).
    pub memory_budget: u64,
}

impl Ctx<'_> {
    /// Number of points.
    pub fn n(&self) -> usize {
        self.low.n()
    }
    fn knn_high(&self) -> &Neighbours {
        self.knn_high.expect("planner provides the original space's kNN")
    }
    fn knn_low(&self) -> &Neighbours {
        self.knn_low.expect("planner provides the projection's kNN")
    }
    fn cross(&self) -> &CrossRanks {
        self.cross.expect("planner provides cross ranks")
    }
    fn pairwise(&self) -> &Pairwise {
        self.pairwise.expect("planner provides the all-pairs resources")
    }
    fn sweep(&self) -> &RowSweep {
        self.pairwise().sweep.as_ref().expect("planner provides the full-row sweep")
    }
    fn labels(&self) -> &Labels {
        self.labels.expect("labels were validated")
    }
}

/// A measure's result, every value under its key name: the evaluator matches the names to the
/// keys the measure declares ([`Resolved::keys`], `local_keys`) and fails with
/// [`crate::Error::MeasureOutput`] on a missing, extra or duplicated key, so a value can never
/// land under another key's name. Built with [`Output::new`] and its `value`/`local`/`curve`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Output {
    /// `(key, value)`, in the order the measure wrote them.
    pub values: Vec<(String, f64)>,
    /// `(local key, one value per point)`.
    pub local: Vec<(String, Vec<f64>)>,
    /// Curves over a parameter (coranking's, index K − 1) by name.
    pub curves: Vec<(String, Vec<f64>)>,
}

impl Output {
    /// An output with nothing in it yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds the value of `key`.
    pub fn value(mut self, key: impl Into<String>, value: f64) -> Self {
        self.values.push((key.into(), value));
        self
    }
    /// Adds the per-point values of local key `key`.
    pub fn local(mut self, key: impl Into<String>, values: Vec<f64>) -> Self {
        self.local.push((key.into(), values));
        self
    }
    /// Adds the curve `name`.
    pub fn curve(mut self, name: impl Into<String>, values: Vec<f64>) -> Self {
        self.curves.push((name.into(), values));
        self
    }
}

/// Applies `f` to every point in parallel, keeping point order (bit-identical for any thread count).
fn per_point<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(f).collect()
}

/// T&C's normalisation factor `2 / (k (2n - 3k - 1))`, as ZADU computes it.
fn tnc_factor(n: usize, k: usize) -> f64 {
    2.0 / ((k * (2 * n - 3 * k - 1)) as f64)
}
