//! The original space as the user holds it — coordinates under a metric, a distance matrix, or
//! a kNN graph — checked against what each measure needs, before any work; and the run
//! report's account of both spaces.

use crate::data::{GraphReport, Metric, Points};
use crate::error::{Error, Result};
use crate::measures::{HighReads, Resolved, graph_measures};

/// How each space's distances were computed, for the run report.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct SpacesReport {
    /// The original space.
    pub high: HighSpaceReport,
    /// The projections: always Euclidean (they are plots).
    pub low: LowSpaceReport,
}

/// The original space's input and metric.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct HighSpaceReport {
    /// `coordinates`, `distance matrix` or `kNN graph`.
    pub input: &'static str,
    /// `euclidean`, `cosine`, `minkowski:p=3`, ... (`precomputed` for given distances or a graph).
    pub metric: Metric,
    /// What was done to a kNN graph to use it, when the space was given as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphReport>,
}

/// The projections' metric.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct LowSpaceReport {
    /// Always `euclidean`.
    pub metric: Metric,
}

impl SpacesReport {
    /// The report of a run on `high`.
    pub fn of(high: &Points) -> Self {
        SpacesReport {
            high: HighSpaceReport {
                input: high.input(),
                metric: high.metric(),
                graph: high.knn_graph().map(|g| g.report().clone()),
            },
            low: LowSpaceReport { metric: Metric::Euclidean },
        }
    }
}

impl SpacesReport {
    /// The report of a fold, from its partials' words (a metric that does not parse, from a
    /// partial of another version, reads as written: `precomputed` stands for it).
    pub(crate) fn of_partial(input: &str, metric: &str) -> Self {
        let input = if input == "distance matrix" { "distance matrix" } else { "coordinates" };
        SpacesReport {
            high: HighSpaceReport { input, metric: metric.parse().unwrap_or(Metric::Precomputed), graph: None },
            low: LowSpaceReport { metric: Metric::Euclidean },
        }
    }
}

/// `high`'s input, said in the words of an error message.
fn given(high: &Points) -> String {
    match high.knn_graph() {
        Some(g) => format!("a kNN graph ({} neighbours per point)", g.k()),
        None => match high.input() {
            "coordinates" => format!("coordinates under the {} metric", high.metric()),
            other => format!("a {other}"),
        },
    }
}

/// The measures a kNN graph serves, as a refusal names them ([`graph_measures`]).
fn graph_served() -> String {
    let name = |def: &crate::measures::MeasureDef| match def.high {
        HighReads::CoordinatesUnless { param, value } => format!("{} with {param}={value}", def.id),
        // Its curves from the lists' counts (coranking.rs): those the first K neighbours give.
        _ if def.id == "coranking" => "coranking's Q_NX, R_NX and LCMC up to the graph's k".into(),
        _ => def.id.into(),
    };
    graph_measures().map(name).collect::<Vec<_>>().join(", ")
}

/// Checks that the original space serves every measure: coordinate measures need coordinates
/// and the Euclidean metric; a kNN graph serves only the measures that need nothing but each
/// point's first k original neighbours (and at most the graph's k). Projections are Euclidean.
pub(crate) fn check(high: &Points, lows: &[&Points], resolved: &[Resolved]) -> Result<()> {
    for low in lows {
        if low.metric() != Metric::Euclidean || !low.has_coordinates() {
            return Err(Error::BadMetric {
                metric: low.metric().to_string(),
                reason: format!(
                    "{} is a projection: projections are compared by Euclidean distance of their coordinates (only the original space takes a metric)",
                    low.name()
                ),
            });
        }
    }
    for r in resolved {
        let id = r.def.id;
        let needs_input = |need: &str| Error::NeedsInput { id: id.into(), need: need.into(), given: given(high) };
        if r.high_reads() == HighReads::Coordinates && (!high.has_coordinates() || high.metric() != Metric::Euclidean) {
            return Err(needs_input(
                "the original coordinates under the Euclidean metric (it computes centroids, angles, areas or fits of coordinates)",
            ));
        }
        if let Some(g) = high.knn_graph() {
            let needs = r.needs();
            let mut k_needed = needs.knn_high.max(needs.cross_low);
            if id == "coranking" {
                // Q_NX, R_NX and LCMC up to k_max from the lists (0: every K, n − 2).
                k_needed = if r.k == 0 { high.n() - 2 } else { r.k };
            }
            if !r.graph_servable() {
                let what = if needs.cross > 0 {
                    "the original ranks of arbitrary pairs (trustworthiness ranks the projection's neighbours in the original space)"
                } else {
                    "every original distance"
                };
                return Err(needs_input(&format!(
                    "{what}: give --high (coordinates) or --high-distances; a kNN graph serves the measures that need only each point's k original neighbours ({})",
                    graph_served()
                )));
            }
            if k_needed > g.k() {
                let k = if id == "coranking" { "k_max" } else { "k" };
                return Err(needs_input(&format!(
                    "{k_needed} original neighbours per point ({k}={k_needed}); the graph holds {} — lower {k} or give a larger graph",
                    g.k()
                )));
            }
        }
    }
    Ok(())
}
