//! `_native.Evaluator` (one original space, its kNN cached across calls) and
//! `_native.Evaluation` (the results, serialised by faithful's own serializer).

use std::sync::{Arc, Mutex};

use faithful::{BackendChoice, Cancel, Labels, Metric, Numerics, Options, ParamValue, Points, Score, Spec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::arrays::{self, matrix};
use crate::errors::to_py;
use crate::interrupt::run_detached;
use crate::specs::specs;

/// The evaluator and the flag that cancels its runs. A cancelled flag cannot be cleared, so a
/// Ctrl-C replaces both (the cached kNN is lost, the results of later calls are not).
struct Live {
    eval: Arc<faithful::Evaluator>,
    cancel: Cancel,
}

#[pyclass(module = "faithful_dr._native", frozen)]
pub struct Evaluator {
    live: Mutex<Live>,
    opts: Options,
    labels: Option<Labels>,
}

fn backend(name: &str) -> PyResult<BackendChoice> {
    match name {
        "auto" => Ok(BackendChoice::Auto),
        "cpu" => Ok(BackendChoice::Cpu),
        "gpu" => Ok(BackendChoice::Gpu),
        other => Err(PyValueError::new_err(format!("invalid option: backend '{other}' (accepted: auto, cpu, gpu)"))),
    }
}

fn numerics(name: &str) -> PyResult<Numerics> {
    match name {
        "exact" => Ok(Numerics::Exact),
        "fast" => Ok(Numerics::Fast),
        other => Err(PyValueError::new_err(format!("invalid option: numerics '{other}' (accepted: exact, fast)"))),
    }
}

/// `opts` with `cancel` as its cancel flag.
fn with_cancel(opts: &Options, cancel: &Cancel) -> Options {
    let mut o = opts.clone();
    o.cancel = Some(cancel.clone());
    o
}

impl Evaluator {
    /// A call's numerics: `name`, or the evaluator's when `None`.
    fn numerics(&self, name: Option<&str>) -> PyResult<Numerics> {
        name.map_or(Ok(self.opts.numerics), numerics)
    }

    /// The live evaluator and its flag; a cancelled one is replaced first.
    fn live(&self) -> (Arc<faithful::Evaluator>, Cancel) {
        let mut live = self.live.lock().expect("evaluator lock");
        if live.cancel.is_requested() {
            let cancel = Cancel::new();
            let opts = with_cancel(&self.opts, &cancel);
            *live = Live { eval: Arc::new(faithful::Evaluator::new(live.eval.high().clone(), opts)), cancel };
        }
        (live.eval.clone(), live.cancel.clone())
    }

    /// What a call of `measure_many`, `views` or `report` is given: its specs, its named
    /// projections and its own labels, read before the evaluator is taken.
    fn call(
        &self,
        py: Python<'_>,
        lows: &[(String, Bound<'_, PyAny>)],
        spec_list: &Bound<'_, PyAny>,
        labels: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Call> {
        let specs = specs(spec_list)?;
        let lows = lows.iter().map(|(name, low)| arrays::points(py, name, low)).collect::<PyResult<Vec<Points>>>()?;
        let labels = labels.map(arrays::labels).transpose()?;
        Ok(Call { specs, lows, labels })
    }

    /// A call's labels, else the evaluator's.
    fn labels<'a>(&'a self, call: &'a Call) -> Option<&'a Labels> {
        call.labels.as_ref().or(self.labels.as_ref())
    }
}

/// A call's specs, projections and labels ([`Evaluator::call`]).
struct Call {
    specs: Vec<Spec>,
    lows: Vec<Points>,
    labels: Option<Labels>,
}

impl Call {
    fn lows(&self) -> Vec<&Points> {
        self.lows.iter().collect()
    }
}

#[pymethods]
impl Evaluator {
    /// `high`: n×D float64/float32, named `high_name` in messages; the keyword API and defaults
    /// are faithful_dr.Evaluator's.
    ///
    /// `metric`: scipy's metric names (default euclidean), or "precomputed" for an n×n distance
    /// matrix `high`; `graph`: `(n, indptr, indices, data)` of a CSR kNN graph, which is then
    /// the original space (`high` is ignored).
    #[new]
    #[allow(clippy::too_many_arguments)] // the Python constructor's options, one argument each
    #[pyo3(signature = (high, high_name, labels, backend_name, numerics_name, local, threads, memory_budget, metric=None, graph=None))]
    fn new(
        py: Python<'_>,
        high: &Bound<'_, PyAny>,
        high_name: &str,
        labels: Option<&Bound<'_, PyAny>>,
        backend_name: &str,
        numerics_name: &str,
        local: bool,
        threads: Option<usize>,
        memory_budget: Option<u64>,
        metric: Option<&str>,
        graph: Option<CsrArrays<'_>>,
    ) -> PyResult<Self> {
        // Options is #[non_exhaustive]: set field by field.
        let mut opts = Options::default();
        opts.backend = backend(backend_name)?;
        opts.numerics = numerics(numerics_name)?;
        opts.local = local;
        opts.threads = threads;
        opts.memory_budget = memory_budget;
        let metric = metric.map(|m| m.parse::<Metric>()).transpose().map_err(to_py)?;
        let high = match graph {
            Some((n, indptr, indices, data)) => arrays::csr_graph(py, high_name, n, &indptr, &indices, &data)?,
            None if metric == Some(Metric::Precomputed) => arrays::distances(py, high_name, high)?,
            None => {
                opts.metric = metric;
                arrays::points(py, high_name, high)?
            }
        };
        let labels = labels.map(arrays::labels).transpose()?;
        if let Some(l) = &labels {
            l.check_len(high.n()).map_err(to_py)?;
        }
        let cancel = Cancel::new();
        let eval = faithful::Evaluator::new(high, with_cancel(&opts, &cancel));
        Ok(Evaluator { live: Mutex::new(Live { eval: Arc::new(eval), cancel }), opts, labels })
    }

    /// Number of points of the original space.
    #[getter]
    fn n(&self) -> usize {
        self.live.lock().expect("evaluator lock").eval.high().n()
    }

    /// Evaluates `specs` on each `(name, low)` projection; `labels` overrides the evaluator's,
    /// `numerics_name` the evaluator's numerics for this call.
    #[pyo3(signature = (lows, spec_list, labels=None, numerics_name=None))]
    fn measure_many(
        &self,
        py: Python<'_>,
        lows: Vec<(String, Bound<'_, PyAny>)>,
        spec_list: &Bound<'_, PyAny>,
        labels: Option<&Bound<'_, PyAny>>,
        numerics_name: Option<&str>,
    ) -> PyResult<Evaluation> {
        let numerics = self.numerics(numerics_name)?;
        let call = self.call(py, &lows, spec_list, labels)?;
        let (specs, labels, lows) = (&call.specs, self.labels(&call), call.lows());
        let (eval, cancel) = self.live();
        let result = run_detached(py, &cancel, || eval.measure_many_as(numerics, &lows, labels, specs))?;
        Ok(Evaluation { inner: result.map_err(to_py)? })
    }

    /// One row block's shard of `specs` on the projection `low` (named `low_name`): the
    /// partial's JSON (faithful::Partial), for `fold`. `rows` must be a block of `shard_plan`.
    #[pyo3(signature = (low_name, low, rows, spec_list, labels=None))]
    fn map_rows(
        &self,
        py: Python<'_>,
        low_name: &str,
        low: &Bound<'_, PyAny>,
        rows: (usize, usize),
        spec_list: &Bound<'_, PyAny>,
        labels: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let specs = specs(spec_list)?;
        let low = arrays::points(py, low_name, low)?;
        let call_labels = labels.map(arrays::labels).transpose()?;
        let labels = call_labels.as_ref().or(self.labels.as_ref());
        let (eval, cancel) = self.live();
        let result = run_detached(py, &cancel, || eval.map_rows(&low, labels, rows.0..rows.1, &specs))?;
        Ok(result.map_err(to_py)?.to_json())
    }

    /// The k nearest neighbours of every point of the original space (ties by index, self
    /// excluded): (indices int64 n×k, distances float64 n×k, the run report as JSON, whose
    /// `numerics` says whether they are the exact lists or the GPU's Fast f32 order).
    #[pyo3(signature = (k, numerics_name=None))]
    fn knn<'py>(&self, py: Python<'py>, k: usize, numerics_name: Option<&str>) -> PyResult<KnnArrays<'py>> {
        let numerics = self.numerics(numerics_name)?;
        let (eval, cancel) = self.live();
        let (nb, run) = run_detached(py, &cancel, || eval.knn_as(numerics, k))?.map_err(to_py)?;
        let n = eval.high().n();
        let idx = (0..n).flat_map(|i| nb.row(i, k).iter().map(|&j| i64::from(j))).collect();
        let dist = (0..n).flat_map(|i| nb.dist_row(i, k).iter().copied()).collect();
        let run = serde_json::to_string(&run).expect("the run report serialises");
        Ok((matrix(py, n, k, idx), matrix(py, n, k, dist), run))
    }

    /// The distortion views' data with the scores of `specs` (per-point values on): `(Evaluation,
    /// k, knn_high int64 n×k or None, [projection dict])`; a projection dict has name,
    /// knn_low / rank_low_of_high / rank_high_of_low (int64 n×k, or None), shepard (dict with
    /// bins, max_high, max_low, pairs, counts uint64 bins×bins, or None) and coranking (dict with
    /// edges, counts uint64 B×B, rnx, auc_rnx, or None), and the CLI's `views --json` text.
    #[pyo3(signature = (lows, spec_list, k, shepard_bins, coranking_per_octave, labels=None, numerics_name=None, optional=None))]
    #[allow(clippy::too_many_arguments)]
    fn views<'py>(
        &self,
        py: Python<'py>,
        lows: Vec<(String, Bound<'py, PyAny>)>,
        spec_list: &Bound<'py, PyAny>,
        k: usize,
        shepard_bins: usize,
        coranking_per_octave: usize,
        labels: Option<&Bound<'py, PyAny>>,
        numerics_name: Option<&str>,
        optional: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<ViewsOut<'py>> {
        let numerics = self.numerics(numerics_name)?;
        let call = self.call(py, &lows, spec_list, labels)?;
        let (specs, labels, lows) = (&call.specs, self.labels(&call), call.lows());
        let (eval, cancel) = self.live();
        let optional = optional.map(crate::specs::specs).transpose()?.unwrap_or_default();
        let request = faithful::ViewsRequest::new()
            .k(k)
            .shepard_bins(shepard_bins)
            .coranking_per_octave(coranking_per_octave)
            .optional(optional);
        let eval = if numerics == eval.options().numerics {
            eval
        } else {
            // A call's numerics: an evaluator of its own for this call (the views are one call).
            let mut opts = with_cancel(&self.opts, &cancel);
            opts.numerics = numerics;
            Arc::new(faithful::Evaluator::new(eval.high().clone(), opts))
        };
        let v = run_detached(py, &cancel, || eval.views(&lows, labels, specs, &request))?.map_err(to_py)?;
        let n = eval.high().n();
        let ints = |v: &[u32]| matrix(py, n, k, v.iter().map(|&x| i64::from(x)).collect());
        let knn_high = v.knn_high.as_deref().map(ints);
        let json = serde_json::to_string(&v).expect("views serialise");
        let mut out = Vec::with_capacity(v.projections.len());
        for p in &v.projections {
            let d = PyDict::new(py);
            d.set_item("name", &p.name)?;
            let nb = p.neighbourhoods.as_ref();
            d.set_item("knn_low", nb.map(|nb| ints(&nb.knn_low)))?;
            d.set_item("rank_low_of_high", nb.map(|nb| ints(&nb.rank_low_of_high)))?;
            d.set_item("rank_high_of_low", nb.map(|nb| ints(&nb.rank_high_of_low)))?;
            match &p.shepard {
                Some(s) => {
                    let x = PyDict::new(py);
                    x.set_item("bins", s.bins)?;
                    x.set_item("max_high", s.max_high)?;
                    x.set_item("max_low", s.max_low)?;
                    x.set_item("pairs", s.pairs)?;
                    x.set_item("counts", matrix(py, s.bins, s.bins, s.counts.clone()))?;
                    d.set_item("shepard", x)?;
                }
                None => d.set_item("shepard", py.None())?,
            }
            match &p.coranking {
                Some(c) => {
                    let x = PyDict::new(py);
                    let b = c.bins();
                    x.set_item("edges", numpy::PyArray1::from_slice(py, &c.edges))?;
                    x.set_item("counts", matrix(py, b, b, c.counts.clone()))?;
                    x.set_item("rnx", numpy::PyArray1::from_slice(py, &c.rnx))?;
                    x.set_item("auc_rnx", c.auc_rnx)?;
                    d.set_item("coranking", x)?;
                }
                None => d.set_item("coranking", py.None())?,
            }
            let left_out: Vec<(String, String)> = p.left_out.iter().map(|l| (l.id.clone(), l.reason.clone())).collect();
            d.set_item("left_out", PyTuple::new(py, left_out)?)?;
            out.push(d);
        }
        Ok((Evaluation { inner: v.evaluation }, v.k, knn_high, out, json))
    }

    /// One self-contained HTML report (faithful::Evaluator::html_report, as `faithful report`
    /// writes it): `(html, [what was left out])`.
    #[pyo3(signature = (lows, spec_list, k, shepard_bins, coranking_per_octave, all_pairs_max_n, max_bytes, title=None, labels=None))]
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        py: Python<'_>,
        lows: Vec<(String, Bound<'_, PyAny>)>,
        spec_list: &Bound<'_, PyAny>,
        k: usize,
        shepard_bins: usize,
        coranking_per_octave: usize,
        all_pairs_max_n: usize,
        max_bytes: u64,
        title: Option<String>,
        labels: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(String, Vec<String>)> {
        let call = self.call(py, &lows, spec_list, labels)?;
        let (specs, labels, lows) = (&call.specs, self.labels(&call), call.lows());
        let (eval, cancel) = self.live();
        let mut opts = faithful::ReportOptions::new()
            .k(k)
            .shepard_bins(shepard_bins)
            .coranking_per_octave(coranking_per_octave)
            .all_pairs_max_n(all_pairs_max_n)
            .max_bytes(max_bytes);
        if let Some(t) = title {
            opts = opts.title(t);
        }
        let r = run_detached(py, &cancel, || eval.html_report(&lows, labels, specs, &opts))?.map_err(to_py)?;
        Ok((r.html, r.left_out))
    }
}

/// A CSR kNN graph from Python: n, indptr, indices, data.
type CsrArrays<'py> = (usize, Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// What `Evaluator.views` returns to Python: the scores, k, the original space's kNN list, the
/// projections' views and the CLI's JSON text.
type ViewsOut<'py> = (Evaluation, usize, Option<Bound<'py, numpy::PyArray2<i64>>>, Vec<Bound<'py, PyDict>>, String);

/// kNN indices, distances and the run report (JSON).
type KnnArrays<'py> = (Bound<'py, numpy::PyArray2<i64>>, Bound<'py, numpy::PyArray2<f64>>, String);

/// The result of one measure / measure_many call.
#[pyclass(module = "faithful_dr._native", frozen)]
pub struct Evaluation {
    pub(crate) inner: faithful::Evaluation,
}

fn param<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ParamValue::Int(i) => i.into_pyobject(py)?.into_any(),
        ParamValue::Float(x) => x.into_pyobject(py)?.into_any(),
        ParamValue::Str(s) => s.into_pyobject(py)?.into_any(),
    })
}

fn score<'py>(py: Python<'py>, s: &Score) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", &s.id)?;
    let params = PyDict::new(py);
    for (k, v) in &s.params {
        params.set_item(k, param(py, v)?)?;
    }
    d.set_item("params", params)?;
    let values = PyDict::new(py);
    for (k, v) in &s.values {
        values.set_item(k, v)?;
    }
    d.set_item("values", values)?;
    match &s.local {
        Some(local) => {
            let l = PyDict::new(py);
            for (k, v) in local {
                l.set_item(k, numpy::PyArray1::from_slice(py, v))?;
            }
            d.set_item("local", l)?;
        }
        None => d.set_item("local", py.None())?,
    }
    // What each local output's values mean: local key → "mean", "sum", "partial_mean", ...
    let kinds = PyDict::new(py);
    for (k, kind) in &s.local_kinds {
        kinds.set_item(k, kind.name())?;
    }
    d.set_item("local_kinds", kinds)?;
    // Curves over K (coranking): one array per curve, index K − 1.
    let curves = PyDict::new(py);
    for (k, v) in &s.curves {
        curves.set_item(k, numpy::PyArray1::from_slice(py, v))?;
    }
    d.set_item("curves", curves)?;
    Ok(d)
}

#[pymethods]
impl Evaluation {
    /// The CLI's `faithful measure --json` output for the same run, without the final newline.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("results serialise")
    }

    /// The run report (backend, plan, work, timings) as JSON.
    fn run_json(&self) -> String {
        serde_json::to_string(&self.inner.run).expect("the run report serialises")
    }

    /// `[(name, [score dict, ...]), ...]`; a score dict has id, params, values, local
    /// (NumPy arrays, or None), local_kinds and curves.
    fn projections<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Vec<Bound<'py, PyDict>>)>> {
        self.inner
            .projections
            .iter()
            .map(|p| Ok((p.name.clone(), p.scores.iter().map(|s| score(py, s)).collect::<PyResult<Vec<_>>>()?)))
            .collect()
    }
}
