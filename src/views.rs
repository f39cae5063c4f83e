//! The data behind the distortion views (the page's CheckViz, reliability map, neighbour lens,
//! Shepard and co-ranking heatmaps, `faithful report`, `faithful_dr.plot`): exact resources of
//! the [`Evaluator`], never recomputed by the views.
//!
//! [`Evaluator::views`] scores the specs and, from the same row pass, keeps each projection's
//! kNN list and both spaces' cross ranks at `k` ([`Neighbourhoods`]: the lens's missing and
//! false neighbours, the reliability map's edges); then, per projection, it counts every pair
//! into a binned Shepard diagram ([`ShepardHistogram`], one exact sweep, O(bins²) memory) and
//! every ordered pair into the co-ranking matrix in log bins of K ([`CoRankingMatrix`], with
//! R_NX(K) from the same pass). All counts are exact integers, the same for any thread count,
//! block size and backend.

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::data::{Labels, Points};
use crate::error::{Error, Result};
use crate::evaluate::Evaluator;
use crate::measures::coranking::{counts_rows_binned, curves, log_auc};
use crate::report::{Evaluation, LeftOut};
use crate::resources::{
    MAX_PER_OCTAVE, MAX_SHEPARD_BINS, Needs, Neighbours, RankBins, ShepardHistogram, pair_extents, shepard_pass,
};
use crate::spec::Spec;

/// What [`Evaluator::views`] computes besides the scores. Each part is left out when its
/// parameter is 0 (or, for `optional`, empty).
///
/// ```
/// use faithful::ViewsRequest;
/// let r = ViewsRequest::new().k(15).shepard_bins(0);
/// assert_eq!((r.k, r.shepard_bins, r.coranking_per_octave), (15, 0, 4));
/// assert!(r.optional.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ViewsRequest {
    /// Neighbours per point of the lens and the reliability map (`1 ≤ k < n`; 0: none).
    pub k: usize,
    /// Bins per axis of the Shepard diagram (at most [`MAX_SHEPARD_BINS`]; 0: none).
    pub shepard_bins: usize,
    /// Bins per octave of K in the co-ranking matrix (at most 16; 0: none).
    pub coranking_per_octave: usize,
    /// Specs scored where they are defined (a view's caption: the report's stress and
    /// Spearman's ρ): after the specs' scores, from the same pass; on a projection where one is
    /// undefined ([`Error::Undefined`]) it is left out and named in
    /// [`ProjectionViews::left_out`]. Any other error fails the call, as the specs' do.
    pub optional: Vec<Spec>,
}

impl Default for ViewsRequest {
    fn default() -> Self {
        ViewsRequest { k: 10, shepard_bins: 64, coranking_per_octave: 4, optional: Vec::new() }
    }
}

/// Builder setters, `pub fn field(mut self, value) -> Self`, each with its doc line: the views'
/// parameters of [`ViewsRequest`] and of the report's options, which hold the same ones.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty;)*) => {$(
        $(#[$doc])*
        pub fn $field(mut self, $field: $ty) -> Self {
            self.$field = $field;
            self
        }
    )*};
}
// For the report's options (html_report).
#[cfg(feature = "report")]
pub(crate) use setters;

/// The parameters of the views of `id` (`views`, `report`) for n points: `k` in `1 ≤ k < n`.
pub(crate) fn check_k(id: &str, k: usize, n: usize) -> Result<()> {
    if k == 0 || k >= n {
        return Err(Error::BadParam {
            id: id.into(),
            param: "k".into(),
            value: k.to_string(),
            reason: format!("out of range: need 1 <= k < n (n={n})"),
        });
    }
    Ok(())
}

impl ViewsRequest {
    /// k = 10, 64 Shepard bins per axis, 4 co-ranking bins per octave.
    pub fn new() -> Self {
        Self::default()
    }
    setters! {
        /// Neighbours per point of the lens and reliability map (0: none).
        k: usize;
        /// Bins per axis of the Shepard diagram (0: none).
        shepard_bins: usize;
        /// Bins per octave of the co-ranking matrix (0: none).
        coranking_per_octave: usize;
        /// Specs scored on each projection where defined (see [`ViewsRequest::optional`]).
        optional: Vec<Spec>;
    }

    fn check(&self, n: usize, budget: u64, projections: usize) -> Result<()> {
        let bad = |param: &str, value: usize, reason: String| Error::BadParam {
            id: "views".into(),
            param: param.into(),
            value: value.to_string(),
            reason,
        };
        if self.k > 0 {
            check_k("views", self.k, n)?;
        }
        if self.shepard_bins > MAX_SHEPARD_BINS {
            return Err(bad("shepard_bins", self.shepard_bins, format!("out of range: at most {MAX_SHEPARD_BINS}")));
        }
        if self.coranking_per_octave > MAX_PER_OCTAVE {
            return Err(bad(
                "coranking_per_octave",
                self.coranking_per_octave,
                format!("out of range: at most {MAX_PER_OCTAVE}"),
            ));
        }
        if self.coranking_per_octave > 0 && n < 3 {
            return Err(bad(
                "coranking_per_octave",
                self.coranking_per_octave,
                format!("the co-ranking matrix needs n >= 3 (n={n})"),
            ));
        }
        let bytes = Needs::cross(self.k).list_bytes(n, projections);
        if bytes > budget {
            return Err(Error::ParamMemory {
                id: "views".into(),
                param: "k".into(),
                value: self.k.to_string(),
                what: format!("the neighbour lists and cross ranks of {n} points"),
                bytes,
                budget,
            });
        }
        Ok(())
    }
}

/// One projection's neighbourhoods at k: its kNN list and the ranks of each space's neighbours
/// in the other space (1-based, ties by index, self excluded), n×k row-major.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Neighbourhoods {
    /// Neighbours per point.
    pub k: usize,
    /// `knn_low[i*k + s]`: the s-th nearest neighbour of i in the projection.
    pub knn_low: Vec<u32>,
    /// `rank_low_of_high[i*k + s]`: the projection rank r^Y(i, j) of i's s-th original
    /// neighbour j; above k, j is a *missing* neighbour.
    pub rank_low_of_high: Vec<u32>,
    /// `rank_high_of_low[i*k + s]`: the original rank r^X(i, j) of i's s-th projection
    /// neighbour j; above k, j is a *false* neighbour.
    pub rank_high_of_low: Vec<u32>,
}

impl Neighbourhoods {
    /// Point i's projection neighbours.
    pub fn low(&self, i: usize) -> &[u32] {
        &self.knn_low[i * self.k..(i + 1) * self.k]
    }
    /// The projection ranks of point i's original neighbours.
    pub fn rank_low_of_high(&self, i: usize) -> &[u32] {
        &self.rank_low_of_high[i * self.k..(i + 1) * self.k]
    }
    /// The original ranks of point i's projection neighbours.
    pub fn rank_high_of_low(&self, i: usize) -> &[u32] {
        &self.rank_high_of_low[i * self.k..(i + 1) * self.k]
    }
}

/// The co-ranking matrix in log bins of K, and R_NX(K) for every K from the same pass.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CoRankingMatrix {
    /// Bin t holds the ranks `edges[t] .. edges[t + 1]` (`edges[0] = 1`, the last is n).
    pub edges: Vec<u32>,
    /// `counts[a * B + b]` (B = `edges.len() − 1`): the ordered pairs (i, j), i ≠ j, whose
    /// original rank ρ_ij is in bin a and projection rank r_ij in bin b; they sum to n(n − 1).
    pub counts: Vec<u64>,
    /// R_NX(K) for K = 1 ..= n − 2 (index K − 1), as the `coranking` measure computes it.
    pub rnx: Vec<f64>,
    /// The area under R_NX on a log-K axis (`coranking`'s `auc_rnx` with k_max = n − 2).
    pub auc_rnx: f64,
}

impl CoRankingMatrix {
    /// Bins per axis.
    pub fn bins(&self) -> usize {
        self.edges.len() - 1
    }
}

/// The views of one projection.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProjectionViews {
    /// The projection's name.
    pub name: String,
    /// Its neighbourhoods at k, when asked for.
    pub neighbourhoods: Option<Neighbourhoods>,
    /// Its binned Shepard diagram, when asked for.
    pub shepard: Option<ShepardHistogram>,
    /// Its co-ranking matrix, when asked for.
    pub coranking: Option<CoRankingMatrix>,
    /// The request's optional specs undefined on this projection (left out of its scores).
    pub left_out: Vec<LeftOut>,
}

/// What [`Evaluator::views`] returns: the scores of the specs and the views' data. As JSON
/// (`faithful views --json`): `faithful measure --json`'s object with `k`, `knn_high` (n×k
/// row-major) and, in each projection, `views` (`neighbourhoods`, `shepard`, `coranking`) and,
/// when an optional spec is undefined on it, `left_out` (`[{"id", "reason"}]`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Views {
    /// The scores of the specs, with the run report.
    pub evaluation: Evaluation,
    /// Neighbours per point of the lists (0: none were asked for).
    pub k: usize,
    /// The original space's k nearest neighbours, n×k row-major, when k > 0.
    pub knn_high: Option<Vec<u32>>,
    /// Per projection, in order.
    pub projections: Vec<ProjectionViews>,
}

impl Serialize for Views {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        struct Projection<'a>(&'a crate::ProjectionScores, &'a ProjectionViews);
        impl Serialize for Projection<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                let v = self.1;
                let mut m = s.serialize_map(Some(3 + usize::from(!v.left_out.is_empty())))?;
                m.serialize_entry("name", &self.0.name)?;
                m.serialize_entry("scores", &self.0.scores)?;
                if !v.left_out.is_empty() {
                    m.serialize_entry("left_out", &v.left_out)?;
                }
                let mut views = serde_json::Map::new();
                let mut put = |key: &str, value: serde_json::Result<serde_json::Value>| {
                    value.map(|v| views.insert(key.into(), v)).map_err(serde::ser::Error::custom)
                };
                if let Some(nb) = &v.neighbourhoods {
                    put("neighbourhoods", serde_json::to_value(nb))?;
                }
                if let Some(sh) = &v.shepard {
                    put("shepard", serde_json::to_value(sh))?;
                }
                if let Some(c) = &v.coranking {
                    put("coranking", serde_json::to_value(c))?;
                }
                m.serialize_entry("views", &views)?;
                m.end()
            }
        }
        let projections: Vec<Projection> =
            self.evaluation.projections.iter().zip(&self.projections).map(|(p, v)| Projection(p, v)).collect();
        let mut st = s.serialize_struct("Views", 4)?;
        st.serialize_field("projections", &projections)?;
        st.serialize_field("k", &self.k)?;
        st.serialize_field("knn_high", &self.knn_high)?;
        st.serialize_field("run", &self.evaluation.run)?;
        st.end()
    }
}

/// The first `k` of each row of an n×`from` table.
fn first_k(table: &[u32], from: usize, k: usize) -> Vec<u32> {
    if from == k {
        return table.to_vec();
    }
    table.chunks_exact(from).flat_map(|row| row[..k].iter().copied()).collect()
}

impl Evaluator {
    /// Scores `specs` on each projection (as [`Evaluator::measure_many`], always with per-point
    /// values: the views colour by them) and computes the views' data that `request` asks for. The kNN lists and cross ranks come from the same
    /// row pass as the scores (on the evaluator's backend, labelled as the scores are); the
    /// Shepard and co-ranking tallies are exact CPU passes over all pairs.
    ///
    /// ```
    /// use faithful::{Evaluator, Points, ViewsRequest};
    /// let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.])?;
    /// let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.])?;
    /// let eval = Evaluator::builder(high).build();
    /// let specs = ["tnc:k=2".parse()?];
    /// let views = eval.views(&[&low], None, &specs, &ViewsRequest::new().k(2).shepard_bins(4))?;
    /// let lens = views.projections[0].neighbourhoods.as_ref().unwrap();
    /// assert_eq!(lens.low(0), [1, 2]);
    /// assert_eq!(views.projections[0].shepard.as_ref().unwrap().pairs, 15);
    /// assert_eq!(views.projections[0].coranking.as_ref().unwrap().counts.iter().sum::<u64>(), 30);
    /// assert_eq!(views.evaluation.projections[0].scores[0].value("trustworthiness"), Some(1.0));
    /// # Ok::<(), faithful::Error>(())
    /// ```
    #[cfg(not(target_arch = "wasm32"))]
    pub fn views(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
        request: &ViewsRequest,
    ) -> Result<Views> {
        self.on_threads(|| pollster::block_on(self.views_async(lows, labels, specs, request)))
    }

    /// [`Evaluator::views`] for async callers (the browser).
    pub async fn views_async(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
        request: &ViewsRequest,
    ) -> Result<Views> {
        let n = self.high().n();
        if let Some(g) = self.high().knn_graph() {
            // The lens ranks, the Shepard diagram and the co-ranking matrix read every pair.
            return Err(Error::NeedsInput {
                id: "views".into(),
                need: "every original distance and rank: give the coordinates or the distance matrix".into(),
                given: format!("a kNN graph ({} neighbours per point)", g.k()),
            });
        }
        // The specs (and optional specs) are validated by the pass, also before any work.
        request.check(n, self.budgets().memory_bytes(), lows.len())?;
        let k = request.k;
        let extra = if k > 0 { Needs::cross(k) } else { Needs::default() };
        let numerics = self.options().numerics;
        let (evaluation, mut kept) =
            self.run_keeping(lows, labels, specs, &request.optional, numerics, extra, true).await?;
        let knn_high = match (k, &kept.knn_high) {
            (0, _) => None,
            (_, Some(list)) => Some(first_k(&list.idx, list.k, k)),
            (_, None) => unreachable!("the pass builds the original space's kNN when k > 0"),
        };
        let block_rows = self.options().block_rows;
        let ctl = &kept.ctl;
        let mut projections = Vec::with_capacity(lows.len());
        for ((low, res), left_out) in lows.iter().zip(&kept.lows).zip(std::mem::take(&mut kept.left_out)) {
            let neighbourhoods = (k > 0).then(|| {
                let knn: &Neighbours = res.knn.as_ref().expect("the pass builds the projection's kNN");
                let cross = res.cross.as_ref().expect("the pass builds the cross ranks");
                Neighbourhoods {
                    k,
                    knn_low: first_k(&knn.idx, knn.k, k),
                    rank_low_of_high: first_k(&cross.rank_low_of_high, cross.k, k),
                    rank_high_of_low: first_k(&cross.rank_high_of_low, cross.k, k),
                }
            });
            let shepard = match request.shepard_bins {
                0 => None,
                bins => {
                    let extents = pair_extents(self.high(), low, self.pairwise_cache(), block_rows, ctl)?;
                    Some(shepard_pass(self.high(), low, bins, extents, block_rows, ctl)?)
                }
            };
            let coranking = match request.coranking_per_octave {
                0 => None,
                per_octave => {
                    let bins = RankBins::new(n, per_octave);
                    let (counts, matrix) = counts_rows_binned(self.high(), low, n - 2, block_rows, ctl, &bins)?;
                    let rnx = curves(&counts).into_iter().find(|(key, _)| *key == "rnx").expect("R_NX").1;
                    let auc_rnx = log_auc(n - 2, |k| rnx[k - 1]);
                    Some(CoRankingMatrix { edges: bins.edges.clone(), counts: matrix, rnx, auc_rnx })
                }
            };
            projections.push(ProjectionViews { name: low.name().into(), neighbourhoods, shepard, coranking, left_out });
        }
        Ok(Views { evaluation, k, knn_high, projections })
    }
}
