//! Results and the run report, in the CLI's JSON schema:
//! `{"projections":[{"name","scores":[{"id","params","values","local"?,"local_kinds"?,"curves"?}]}],"run":{...}}`;
//! `local_kinds` (local key → `mean`, `sum`, `share`, `partial_mean`, `count`, `score`,
//! `log_ratio`) comes with `local`;
//! `curves` (name → array, index K − 1) appears for measures that have curves (coranking).

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

#[cfg(feature = "gpu")]
pub use crate::gpu::{AdapterReport, GpuStats};
use crate::measures::{LocalKind, Resolved};
use crate::resources::{Needs, PassStats};
use crate::spec::ParamValue;

/// Without the `gpu` feature no adapter serves: [`RunReport::adapter`] is always `None`.
#[cfg(not(feature = "gpu"))]
#[derive(Debug, Clone, Serialize)]
pub enum AdapterReport {}

/// Without the `gpu` feature there is no GPU work: [`RunReport::gpu`] is always `None`.
#[cfg(not(feature = "gpu"))]
#[derive(Debug, Clone, Serialize)]
pub enum GpuStats {}

/// One measure's result on one projection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Score {
    /// ZADU alias of the measure (`tnc`).
    pub id: String,
    /// Every parameter, defaults included.
    pub params: Vec<(String, ParamValue)>,
    /// Output keys and values, in ZADU's key order.
    pub values: Vec<(String, f64)>,
    /// Per-point values, when requested and the measure has them. A point without a value (only
    /// in a local whose kind [allows it](LocalKind::allows_missing)) is `NaN` here and `null`
    /// in JSON.
    pub local: Option<Vec<(String, Vec<f64>)>>,
    /// What each local output's values mean, in the order of `local` (empty without `local`).
    pub local_kinds: Vec<(String, LocalKind)>,
    /// Curves over a parameter by name (coranking's, index K − 1); empty for other measures.
    pub curves: Vec<(String, Vec<f64>)>,
}

impl Score {
    /// A score of `r` whose local outputs, when present, carry the kinds `r` declares.
    pub(crate) fn new(
        r: &Resolved,
        values: Vec<(String, f64)>,
        local: Option<Vec<(String, Vec<f64>)>>,
        curves: Vec<(String, Vec<f64>)>,
    ) -> Score {
        let local_kinds = local
            .iter()
            .flatten()
            .filter_map(|(key, v)| r.def.local_kind(key).map(|kind| (key.clone(), narrowed(kind, v))))
            .collect();
        Score { id: r.def.id.into(), params: r.params.clone(), values, local, local_kinds, curves }
    }
    /// The value under `key`.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
    /// The local values under `key`.
    pub fn local(&self, key: &str) -> Option<&[f64]> {
        self.local.as_ref()?.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }
    /// What the local values under `key` mean ([`LocalKind`]), when they are present.
    pub fn local_kind(&self, key: &str) -> Option<LocalKind> {
        self.local_kinds.iter().find(|(k, _)| k == key).map(|(_, kind)| *kind)
    }
    /// The curve under `key`.
    pub fn curve(&self, key: &str) -> Option<&[f64]> {
        self.curves.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice())
    }
}

/// The kind a result reports: a `partial_mean` output in which every point has a value is a
/// plain `mean` (its values average to the value), so a reader need not look for nulls.
fn narrowed(kind: LocalKind, values: &[f64]) -> LocalKind {
    match kind {
        LocalKind::PartialMean if !values.iter().any(|v| v.is_nan()) => LocalKind::Mean,
        other => other,
    }
}

/// Serialises `[(key, value)]` as a JSON object, keeping the order.
struct Ordered<'a, V>(&'a [(String, V)]);

impl<V: Serialize> Serialize for Ordered<'_, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Serialize for Score {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Score", 6)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("params", &Ordered(&self.params))?;
        st.serialize_field("values", &Ordered(&self.values))?;
        if let Some(local) = &self.local {
            // NaN (a point without a value) is written as `null` by serde_json.
            st.serialize_field("local", &Ordered(local))?;
            st.serialize_field("local_kinds", &Ordered(&self.local_kinds))?;
        } else {
            st.skip_field("local")?;
            st.skip_field("local_kinds")?;
        }
        if self.curves.is_empty() {
            st.skip_field("curves")?;
        } else {
            st.serialize_field("curves", &Ordered(&self.curves))?;
        }
        st.end()
    }
}

/// The scores of one projection.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ProjectionScores {
    /// The projection's name ([`crate::Points::name`]).
    pub name: String,
    /// One score per spec, in the order of the specs ([`crate::Evaluator::views`]: then the
    /// optional specs defined on this projection, in their order).
    pub scores: Vec<Score>,
}

/// An optional spec left out of one projection's scores because it is undefined there (the
/// views' Shepard caption: Spearman's ρ of a constant projection), with the reason.
///
/// ```
/// use faithful::{Evaluator, Points, ViewsRequest};
/// let high = Points::from_vec("high", 6, 1, vec![0., 1., 3., 4., 9., 11.])?;
/// let flat = Points::from_vec("flat", 6, 1, vec![2.; 6])?;
/// let request = ViewsRequest::new().k(2).optional(vec!["srho".parse()?]);
/// let v = Evaluator::builder(high).build().views(&[&flat], None, &["stress".parse()?], &request)?;
/// assert_eq!(v.evaluation.projections[0].scores.len(), 1);
/// assert_eq!(v.projections[0].left_out[0].id, "srho");
/// # Ok::<(), faithful::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LeftOut {
    /// The measure's id.
    pub id: String,
    /// Why it is undefined on this projection.
    pub reason: String,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: undefined because {}", self.id, self.reason)
    }
}

/// The result of evaluating one or more projections.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Evaluation {
    /// One entry per projection, in the order given.
    pub projections: Vec<ProjectionScores>,
    /// What served the run.
    pub run: RunReport,
}

/// Which backend produced one output, under which numerics posture.
#[derive(Debug, Clone, Serialize)]
pub struct Served {
    pub output: String,
    pub backend: String,
    pub numerics: String,
}

/// How the work was split.
#[derive(Debug, Clone, Serialize)]
pub struct BlockPlan {
    /// Merged resource needs of all specs.
    pub needs: Needs,
    /// The original space's kNN came from an earlier call of the same evaluator.
    pub knn_high_reused: bool,
    pub block_rows: usize,
    pub blocks: usize,
    /// O(n) scratch per worker: two distance rows, the selection keys and a block of
    /// `reference::ROW_TILE` original-space rows, or the certified rows' group of f32 rows
    /// when larger (`work.certified_group_bytes`).
    pub scratch_bytes_per_worker: usize,
    /// O(n·k) resources held for the measures.
    pub resource_bytes: usize,
    /// The all-pairs resources: pair-order plan (in memory or external) and cache reuse.
    pub pairwise: Option<crate::resources::PairwiseReport>,
    /// Where the original space's cross ranks came from (its resident rank table, or its rows
    /// recomputed) and why; `None` when no measure needed cross ranks.
    pub high_ranks: Option<crate::resources::HighRanksReport>,
    /// How each projection's neighbours and ranks were found: its exact spatial index
    /// (`kd_tree`) or its full distance rows (`rows`), and why; empty when no projection's
    /// neighbours were needed.
    pub low_index: Vec<crate::resources::LowIndexReport>,
    /// How the original space's rows were served when the CPU pass computed them: certified
    /// f32 rows (`certified_f32`: cosine, correlation, euclidean, sqeuclidean) or the exact f64
    /// rows (`exact_f64`),
    /// and why; absent when no row was computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high_rows: Option<crate::resources::HighRowsReport>,
}

/// Wall-clock phases, in seconds.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    pub validate_s: f64,
    pub resources_s: f64,
    pub measures_s: f64,
    pub total_s: f64,
}

/// The GPU part of a run.
#[derive(Debug, Clone, Serialize)]
pub struct GpuRun {
    /// Instance, adapter and device start-up (the first call of an evaluator only).
    pub device_start_s: f64,
    pub stats: GpuStats,
}

/// What served a run: backend, posture, plan, work tallies and timings.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct RunReport {
    /// This crate's version.
    pub faithful_version: &'static str,
    /// `auto`, `cpu` or `gpu`, as asked for.
    pub backend_requested: String,
    /// `cpu` or `gpu`: what built the neighbours and ranks (`cpu+gpu`: a fold of row
    /// shards some of which each served).
    pub backend: String,
    /// `exact`, or `fast` when the GPU served in the Fast posture.
    pub numerics: String,
    /// Why the backend or posture differs from the one asked for, when it does.
    pub fallback_reason: Option<String>,
    /// The adapter that served, when the GPU did.
    pub adapter: Option<AdapterReport>,
    /// GPU work: candidates, overlaps refined, rows recomputed, transfers and times.
    pub gpu: Option<GpuRun>,
    /// Worker threads of the run.
    pub threads: usize,
    /// Points.
    pub n: usize,
    /// Dimensions of the original space.
    pub dim_high: usize,
    /// Dimensions of each projection.
    pub dims_low: Vec<usize>,
    /// How each space's distances were computed: the original space's input (coordinates,
    /// distance matrix, kNN graph) and metric; the projections' (Euclidean).
    pub spaces: crate::space::SpacesReport,
    /// Which backend and posture produced each output (neighbours, ranks, pairs, measures).
    pub served: Vec<Served>,
    /// How the work was planned and split.
    pub plan: BlockPlan,
    /// Work tallies of the row pass.
    pub work: PassStats,
    /// Wall-clock phases.
    pub timings: Timings,
}
