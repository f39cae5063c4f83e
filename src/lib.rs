//! **faithful** measures how faithfully a projection (t-SNE, UMAP, PCA, ...) keeps the
//! structure of high-dimensional data, with ZADU 0.5.4's measures, ids, parameters and
//! output keys, and exact results: neighbours and ranks are those of the f64 reference
//! of `docs/exactness.md`, bit for bit, tie-heavy data included.
//!
//! ```
//! use faithful::{Evaluator, Options, Points, Spec};
//! let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.]).unwrap();
//! let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.]).unwrap();
//! let specs = vec!["tnc:k=2".parse::<Spec>().unwrap()];
//! let eval = Evaluator::new(high, Options::default());
//! let scores = eval.measure(&low, None, &specs).unwrap();
//! assert_eq!(scores[0].values[0].0, "trustworthiness");
//! ```

pub mod backend;
pub mod bench;
pub mod control;
pub mod data;
pub mod error;
pub mod evaluate;
pub mod example;
pub mod gpu;
pub mod measures;
pub mod quote;
pub mod reference;
pub mod report;
pub mod resources;
pub mod spec;
pub mod splitmix;
pub mod sum;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
#[cfg(target_arch = "wasm32")]
mod wasm_bench;

pub use backend::{BackendChoice, Numerics};
pub use control::{Cancel, Progress, ProgressFn};
pub use data::{Labels, Points};
pub use error::{Error, FileProblem, Result};
pub use evaluate::{Evaluator, Options};
pub use report::{Evaluation, ProjectionScores, RunReport, Score};
pub use spec::{ParamValue, Spec};
