//! The resources of ZADU 0.5.4's planner that faithful builds for the ZADU backend provider
//! (python/faithful_dr/zadu_backend.py): cross-space ranks, pair statistics, ordered-pair
//! statistics, densities, condensed pair distances, the pair order, Topographic Product
//! statistics and neighbour statistics (LCMC, neighbour dissimilarity). Each function drives
//! one of faithful's own passes (its exact distances, kNN selection, rank counting, pair sums,
//! pair order and densities) and returns plain arrays and numbers; the provider shapes them
//! into ZADU's resource types. Every function releases the GIL and stops on Ctrl-C where
//! faithful checks its cancel flag.

use faithful::measures::{Ctx, Output, Resolved};
use faithful::resources::{
    Budgets, CrossRanks, Extents, Needs, PairwiseCache, PassOutput, build_pairwise, densities as density_pass,
    plan_order, radix_sort, row_pass,
};
use faithful::{Cancel, Control, Neighbours, Options, OutputKeyProblem, Points, Spec};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::arrays::{matrix, points};
use crate::errors::to_py;
use crate::interrupt::run_detached;

/// Rows per task of the row pass (faithful's default; results do not depend on it).
fn block_rows() -> usize {
    Options::default().block_rows
}

/// A control whose flag Ctrl-C sets (see [`run_detached`]).
fn control() -> (Control, Cancel) {
    let cancel = Cancel::new();
    (Control { progress: None, cancel: Some(cancel.clone()) }, cancel)
}

/// [`run_detached`] for work that checks no cancel flag: Ctrl-C still raises at once.
fn detached<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    run_detached(py, &control().1, work)
}

/// The original space `orig` and the projection `emb`.
fn spaces(py: Python<'_>, orig: &Bound<'_, PyAny>, emb: &Bound<'_, PyAny>) -> PyResult<(Points, Points)> {
    Ok((points(py, "orig", orig)?, points(py, "emb", emb)?))
}

/// `mask[i*k + s]`: whether `a[i*ka + s]` is among `b[i*kb .. i*kb + k]`, for s < k.
fn membership(a: &[u32], ka: usize, b: &[u32], kb: usize, k: usize) -> Vec<bool> {
    let n = a.len().checked_div(ka).unwrap_or(0);
    (0..n).flat_map(|i| (0..k).map(move |s| b[i * kb..i * kb + k].contains(&a[i * ka + s]))).collect()
}

fn widen(v: &[u32]) -> Vec<i64> {
    v.iter().map(|&x| i64::from(x)).collect()
}

/// Both point sets and faithful's row pass over them for `needs`: kNN lists of its k in each
/// space and the ranks of each space's neighbours in the other (with their distances when
/// `needs.cross_dists`).
fn cross_pass(
    py: Python<'_>,
    orig: &Bound<'_, PyAny>,
    emb: &Bound<'_, PyAny>,
    needs: Needs,
) -> PyResult<(Points, Points, PassOutput)> {
    let (high, low) = spaces(py, orig, emb)?;
    let pass = detached(py, || row_pass(&high, None, &[&low], needs, block_rows()))?;
    Ok((high, low, pass))
}

/// ZADU's rank comparisons for `k` neighbours: a dict with `orig_indices`, `emb_indices`
/// (n×k, stable kNN), `orig_ranks_of_emb`, `emb_ranks_of_orig` (n×k, 1-based ranks in the
/// other space, self excluded, ties by index) and, per k of `membership_ks`, the masks
/// `emb_in_orig[k]` / `orig_in_emb[k]` (n×k bool).
#[pyfunction]
pub fn rank_comparisons<'py>(
    py: Python<'py>,
    orig: &Bound<'py, PyAny>,
    emb: &Bound<'py, PyAny>,
    k: usize,
    membership_ks: Vec<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let (high, _, pass) = cross_pass(py, orig, emb, Needs::cross(k))?;
    let n = high.n();
    let hx = pass.high.expect("the pass builds the original kNN");
    let proj = pass.lows.into_iter().next().expect("one projection");
    let ly = proj.knn.expect("the pass builds the projection's kNN");
    let cross = proj.cross.expect("the pass builds the cross ranks");
    let out = PyDict::new(py);
    out.set_item("orig_indices", matrix(py, n, k, widen(&hx.idx)))?;
    out.set_item("emb_indices", matrix(py, n, k, widen(&ly.idx)))?;
    out.set_item("orig_ranks_of_emb", matrix(py, n, k, widen(&cross.rank_high_of_low)))?;
    out.set_item("emb_ranks_of_orig", matrix(py, n, k, widen(&cross.rank_low_of_high)))?;
    let (emb_in_orig, orig_in_emb) = (PyDict::new(py), PyDict::new(py));
    for &m in &membership_ks {
        let m = m.min(k);
        emb_in_orig.set_item(m, matrix(py, n, m, membership(&ly.idx, k, &hx.idx, k, m)))?;
        orig_in_emb.set_item(m, matrix(py, n, m, membership(&hx.idx, k, &ly.idx, k, m)))?;
    }
    out.set_item("emb_in_orig", emb_in_orig)?;
    out.set_item("orig_in_emb", orig_in_emb)?;
    Ok(out)
}

/// faithful's all-pairs statistics of (orig, emb): with `sums`, the pair sums (count, means,
/// centred moments, Σ squares and products, the scale-fit residual, `y_scale_exp`); with
/// `ranks` / `isotonic`, Spearman's ρ (None when a space's distances are constant) and the
/// isotonic fit's (Σ (d^Y − d̂)², Σ (d^Y)²); and both spaces' pair-distance extents.
#[pyfunction]
pub fn pair_statistics<'py>(
    py: Python<'py>,
    orig: &Bound<'py, PyAny>,
    emb: &Bound<'py, PyAny>,
    sums: bool,
    ranks: bool,
    isotonic: bool,
    memory_budget: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let (high, low) = spaces(py, orig, emb)?;
    let needs = Needs { pair_sums: sums, pair_ranks: ranks, pair_isotonic: isotonic, ..Default::default() };
    let budgets = Budgets { memory: memory_budget, ..Default::default() };
    let (ctl, cancel) = control();
    let built = run_detached(py, &cancel, || {
        let order = plan_order(high.n(), &needs, &budgets)?;
        let cache = std::sync::Mutex::new(PairwiseCache::default());
        let known = Extents { high: None, lows: vec![None] };
        build_pairwise(&high, &[&low], &needs, order.as_ref(), &budgets, &cache, &known, block_rows(), &ctl)
    })?;
    let (mut pairwise, _) = built.map_err(to_py)?;
    let p = pairwise.pop().expect("one projection");
    let out = PyDict::new(py);
    let extents = p.order.as_ref().map(|o| (o.high, o.low)).or(p.high.zip(p.low));
    if let Some((h, l)) = extents {
        out.set_item("min_orig", h.min)?;
        out.set_item("max_orig", h.max)?;
        out.set_item("min_emb", l.min)?;
        out.set_item("max_emb", l.max)?;
    }
    if let Some(s) = p.sums {
        out.set_item("count", s.count)?;
        out.set_item("mean_orig", s.mean_x)?;
        out.set_item("mean_emb", s.mean_y)?;
        out.set_item("m2_orig", s.m2_x)?;
        out.set_item("m2_emb", s.m2_y)?;
        out.set_item("co_moment", s.co_moment)?;
        out.set_item("sum_orig_squared", s.sum_xx)?;
        out.set_item("sum_emb_squared", s.sum_yy)?;
        out.set_item("sum_product", s.sum_xy)?;
        out.set_item("sum_squared_difference", s.sum_sq_diff)?;
        out.set_item("scale_residual_squared", s.scaled_residual)?;
        out.set_item("y_scale_exp", s.y_scale_exp)?;
    }
    if let Some(o) = &p.order {
        out.set_item("spearman_rho", o.ranks.as_ref().and_then(|r| r.rho()))?;
        out.set_item("isotonic", o.isotonic)?;
    }
    Ok(out)
}

/// ZADU's Gaussian densities of one space, one array per σ of `sigmas`: faithful's density
/// pass (every pair's kernel once), the largest pair distance found by its row pass. `None`
/// when every pair distance is zero (the densities are undefined).
#[pyfunction]
pub fn densities<'py>(
    py: Python<'py>,
    points_: &Bound<'py, PyAny>,
    sigmas: Vec<f64>,
) -> PyResult<Option<Vec<Bound<'py, PyArray1<f64>>>>> {
    let x = points(py, "points", points_)?;
    let (ctl, cancel) = control();
    let built = run_detached(py, &cancel, || {
        // The row pass finds a space's extent when densities are planned (k = 1: a list of one).
        let needs = Needs { knn_high: 1, density_sigmas: sigmas.clone(), ..Default::default() };
        let max = row_pass(&x, None, &[], needs, block_rows()).extents.high.map_or(0.0, |e| e.max);
        if max > 0.0 { density_pass(&x, max, &sigmas, &ctl, "densities").map(Some) } else { Ok(None) }
    })?;
    Ok(built.map_err(to_py)?.map(|v| v.into_iter().map(|d| d.into_pyarray(py)).collect()))
}

/// The condensed pair distances d(i, j), i < j, row by row (scipy's `pdist` layout), with
/// faithful's exact distance rows.
#[pyfunction]
pub fn condensed_distances<'py>(py: Python<'py>, points_: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let x = points(py, "points", points_)?;
    let out = detached(py, || {
        let n = x.n();
        let mut out = vec![0.0; n * n.saturating_sub(1) / 2];
        let mut rows: Vec<(usize, &mut [f64])> = Vec::with_capacity(n);
        let mut rest = &mut out[..];
        for i in 0..n.saturating_sub(1) {
            let (row, tail) = rest.split_at_mut(n - 1 - i);
            rows.push((i, row));
            rest = tail;
        }
        rows.into_par_iter().for_each(|(i, row)| faithful::reference::distance_row_from(&x, i, i + 1, row));
        out
    })?;
    Ok(out.into_pyarray(py))
}

/// ZADU's pair order of condensed distances: (indices, sorted_ranks), the pairs ascending by
/// (distance, index) (faithful's radix sort of (bits(d), index) records) and each one's
/// average 1-based rank (scipy's `rankdata`, ties sharing the mean of their positions). The
/// indices are int32 up to 2³¹ pairs, else int64 (ZADU's `compact_index_dtype`).
#[pyfunction]
pub fn pair_order<'py>(
    py: Python<'py>,
    distances: PyReadonlyArray1<'py, f64>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyArray1<f64>>)> {
    let d = distances.as_slice()?;
    if let Some(bad) = d.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
        return Err(PyValueError::new_err(format!(
            "pair order: distances must be finite and non-negative (found {bad})"
        )));
    }
    let (idx, ranks) = detached(py, || {
        // Non-negative finite f64 bit patterns order like the values.
        let mut v: Vec<u128> =
            d.par_iter().enumerate().map(|(p, x)| (u128::from(x.to_bits()) << 64) | p as u128).collect();
        let mut buf = vec![0u128; v.len()];
        radix_sort(&mut v, &mut buf);
        drop(buf);
        let index = |r: &u128| *r as u64;
        let idx = if v.len() <= 1 << 31 {
            Indices::I32(v.par_iter().map(|r| index(r) as i32).collect())
        } else {
            Indices::I64(v.par_iter().map(|r| index(r) as i64).collect())
        };
        let mut ranks = vec![0.0; v.len()];
        let mut start = 0;
        while start < v.len() {
            let key = v[start] >> 64;
            let end = start + v[start..].iter().take_while(|r| *r >> 64 == key).count();
            // Positions start+1 ..= end share their mean.
            ranks[start..end].fill((start + 1 + end) as f64 / 2.0);
            start = end;
        }
        (idx, ranks)
    })?;
    let idx = match idx {
        Indices::I32(v) => v.into_pyarray(py).into_any(),
        Indices::I64(v) => v.into_pyarray(py).into_any(),
    };
    Ok((idx, ranks.into_pyarray(py)))
}

/// Pair indices in ZADU's compact dtype.
enum Indices {
    I32(Vec<i32>),
    I64(Vec<i64>),
}

/// Registers the functions in `_native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rank_comparisons, m)?)?;
    m.add_function(wrap_pyfunction!(pair_statistics, m)?)?;
    m.add_function(wrap_pyfunction!(densities, m)?)?;
    m.add_function(wrap_pyfunction!(condensed_distances, m)?)?;
    m.add_function(wrap_pyfunction!(pair_order, m)?)?;
    m.add_function(wrap_pyfunction!(topographic_product, m)?)?;
    m.add_function(wrap_pyfunction!(neighbor_statistics, m)?)?;
    Ok(())
}

/// Runs faithful's measure `spec` on resources built here (the registry's own code).
fn run_measure(spec: &str, ctx: &Ctx<'_>) -> faithful::Result<Output> {
    let r = Resolved::new(&spec.parse::<Spec>()?)?;
    r.check_k(ctx.n())?;
    (r.def.compute)(ctx, &r)
}

/// The entry named `key` among a measure's named outputs; a measure that stopped naming it is
/// `Error::MeasureOutput` (a typed error, never a NaN score).
fn named<T>(id: &str, entries: Vec<(String, T)>, key: &str) -> faithful::Result<T> {
    let keys = entries.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ");
    entries.into_iter().find(|(k, _)| k == key).map(|(_, v)| v).ok_or_else(|| faithful::Error::MeasureOutput {
        id: id.to_string(),
        key: key.to_string(),
        problem: OutputKeyProblem::Missing,
        keys,
    })
}

/// The value of `key` in measure `id`'s output (measures name what they return).
fn value_of(id: &str, out: Output, key: &str) -> faithful::Result<f64> {
    named(id, out.values, key)
}

/// The per-point values of `key` in measure `id`'s output.
fn local_of(id: &str, out: Output, key: &str) -> faithful::Result<Vec<f64>> {
    named(id, out.local, key)
}

/// A context over resources built here; ZADU's resources carry the per-point values.
fn ctx<'a>(
    (high, low): (&'a Points, &'a Points),
    (knn_high, knn_low): (Option<&'a Neighbours>, Option<&'a Neighbours>),
    cross: Option<&'a CrossRanks>,
    ctl: &'a Control,
) -> Ctx<'a> {
    Ctx {
        high,
        low,
        labels: None,
        knn_high,
        knn_low,
        cross,
        pairwise: None,
        block_rows: block_rows(),
        local: true,
        ctl,
        coranking: None,
        memory_budget: faithful::resources::default_memory_budget(),
    }
}

/// Measure `id` at each k of `ks`, each output's entry `key` read by `read`.
fn over_ks<T>(
    ctx: &Ctx<'_>,
    id: &str,
    ks: &[usize],
    read: fn(&str, Output, &str) -> faithful::Result<T>,
    key: &str,
) -> faithful::Result<Vec<T>> {
    ks.iter().map(|k| run_measure(&format!("{id}:k={k}"), ctx).and_then(|o| read(id, o, key))).collect()
}

/// A kNN table from ZADU's n×k index array (distances unused by the callers: zero).
fn neighbours(idx: &PyReadonlyArray2<'_, i64>) -> PyResult<Neighbours> {
    let a = idx.as_array();
    let k = a.ncols();
    let idx = a
        .iter()
        .map(|&j| u32::try_from(j).map_err(|_| PyValueError::new_err(format!("kNN index {j} out of range"))))
        .collect::<PyResult<Vec<u32>>>()?;
    let dist = vec![0.0; idx.len()];
    Ok(Neighbours { k, idx, dist })
}

/// Topographic Product scores for each k of `ks` (largest `k`): faithful's `topo` on its row
/// pass (kNN lists and cross-space distances).
#[pyfunction]
pub fn topographic_product<'py>(
    py: Python<'py>,
    orig: &Bound<'py, PyAny>,
    emb: &Bound<'py, PyAny>,
    k: usize,
    ks: Vec<usize>,
) -> PyResult<Vec<f64>> {
    let (high, low, pass) = cross_pass(py, orig, emb, Needs::cross_with_dists(k))?;
    let scores = py.detach(|| {
        let (proj, ctl) = (&pass.lows[0], Control::default());
        let ctx = ctx((&high, &low), (pass.high.as_ref(), proj.knn.as_ref()), proj.cross.as_ref(), &ctl);
        over_ks(&ctx, "topo", &ks, value_of, "topographic_product")
    });
    scores.map_err(to_py)
}

/// LCMC's local values (one array per k) and neighbour dissimilarities (one per k).
type NeighbourStatistics<'py> = (Vec<Bound<'py, PyArray1<f64>>>, Vec<f64>);

/// LCMC's local values per k of `lcmc_ks` and neighbour dissimilarity per k of `nd_ks`, from
/// the two spaces' kNN tables (n×k int64): faithful's `lcmc` and `nd`.
#[pyfunction]
pub fn neighbor_statistics<'py>(
    py: Python<'py>,
    orig_knn: PyReadonlyArray2<'py, i64>,
    emb_knn: PyReadonlyArray2<'py, i64>,
    lcmc_ks: Vec<usize>,
    nd_ks: Vec<usize>,
) -> PyResult<NeighbourStatistics<'py>> {
    let (x, y) = (neighbours(&orig_knn)?, neighbours(&emb_knn)?);
    let n = x.n();
    if y.n() != n || y.k != x.k {
        return Err(PyValueError::new_err("neighbour statistics: the kNN tables differ in shape"));
    }
    let built = detached(py, || {
        // lcmc and nd read only the kNN tables; Ctx wants the point sets for n: one coordinate each.
        let (none, ctl) = (Points::from_vec("unused", n, 1, vec![0.0; n])?, Control::default());
        let ctx = ctx((&none, &none), (Some(&x), Some(&y)), None, &ctl);
        let local = over_ks(&ctx, "lcmc", &lcmc_ks, local_of, "local_lcmc")?;
        let nd = over_ks(&ctx, "nd", &nd_ks, value_of, "neighbor_dissimilarity")?;
        Ok::<_, faithful::Error>((local, nd))
    })?;
    let (local, nd) = built.map_err(to_py)?;
    Ok((local.into_iter().map(|l| l.into_pyarray(py)).collect(), nd))
}
