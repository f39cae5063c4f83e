//! **faithful** measures how faithfully a projection (t-SNE, UMAP, PCA, ...) keeps the
//! structure of high-dimensional data, with ZADU 0.5.4's measures, ids, parameters and
//! output keys, and exact results: neighbours and ranks are those of the f64 reference
//! of `docs/exactness.md`, bit for bit, tie-heavy data included.
//!
//! ```
//! use faithful::{Evaluator, Points, Spec};
//! let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.])?;
//! let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.])?;
//! let specs: Vec<Spec> = vec!["tnc:k=2".parse()?, "stress".parse()?];
//! let eval = Evaluator::builder(high).build();
//! let scores = eval.measure(&low, None, &specs)?;
//! assert_eq!(scores[0].value("trustworthiness"), Some(1.0));
//! assert!(scores[1].value("stress").is_some_and(|s| s > 0.0));
//! # Ok::<(), faithful::Error>(())
//! ```
//!
//! The entry points: [`Evaluator`] (built with [`Evaluator::builder`]) scores projections
//! ([`Points`], read from files with [`read_points`]) against one original space with the
//! measures of [`Spec`]s ([`measures`] lists them), returning [`Score`]s and a [`RunReport`];
//! [`Evaluator::knn`] returns the exact kNN graph ([`Neighbours`]); [`Evaluator::views`] the
//! exact data of the distortion views ([`Views`]: kNN lists and cross ranks, the binned Shepard
//! diagram, the co-ranking matrix); [`Cancel`] and
//! [`Progress`] stop and follow long runs; `gpu_adapters` lists the GPU adapters (with the
//! `gpu` feature) and `EvaluatorBuilder::gpu_adapter` evaluates on one. Cargo features: `gpu` (the wgpu backend), `cli`
//! (the `faithful` command line), `example-data` (the bundled digits, `example_digits`);
//! all on by default.

// The curated API is the `pub use` list below. The modules are private, or `#[doc(hidden)]`
// where the command line, the wasm API, the tests and the benches reach into internals (they
// are not part of the API and may change in any release).
#[doc(hidden)]
pub mod backend;
#[doc(hidden)]
#[cfg(feature = "gpu")]
pub mod bench;
mod catalog;
#[doc(hidden)]
pub mod certify;
mod control;
#[doc(hidden)]
pub mod data;
mod error;
#[doc(hidden)]
pub mod evaluate;
#[doc(hidden)]
#[cfg(feature = "example-data")]
pub mod example;
#[doc(hidden)]
#[cfg(feature = "gpu")]
pub mod gpu;
#[cfg(feature = "report")]
mod html_report;
#[doc(hidden)]
pub mod measures;
mod memory_limit;
#[doc(hidden)]
pub mod quote;
#[doc(hidden)]
pub mod reference;
mod report;
#[doc(hidden)]
pub mod resources;
pub mod shard;
mod space;
mod spec;
#[doc(hidden)]
pub mod splitmix;
#[doc(hidden)]
pub mod sum;
mod views;
#[doc(hidden)]
#[cfg(all(target_arch = "wasm32", feature = "gpu", feature = "example-data"))]
pub mod wasm;
#[cfg(all(target_arch = "wasm32", feature = "gpu", feature = "example-data"))]
mod wasm_bench;

pub use backend::{BackendChoice, Numerics};
pub use catalog::{MeasureInfo, ParamInfo, measures, measures_json};
pub use control::{Cancel, Progress, ProgressFn};
// For the Python bindings' ZADU resource provider, which drives hidden passes directly.
#[doc(hidden)]
pub use control::Control;
#[cfg(not(target_arch = "wasm32"))]
pub use data::read_distances;
#[cfg(all(feature = "npz", not(target_arch = "wasm32")))]
pub use data::read_knn_npz;
pub use data::{
    DistanceMatrix, GraphReport, KnnGraph, Labels, Metric, NpyElement, Points, read_knn_arrays, read_labels,
    read_points, write_npy,
};
pub use error::{Error, FileProblem, GpuError, OutputKeyProblem, Result};
pub use evaluate::{Evaluator, EvaluatorBuilder, MAX_THREADS, Options};
#[cfg(feature = "example-data")]
pub use example::{Example, digits as example_digits};
#[cfg(feature = "gpu")]
pub use gpu::AdapterInfo;
#[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
pub use gpu::gpu_adapters;
#[cfg(feature = "report")]
pub use html_report::{HtmlReport, ReportOptions};
pub use measures::LocalKind;
pub use report::{Evaluation, LeftOut, ProjectionScores, RunReport, Score};
pub use resources::ShepardHistogram;
pub use resources::{LowIndex, Neighbours, ResidentRanks};
pub use shard::{Partial, fold};
pub use space::{HighSpaceReport, LowSpaceReport, SpacesReport};
pub use spec::{ParamValue, Spec};
pub use views::{CoRankingMatrix, Neighbourhoods, ProjectionViews, Views, ViewsRequest};
