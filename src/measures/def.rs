//! What a measure is declared with ([`MeasureDef`], its parameters and `k` rule) and a spec
//! resolved against it ([`Resolved`]). The measures read these types; the table of measures
//! (`registry`) builds on them, so the imports go one way: measure → def, registry → measure.

use super::{Ctx, Output};
use crate::error::{Error, Result};
use crate::resources::Needs;
use crate::spec::ParamValue;

/// The type of a parameter.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    Int,
    Float,
    /// A finite number > 0 (ZADU's `validate_positive_real`).
    PositiveFloat,
    /// A number in [0, 1] (nerv's `lambda`).
    UnitFloat,
    /// A string from a fixed set.
    Choice(&'static [&'static str]),
    /// A clustering strategy: one of the named ones, or ZADU's `'<k>-means'` (k-means with k
    /// clusters, k ≥ 1, read by `custom_kmeans`).
    Clustering(&'static [&'static str]),
    /// An integer ≥ 0 (a count).
    Count,
    /// A random seed: an integer 0 ≤ seed < 2^bits, the range of the NumPy generator the
    /// measure reproduces (one rule for every seed: out of range is an error, never a wrap).
    /// `RandomState` (l_tnc) takes 32 bits; `default_rng`'s SeedSequence (cadi) any
    /// non-negative integer, of which faithful reproduces the 63-bit ones.
    Seed(u32),
}

/// ZADU's custom k-means strategy `'<k>-means'` (snc's `clustering_strategy`): `None` when `s`
/// does not end in `-means`, else the cluster count, or why the prefix is refused. As ZADU
/// checks it (`prefix.isdigit() and int(prefix) >= 1`), leading zeros are allowed and any size
/// is (a count above the usize range saturates: the clusterer takes min(k, points) anyway);
/// only ASCII digits are read.
pub(crate) fn custom_kmeans(s: &str) -> Option<std::result::Result<usize, &'static str>> {
    let prefix = s.strip_suffix("-means")?;
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Err("a custom k-means strategy is '<k>-means' with k a whole number written in digits"));
    }
    let k = prefix.bytes().fold(0usize, |k, b| k.saturating_mul(10).saturating_add(usize::from(b - b'0')));
    Some(if k == 0 { Err("'<k>-means' needs k >= 1 clusters") } else { Ok(k) })
}

/// What a measure's per-point values mean, so that a reader (the CLI's table, the page's colour
/// legend, a notebook) aggregates and draws them correctly: a `share` is not a score on a 0–1
/// scale, a `count` is a whole number, a `partial_mean` has points without a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LocalKind {
    /// Their mean is the measure's value (up to the order of the final sum): a per-point score
    /// on the value's scale.
    Mean,
    /// They sum to the measure's value: each point's part of a total.
    Sum,
    /// They sum to 1: each point's fraction of a total.
    Share,
    /// The mean of the points that have a value is the measure's value; a point without one
    /// has `null` (in Rust and in the browser's arrays `NaN` marks it; never 0).
    PartialMean,
    /// A whole number per point (e.g. how many of its k neighbours are false).
    Count,
    /// A per-point score on the value's scale, higher is better, that does not aggregate exactly
    /// to the value (snc's local steadiness and cohesiveness).
    Score,
    /// A signed log ratio, 0 where the point is treated alike in both spaces (a diverging scale
    /// around 0); a point without one (a zero radius) has `null`, as for `partial_mean`.
    LogRatio,
}

impl LocalKind {
    /// The name used in JSON, TypeScript and Python (`mean`, `partial_mean`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LocalKind::Mean => "mean",
            LocalKind::Sum => "sum",
            LocalKind::Share => "share",
            LocalKind::PartialMean => "partial_mean",
            LocalKind::Count => "count",
            LocalKind::Score => "score",
            LocalKind::LogRatio => "log_ratio",
        }
    }
    /// Whether a point may have no value (`NaN` in a vector, `null` in JSON).
    pub fn allows_missing(self) -> bool {
        matches!(self, LocalKind::PartialMean | LocalKind::LogRatio)
    }
}

/// One per-point output of a measure: its key and what its values mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalDef {
    pub key: &'static str,
    pub kind: LocalKind,
}

impl LocalDef {
    /// A local output of kind `kind`.
    pub const fn new(key: &'static str, kind: LocalKind) -> Self {
        LocalDef { key, kind }
    }
}

/// A parameter of a measure, with its default as written on the command line.
#[derive(Debug, Clone, Copy)]
pub struct ParamDef {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The default as a spec writes it; empty: no default, a spec must give it (no silent
    /// default where none is right, as cca_stress's `lambda`, a length in the projection's units).
    pub default: &'static str,
}

/// How a measure's `k` is validated (ZADU's `k_rule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KRule {
    None,
    /// 1 ≤ k < n.
    Neighbor,
    /// 1 ≤ k < n, with k = 0 (the default) meaning ⌊√n⌋ (ZADU's `k=None` for snc).
    NeighborSqrt,
    /// 2 ≤ k < n: a neighbourhood fitted as a point set (Procrustes), which one point,
    /// centred, leaves all zero.
    Neighborhood,
    /// 1 ≤ k < n/2 (T&C's normalisation).
    Trustworthiness,
    /// The largest neighbourhood size `k_max` of a curve: 1 ≤ k_max ≤ n − 2, or 0 for n − 2
    /// (R_NX divides by n − 1 − K); n ≥ 3.
    Curve,
}

/// What a measure reads of the original space itself, beyond the resources its [`Needs`]
/// declare: which inputs can serve it (coordinates, a distance matrix, a kNN graph).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighReads {
    /// Nothing but its [`Needs`] (neighbour lists, ranks, pair passes; or nothing of the
    /// original space at all): any input that serves those, a kNN graph when they are only
    /// each point's first k original neighbours.
    Declared,
    /// The distances of arbitrary original pairs, read itself: coordinates or a distance
    /// matrix, never a kNN graph.
    Pairs,
    /// The original coordinates (centroids, angles, areas, Procrustes and least-squares fits,
    /// k-means clusters): Euclidean geometry built in, so coordinates under the Euclidean metric.
    Coordinates,
    /// [`HighReads::Coordinates`], but [`HighReads::Declared`] when its choice parameter
    /// `param` is `value` (snc: k-means clusters coordinates, HDBSCAN (`dbscan`) the
    /// shared-neighbour graph).
    CoordinatesUnless { param: &'static str, value: &'static str },
}

/// One measure: its ZADU contract and how it is computed.
pub struct MeasureDef {
    /// ZADU's alias (`tnc`), used in outputs.
    pub id: &'static str,
    /// ZADU's full id (`trustworthiness_continuity`), accepted as input.
    pub zadu_id: &'static str,
    pub params: &'static [ParamDef],
    /// Minimum number of label classes; 0 when labels are not used.
    pub min_classes: usize,
    pub k_rule: KRule,
    /// The output keys; for a measure with `keyed_by`, the key of the default parameters.
    pub keys: &'static [&'static str],
    /// The choice parameters whose values, joined by `_`, are the measure's one output key, as in
    /// ZADU: `ivm` returns the measure's name (`silhouette`, ...), `c_evm` returns
    /// `{clustering}_{measure}` (`kmeans_arand`, ...). Empty when the keys are `keys`.
    pub keyed_by: &'static [&'static str],
    /// The per-point outputs, each with its kind.
    pub local: &'static [LocalDef],
    pub needs: fn(&Resolved) -> Needs,
    /// What it reads of the original space itself ([`Resolved::high_reads`]).
    pub high: HighReads,
    pub compute: fn(&Ctx, &Resolved) -> Result<Output>,
    /// One line for `--help` and docs.
    pub about: &'static str,
}

/// A spec checked against its measure: every parameter typed, defaults filled in.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub def: &'static MeasureDef,
    /// Every parameter of the measure, in declaration order.
    pub params: Vec<(String, ParamValue)>,
    /// The `k` parameter, or 0 for measures without one (valid once [`Resolved::check_k`] passed).
    pub k: usize,
    /// `k` as given, for the range check.
    pub(super) k_given: i64,
}

impl std::fmt::Debug for MeasureDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

impl MeasureDef {
    /// The keys of the per-point outputs, in declaration order.
    pub fn local_keys(&self) -> impl Iterator<Item = &'static str> + use<> {
        self.local.iter().map(|l| l.key)
    }
    /// The kind of the per-point output `key`.
    pub fn local_kind(&self, key: &str) -> Option<LocalKind> {
        self.local.iter().find(|l| l.key == key).map(|l| l.kind)
    }
}

impl Resolved {
    /// The output keys, in the order of the measure's values: `def.keys`, or for a measure keyed
    /// by its parameters the one key their values make.
    pub fn keys(&self) -> Vec<String> {
        if self.def.keyed_by.is_empty() {
            return self.def.keys.iter().map(|k| k.to_string()).collect();
        }
        let value = |name: &&str| self.params.iter().find(|(n, _)| n == name).map(|(_, v)| v.to_string());
        vec![self.def.keyed_by.iter().map(|p| value(p).unwrap_or_default()).collect::<Vec<_>>().join("_")]
    }

    /// Fills in a `k` that depends on the number of points: ⌊√n⌋ for [`KRule::NeighborSqrt`]
    /// when k = 0. Called before [`Resolved::check_k`].
    pub fn default_k(&mut self, n: usize) {
        if self.def.k_rule == KRule::NeighborSqrt && self.k_given == 0 {
            self.k = n.isqrt();
            self.k_given = self.k as i64;
            if let Some((_, v)) = self.params.iter_mut().find(|(name, _)| name == "k") {
                *v = ParamValue::Int(self.k_given);
            }
        }
    }

    /// Checks `k` against the number of points, with ZADU's rule for this measure.
    pub fn check_k(&self, n: usize) -> Result<()> {
        let k = self.k_given;
        let (ok, rule) = match self.def.k_rule {
            KRule::None => (true, ""),
            KRule::Neighbor | KRule::NeighborSqrt => (k >= 1 && (k as u64) < n as u64, "1 <= k < n"),
            KRule::Neighborhood => {
                (k >= 2 && (k as u64) < n as u64, "2 <= k < n (a neighbourhood of one point, centred, is all zero)")
            }
            KRule::Trustworthiness => (k >= 1 && (k as f64) < n as f64 / 2.0, "1 <= k < n/2"),
            KRule::Curve => {
                if n >= 3 && (k == 0 || (k >= 1 && k as u64 <= n as u64 - 2)) {
                    return Ok(());
                }
                return Err(Error::BadParam {
                    id: self.def.id.into(),
                    param: "k_max".into(),
                    value: k.to_string(),
                    reason: format!("need 1 <= k_max <= n-2, or 0 for n-2, and n >= 3 (n={n})"),
                });
            }
        };
        if ok { Ok(()) } else { Err(Error::KOutOfRange { id: self.def.id.into(), k, n, rule }) }
    }

    /// A float parameter (validated by [`Resolved::new`]).
    pub fn float(&self, name: &str) -> f64 {
        match self.params.iter().find(|(n, _)| n == name) {
            Some((_, ParamValue::Float(f))) => *f,
            other => panic!("{}: parameter {name} is a float, got {other:?}", self.def.id),
        }
    }

    /// What this measure needs from the planner.
    pub fn needs(&self) -> Needs {
        (self.def.needs)(self)
    }

    /// What this spec reads of the original space itself: the measure's [`HighReads`], its
    /// parameter settled ([`HighReads::CoordinatesUnless`] is `Coordinates` or `Declared`).
    pub fn high_reads(&self) -> HighReads {
        match self.def.high {
            HighReads::CoordinatesUnless { param, value } => {
                if self.params.iter().any(|(n, v)| n == param && matches!(v, ParamValue::Str(s) if s == value)) {
                    HighReads::Declared
                } else {
                    HighReads::Coordinates
                }
            }
            other => other,
        }
    }

    /// Whether a kNN graph can serve this spec (its k checked apart): the spec reads nothing of
    /// the original space itself and needs nothing of it but each point's first k neighbours
    /// (the original lists, and the projection's lists with their original ranks within k).
    pub fn graph_servable(&self) -> bool {
        let needs = self.needs();
        let lists_only =
            Needs { knn_high: needs.knn_high, knn_low: needs.knn_low, cross_low: needs.cross_low, ..Needs::default() };
        self.high_reads() == HighReads::Declared && needs == lists_only
    }
}
