//! The all-pairs resources of a run, planned and built together: extents, [`PairSums`],
//! densities and [`OrderStats`]. Each is built once per space and projection and shared by
//! every measure that needs it; the original space's extent and densities are cached in the
//! evaluator ([`PairwiseCache`]) and reused for every later projection.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::Needs;
use super::density::densities;
use super::external_sort::{ExternalPlan, external};
use super::pairs::{
    DensityJob, Extent, Layout, OrderPath, OrderStats, PairJob, PairSums, RowSweep, SweepJob, Writer, in_memory,
    in_memory_bytes, order_records, pair_pass, row_sweep, row_sweep_rows,
};
use super::pass::Extents;
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;

/// Memory and temporary-space limits of the pair order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budgets {
    /// Bytes of pair buffers; `None`: half the machine's physical memory.
    pub memory: Option<u64>,
    /// Bytes of temporary files; `None`: unlimited.
    pub temp: Option<u64>,
    /// Where the temporary workspace goes; `None`: the system's temporary directory.
    pub temp_dir: Option<PathBuf>,
}

impl Budgets {
    /// The memory budget in force.
    pub fn memory_bytes(&self) -> u64 {
        self.memory.unwrap_or_else(default_memory_budget)
    }
}

/// The browser's memory budget: a wasm32 module addresses at most 4 GiB, and its input, kNN
/// lists and scratch share them with the pair order.
pub const WASM_MEMORY_BUDGET: u64 = 1 << 30;

/// Half the physical memory (from /proc/meminfo), or 4 GiB where that cannot be read, and at
/// most the headroom the process's limits leave (RLIMIT_AS, RLIMIT_DATA, the cgroup's
/// memory.max: `memory_limit.rs`); in a browser (wasm32), `WASM_MEMORY_BUDGET` (1 GiB).
pub fn default_memory_budget() -> u64 {
    if cfg!(target_arch = "wasm32") {
        return WASM_MEMORY_BUDGET;
    }
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    });
    let half = total_kib.map_or(4 << 30, |k| k * 1024 / 2);
    crate::memory_limit::headroom().map_or(half, |h| half.min(h))
}

/// How the pairs will be sorted, decided before any work starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum OrderPlan {
    /// All pairs in memory: `bytes` of records and sort scratch.
    InMemory { bytes: u64 },
    /// An external merge sort.
    External(ExternalPlan),
}

/// Plans the pair order for n points, or `None` when no measure needs it. Fails with
/// [`crate::Error::PairOrderMemory`], [`crate::Error::PairOrderTemp`] or
/// [`crate::Error::PairOrderBrowser`] when the budgets cannot hold it.
pub fn plan_order(n: usize, needs: &Needs, budgets: &Budgets) -> Result<Option<OrderPlan>> {
    if !needs.pair_order() {
        return Ok(None);
    }
    let pairs = (n as u64) * (n as u64 - 1) / 2;
    let memory = budgets.memory_bytes();
    let bytes = in_memory_bytes(pairs);
    if bytes <= memory {
        return Ok(Some(OrderPlan::InMemory { bytes }));
    }
    if cfg!(target_arch = "wasm32") {
        // A browser has no file system for the external sort's workspace.
        return Err(crate::Error::PairOrderBrowser { n, pairs, needed: bytes, limit: memory });
    }
    ExternalPlan::new(pairs, needs.pair_ranks, needs.pair_isotonic, memory, budgets.temp)
        .map(|p| Some(OrderPlan::External(p)))
}

/// The original space's all-pairs resources, kept across calls of one evaluator.
#[derive(Debug, Default)]
pub struct PairwiseCache {
    high_extent: Option<Extent>,
    high_density: Vec<(u64, Arc<Vec<f64>>)>,
}

impl PairwiseCache {
    /// The original space's extent, when an earlier call found it.
    pub fn high_extent(&self) -> Option<Extent> {
        self.high_extent
    }
    /// Keeps the original space's extent for later calls.
    pub fn keep_high_extent(&mut self, extent: Extent) {
        self.high_extent = Some(extent);
    }
}

/// Densities of both spaces for one σ; `None` for a space whose distances are all zero.
#[derive(Debug, Clone)]
pub struct DensityPair {
    pub sigma: f64,
    pub high: Option<Arc<Vec<f64>>>,
    pub low: Option<Vec<f64>>,
}

/// The all-pairs resources of one projection.
#[derive(Debug, Clone, Default)]
pub struct Pairwise {
    /// Extents of the pair distances, when sums or densities were built.
    pub high: Option<Extent>,
    pub low: Option<Extent>,
    pub sums: Option<PairSums>,
    pub densities: Vec<DensityPair>,
    pub order: Option<OrderStats>,
    /// The full-row sweep's results (Sammon, CCA, average local error, NeRV), when asked for.
    pub sweep: Option<RowSweep>,
}

impl Pairwise {
    /// The densities for `sigma`, when built.
    pub fn density(&self, sigma: f64) -> Option<&DensityPair> {
        self.densities.iter().find(|d| d.sigma.to_bits() == sigma.to_bits())
    }
}

/// What the run report says about the all-pairs resources.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PairwiseReport {
    /// The pair order's plan, when sorted.
    pub order: Option<OrderPlan>,
    /// The original space's extent came from an earlier call.
    pub high_extent_reused: bool,
    /// Densities of the original space that came from an earlier call.
    pub high_densities_reused: usize,
    /// The densities were summed in the pair pass (the row pass had found the maxima) rather
    /// than in a pass of their own.
    pub densities_in_pair_pass: bool,
    /// How each projection's pairs were ordered, as it happened (the bucketed path can fall
    /// back to the full sort on tie-heavy data).
    pub order_paths: Vec<OrderPath>,
    /// Whether the full-row sweep ran (Sammon, CCA, average local error, NeRV; the pair sums
    /// then came from it too).
    pub full_row_sweep: bool,
    /// Whether that sweep measured each pair once for both of its rows (in tiles: Euclidean
    /// spaces, neither NeRV nor the pair sums with it) rather than in each row.
    pub full_row_sweep_tiled: bool,
    /// With Sammon's stress: the pairs i < j at original distance 0, which it leaves out.
    pub zero_high_pairs: Option<u64>,
}

/// Builds what `needs` asks for, for every projection in `lows`. `known` holds extents that
/// the row pass found on the way: with them, the densities come from the same pass as the
/// pair sums (the maxima must be known before the kernel sums).
#[allow(clippy::too_many_arguments)]
pub fn build_pairwise(
    high: &Points,
    lows: &[&Points],
    needs: &Needs,
    order_plan: Option<&OrderPlan>,
    budgets: &Budgets,
    cache: &Mutex<PairwiseCache>,
    known: &Extents,
    block_rows: usize,
    ctl: &Control,
) -> Result<(Vec<Pairwise>, PairwiseReport)> {
    let mut out: Vec<Pairwise> = vec![Pairwise::default(); lows.len()];
    let mut report = PairwiseReport { order: order_plan.cloned(), ..Default::default() };
    let sigmas = &needs.density_sigmas;
    // With one projection, sorted in memory, the pass that measures the pairs also writes the
    // pair order's records.
    let mut prepared: Option<(Vec<u128>, Layout, Extent, Extent)> = None;
    // With a full-row measure, its sweep also gives the pair sums (one pass over the pairs).
    let sweep = needs.full_rows();
    let half_row_sums = needs.pair_sums && !sweep;
    if half_row_sums || !sigmas.is_empty() {
        let cached = cache.lock().expect("pairwise cache").high_extent;
        report.high_extent_reused = cached.is_some();
        let mut records = (lows.len() == 1 && matches!(order_plan, Some(OrderPlan::InMemory { .. }))).then(|| {
            let n = high.n();
            (vec![0u128; n * (n - 1) / 2], Writer::new(high, lows[0]))
        });
        // Densities in the same pass when every maximum is already known.
        let known_high = cached.or(known.high);
        let known_lows: Vec<Option<Extent>> = (0..lows.len()).map(|p| known.lows.get(p).copied().flatten()).collect();
        let missing_high = missing_high_sigmas(sigmas, cache);
        let fuse = !sigmas.is_empty() && known_high.is_some() && known_lows.iter().all(Option::is_some);
        report.densities_in_pair_pass = fuse;
        let job = PairJob {
            high_extent: cached.is_none(),
            sums: half_row_sums,
            records: records.as_mut().map(|(v, w)| (&mut v[..], &*w)),
            densities: fuse.then(|| DensityJob {
                high: known_high
                    .filter(|h| h.max > 0.0 && !missing_high.is_empty())
                    .map(|h| (h.max, &missing_high[..])),
                lows: known_lows.iter().map(|l| l.filter(|l| l.max > 0.0).map(|l| l.max)).collect(),
                low_sigmas: sigmas,
            }),
        };
        let pass = pair_pass(high, lows, job, block_rows, ctl)?;
        let hx = match (cached, pass.high) {
            (Some(c), _) => c,
            (None, Some(h)) => {
                cache.lock().expect("pairwise cache").high_extent = Some(h);
                h
            }
            (None, None) => unreachable!("the pass measures the original space when it is not cached"),
        };
        if let Some((v, w)) = records {
            prepared = Some((v, w.finish(pass.record_starts), hx, pass.lows[0].0));
        }
        for ((o, (lx, sums)), low) in out.iter_mut().zip(pass.lows).zip(lows) {
            o.high = Some(hx);
            o.low = Some(lx);
            o.sums = match sums {
                Some(s) => Some(rescaled_sums(high, low, lx, s, block_rows, ctl)?),
                None => None,
            };
        }
        if !sigmas.is_empty() {
            let high_dens = match pass.high_densities {
                _ if hx.max <= 0.0 => vec![None; sigmas.len()],
                Some(fresh) => store_high_densities(&missing_high, fresh, sigmas, cache, &mut report),
                // Fused, and every σ was cached.
                None if fuse => store_high_densities(&[], Vec::new(), sigmas, cache, &mut report),
                None => high_densities(high, hx, sigmas, cache, ctl, &mut report)?,
            };
            let mut fused_lows = pass.low_densities.into_iter();
            for (o, low) in out.iter_mut().zip(lows) {
                let lx = o.low.expect("extent measured");
                let low_dens = match fused_lows.next().flatten() {
                    Some(d) => Some(d),
                    None if lx.max > 0.0 => Some(densities(low, lx.max, sigmas, ctl, "densities (projection)")?),
                    None => None,
                };
                o.densities = sigmas
                    .iter()
                    .enumerate()
                    .map(|(s, &sigma)| DensityPair {
                        sigma,
                        high: high_dens[s].clone(),
                        low: low_dens.as_ref().map(|d| d[s].clone()),
                    })
                    .collect();
            }
        }
    }
    if sweep {
        full_row_sweep(high, lows, needs, cache, known, &mut out, block_rows, ctl)?;
        report.full_row_sweep = true;
        report.full_row_sweep_tiled = out.first().and_then(|o| o.sweep.as_ref()).is_some_and(|s| s.tiled);
        report.zero_high_pairs = needs.sammon.then(|| out[0].sweep.as_ref().map_or(0, |s| s.zero_high_pairs));
    }
    if let Some(plan) = order_plan {
        for (o, low) in out.iter_mut().zip(lows) {
            o.order = Some(match plan {
                OrderPlan::InMemory { .. } if prepared.is_some() => {
                    let (v, layout, hx, lx) = prepared.take().expect("records");
                    order_records(v, layout, hx, lx, needs.pair_ranks, needs.pair_isotonic, ctl)?
                }
                OrderPlan::InMemory { .. } => {
                    in_memory(high, low, needs.pair_ranks, needs.pair_isotonic, block_rows, ctl)?
                }
                OrderPlan::External(p) => {
                    external(high, low, needs.pair_ranks, needs.pair_isotonic, p, budgets.temp_dir.as_deref(), ctl)?
                }
            });
            report.order_paths.extend(o.order.as_ref().map(|s| s.path.clone()));
        }
    }
    Ok((out, report))
}

/// The full-row sweep for `out`'s projections, and its pair sums when asked for. The average
/// local error divides by each space's largest distance, so those come first: from `out` (the
/// half-row pass ran), the cache and the row pass, or else one extents-only pass.
#[allow(clippy::too_many_arguments)]
fn full_row_sweep(
    high: &Points,
    lows: &[&Points],
    needs: &Needs,
    cache: &Mutex<PairwiseCache>,
    known: &Extents,
    out: &mut [Pairwise],
    block_rows: usize,
    ctl: &Control,
) -> Result<()> {
    let mut ale = None;
    if !needs.ale.is_empty() {
        let cached = cache.lock().expect("pairwise cache").high_extent;
        let mut hx = out.first().and_then(|o| o.high).or(cached).or(known.high);
        let mut lx: Vec<Option<Extent>> =
            (0..lows.len()).map(|p| out[p].low.or(known.lows.get(p).copied().flatten())).collect();
        if hx.is_none() || lx.iter().any(Option::is_none) {
            let job = PairJob { high_extent: hx.is_none(), sums: false, records: None, densities: None };
            let pass = pair_pass(high, lows, job, block_rows, ctl)?;
            if let Some(h) = pass.high {
                cache.lock().expect("pairwise cache").high_extent = Some(h);
            }
            hx = hx.or(pass.high);
            lx = lx.into_iter().zip(&pass.lows).map(|(l, (e, _))| l.or(Some(*e))).collect();
        }
        let hx = hx.expect("the original space's extent is known");
        // A space whose distances are all zero has no average local error (the measure says so).
        let (mx, my): (f64, Vec<f64>) = (hx.max, lx.iter().map(|l| l.expect("extent").max).collect());
        if mx > 0.0 && my.iter().all(|&m| m > 0.0) {
            ale = Some((mx, my, needs.ale.clone()));
        }
    }
    let job =
        SweepJob { sums: needs.pair_sums, sammon: needs.sammon, cca: needs.cca.clone(), ale, nerv: needs.nerv.clone() };
    let (hx, sweeps) = row_sweep(high, lows, &job, block_rows, ctl)?;
    if cache.lock().expect("pairwise cache").high_extent.is_none() {
        cache.lock().expect("pairwise cache").high_extent = Some(hx);
    }
    for ((o, low), mut s) in out.iter_mut().zip(lows).zip(sweeps) {
        let lx = s.low.expect("the sweep measures the projection's extent");
        o.high = o.high.or(Some(hx));
        o.low = o.low.or(Some(lx));
        if let Some(sums) = s.sums.take() {
            o.sums = Some(rescaled_sums(high, low, lx, sums, block_rows, ctl)?);
        }
        o.sweep = Some(s);
    }
    Ok(())
}

/// NeRV's per-point divergences (the full-row measure whose values are means of per-row
/// values) for the rows `rows` of one projection, placed at their points in n-long vectors
/// (zeros elsewhere), as a shard's block needs them: each row's values are the same bits as in
/// a whole run.
pub fn nerv_rows(
    high: &Points,
    low: &Points,
    needs: &Needs,
    block_rows: usize,
    ctl: &Control,
    rows: std::ops::Range<usize>,
) -> Result<Pairwise> {
    let job = SweepJob { nerv: needs.nerv.clone(), ..SweepJob::default() };
    let (_, mut sweeps) = row_sweep_rows(high, &[low], &job, block_rows, ctl, rows.clone())?;
    let mut s = sweeps.remove(0);
    let spread = |v: &mut Vec<f64>| {
        let mut full = vec![0.0; high.n()];
        full[rows.clone()].copy_from_slice(v);
        *v = full;
    };
    for nr in &mut s.nerv {
        spread(&mut nr.recall);
        spread(&mut nr.precision);
    }
    Ok(Pairwise { sweep: Some(s), ..Pairwise::default() })
}

/// Largest pair distance of a projection, as a power of two, that keeps its statistics in
/// range: within [2^-SAFE_EXP, 2^SAFE_EXP], squares of sums of squares of 10^12 pairs stay
/// normal f64 numbers (2^(4·200) · 10^24 < 1.8e308, and likewise below).
const SAFE_EXP: i32 = 200;

/// The pair sums `s` of `low`, or, when the projection's largest distance lies outside
/// [2^-SAFE_EXP, 2^SAFE_EXP] (e.g. a projection scaled by 1e100 or 1e-160), the sums of `low`
/// multiplied by the power of two that brings that distance into [1, 2). A power of two scales
/// coordinates exactly, so the scale-free statistics (scale-normalised stress, Pearson's r)
/// are those of the projection as given, without the overflow or underflow of products of its
/// sums; ordinary projections keep their sums bit for bit (nothing is recomputed). Σ(d^X − d^Y)²
/// stays the first pass's, in original units (stress is not scale-free).
pub(super) fn rescaled_sums(
    high: &Points,
    low: &Points,
    lx: Extent,
    s: PairSums,
    block_rows: usize,
    ctl: &Control,
) -> Result<PairSums> {
    if !lx.max.is_finite() || lx.max <= 0.0 {
        return Ok(s);
    }
    let e = lx.max.log2().floor() as i32;
    let factor = 2f64.powi(-e);
    if (-SAFE_EXP..=SAFE_EXP).contains(&e) || !factor.is_finite() {
        return Ok(s);
    }
    let rows: Vec<f64> = low.as_slice().iter().map(|&v| v * factor).collect();
    // Coordinates far from their spread can leave the accepted range when rescaled: then the
    // sums stay as they are (a non-finite score is still caught where scores are produced).
    let Ok(scaled) = Points::from_vec(low.name(), low.n(), low.dim(), rows) else {
        return Ok(s);
    };
    let job = PairJob { high_extent: false, sums: true, records: None, densities: None };
    let pass = pair_pass(high, &[&scaled], job, block_rows, ctl)?;
    let mut t = pass.lows.into_iter().next().and_then(|(_, t)| t).expect("sums were asked for");
    t.sum_sq_diff = s.sum_sq_diff;
    t.y_scale_exp = -e;
    Ok(t)
}

/// The σs whose original-space densities are not cached yet.
fn missing_high_sigmas(sigmas: &[f64], cache: &Mutex<PairwiseCache>) -> Vec<f64> {
    let c = cache.lock().expect("pairwise cache");
    sigmas.iter().copied().filter(|&s| !c.high_density.iter().any(|(b, _)| *b == s.to_bits())).collect()
}

/// Caches `fresh` (the densities for `missing`) and returns those for `sigmas`, `None` where
/// the space's distances are all zero (nothing cached for that σ).
fn store_high_densities(
    missing: &[f64],
    fresh: Vec<Vec<f64>>,
    sigmas: &[f64],
    cache: &Mutex<PairwiseCache>,
    report: &mut PairwiseReport,
) -> Vec<Option<Arc<Vec<f64>>>> {
    let mut c = cache.lock().expect("pairwise cache");
    report.high_densities_reused = sigmas.len() - missing.len().min(sigmas.len());
    for (s, d) in missing.iter().zip(fresh) {
        c.high_density.push((s.to_bits(), Arc::new(d)));
    }
    let lookup = |s: f64| c.high_density.iter().find(|(b, _)| *b == s.to_bits()).map(|(_, d)| d.clone());
    sigmas.iter().map(|&s| lookup(s)).collect()
}

/// The original space's densities for `sigmas`, from the cache or one pass for the missing ones.
fn high_densities(
    high: &Points,
    hx: Extent,
    sigmas: &[f64],
    cache: &Mutex<PairwiseCache>,
    ctl: &Control,
    report: &mut PairwiseReport,
) -> Result<Vec<Option<Arc<Vec<f64>>>>> {
    if hx.max <= 0.0 {
        return Ok(vec![None; sigmas.len()]);
    }
    let missing = missing_high_sigmas(sigmas, cache);
    let fresh =
        if missing.is_empty() { Vec::new() } else { densities(high, hx.max, &missing, ctl, "densities (original)")? };
    Ok(store_high_densities(&missing, fresh, sigmas, cache, report))
}
