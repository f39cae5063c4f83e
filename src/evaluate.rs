//! [`Evaluator`]: one original space, many projections, many specs.
//!
//! The evaluator validates everything first, merges the specs' resource needs into one plan,
//! builds the resources in one row pass (reusing the original space's kNN across calls, like
//! ZADU's `measure_many`), then runs each measure on the shared resources.

use std::ops::Range;
use std::sync::{Arc, Mutex};
use web_time::Instant;

use crate::backend::{self, BackendChoice, Numerics, Selected};
use crate::control::{Cancel, Control, ProgressFn};
use crate::data::{Labels, Metric, Points};
#[cfg(feature = "gpu")]
use crate::error::GpuError;
use crate::error::{Error, Result};
#[cfg(feature = "gpu")]
use crate::gpu::{Gpu, GpuRequest, gpu_row_pass_rows_async};
use crate::measures::{Ctx, Resolved};
use crate::report::{
    BlockPlan, Evaluation, LeftOut, ProjectionScores, RunReport, Score, Served as ServedOutput, Timings,
};
use crate::resources::{Budgets, PairwiseCache, build_pairwise, plan_order};
use crate::resources::{
    HighRanksReport, HighRowsReport, ListKs, LowIndex, LowIndexReport, Needs, Neighbours, OrderPlan, PassOutput,
    ProjectionResources, RankTable, Resident, ResidentRanks, TablePlan, plan_rank_table, row_pass_resident,
};
use crate::spec::Spec;

/// How an evaluation runs. Set it with [`Evaluator::builder`]; the fields can be read and
/// changed, and new ones may come in any release (`#[non_exhaustive]`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// Worker threads; `None` or `Some(0)` uses Rayon's global pool (all cores, as ripgrep's
    /// `--threads 0`); at most [`MAX_THREADS`].
    pub threads: Option<usize>,
    /// Rows per task in the row pass. Results do not depend on it.
    pub block_rows: usize,
    /// Also return per-point values for measures that have them.
    pub local: bool,
    /// The original space's metric (scipy's `cdist` metrics); `None`: the points' own
    /// ([`Points::with_metric`], Euclidean by default). Projections are always Euclidean.
    pub metric: Option<Metric>,
    /// Which backend builds the resources.
    pub backend: BackendChoice,
    /// Exact (default) or Fast; Fast only changes what a GPU serves.
    pub numerics: Numerics,
    /// Adapter choice and block limits for the GPU.
    #[cfg(feature = "gpu")]
    pub gpu: GpuRequest,
    /// Bytes the pair order may hold in memory (srho, nm_stress); beyond it, an external sort.
    /// Also the most that a parameter may size (k's neighbour lists, cadi's triplets), checked
    /// before any work ([`Error::ParamMemory`]). `None`: half the physical memory, and at most
    /// what the process's limits leave (RLIMIT_AS, RLIMIT_DATA, the cgroup's memory.max).
    pub memory_budget: Option<u64>,
    /// Bytes of temporary files the external sort may write; `None`: unlimited.
    pub temp_budget: Option<u64>,
    /// Where the external sort's workspace goes; `None`: the system's temporary directory.
    pub temp_dir: Option<std::path::PathBuf>,
    /// Called with the phase and progress of long all-pairs passes.
    pub progress: Option<ProgressFn>,
    /// Set it to stop a run: it ends with `Error::Interrupted` and removes its temporary files.
    pub cancel: Option<Cancel>,
    /// Whether the evaluator keeps the original space's rank table (n² ranks within the memory
    /// budget) so that later calls look trustworthiness's ranks up instead of recomputing the
    /// original space's rows; `run.plan.high_ranks` says which served and why.
    pub resident_ranks: ResidentRanks,
    /// Whether a projection of dimension ≤ 3 is served by the exact spatial index (a k-d tree:
    /// its kNN and ranks without its full distance rows; the same bits) or by full rows;
    /// `run.plan.low_index` says which served and why.
    pub low_index: LowIndex,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: None,
            block_rows: 32,
            local: false,
            metric: None,
            backend: BackendChoice::Cpu,
            numerics: Numerics::Exact,
            #[cfg(feature = "gpu")]
            gpu: GpuRequest::default(),
            memory_budget: None,
            temp_budget: None,
            temp_dir: None,
            progress: None,
            cancel: None,
            resident_ranks: ResidentRanks::Auto,
            low_index: LowIndex::Auto,
        }
    }
}

/// The most worker threads a run may ask for: more cannot make a run faster and can exceed
/// the process's thread limit.
pub const MAX_THREADS: usize = 1024;

/// Checks a thread count: 0 means all cores; above [`MAX_THREADS`] is an error.
pub fn check_threads(threads: usize) -> Result<()> {
    if threads > MAX_THREADS {
        return Err(Error::TooManyThreads { threads, limit: MAX_THREADS });
    }
    Ok(())
}

/// The specs evaluated when none are given: tnc, mrre, lcmc, and nh when labels exist.
pub fn default_specs(with_labels: bool) -> Vec<Spec> {
    let mut v: Vec<Spec> = ["tnc", "mrre", "lcmc"].into_iter().map(Spec::new).collect();
    if with_labels {
        v.push(Spec::new("nh"));
    }
    v
}

/// Evaluates projections against one original space, caching that space's kNN.
///
/// ```
/// use faithful::{BackendChoice, Evaluator, Points, Spec};
/// let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.])?;
/// let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.])?;
/// let eval = Evaluator::builder(high).backend(BackendChoice::Cpu).local(true).build();
/// let scores = eval.measure(&low, None, &["tnc:k=2".parse::<Spec>()?])?;
/// assert_eq!(scores[0].id, "tnc");
/// assert_eq!(scores[0].value("trustworthiness"), Some(1.0));
/// assert_eq!(scores[0].local("local_continuity").map(<[f64]>::len), Some(6));
/// # Ok::<(), faithful::Error>(())
/// ```
pub struct Evaluator {
    high: Points,
    opts: Options,
    knn_high: Mutex<Option<CachedKnn>>,
    #[cfg(feature = "gpu")]
    gpu: Mutex<Option<Result<Arc<Gpu>, GpuError>>>,
    pairwise: Mutex<PairwiseCache>,
    ranks: Mutex<RankState>,
    /// The resident state of the span of rows this evaluator maps (a worker's share).
    pub(crate) span: Mutex<SpanState>,
    /// The partials' fingerprint hashed up to the end of the original space (it never changes:
    /// a pool worker maps a new projection every call and would hash n·D values each time).
    pub(crate) high_fingerprint: std::sync::OnceLock<u64>,
}

/// The original space's kNN list kept across calls, with what built it. A call reuses it only
/// when it accepts those numerics: an Exact call never reuses a Fast list (the GPU's unrefined
/// f32 order), and every report labels a reused list with the backend and numerics that built
/// it, not the call's. (The other caches, the rank table and the all-pairs cache, are only ever
/// built by the CPU reference in f64: always exact.)
#[derive(Clone)]
struct CachedKnn {
    list: Arc<Neighbours>,
    backend: &'static str,
    numerics: Numerics,
}

impl CachedKnn {
    /// Whether a call with `numerics` may use this list: Exact lists serve every call, a Fast
    /// list only Fast calls.
    fn accepted_by(&self, numerics: Numerics) -> bool {
        self.numerics == Numerics::Exact || numerics == Numerics::Fast
    }
}

/// The original space's rank table, once built, and how many calls needed cross ranks.
#[derive(Default)]
struct RankState {
    table: Option<Arc<RankTable>>,
    cross_calls: usize,
}

/// What an evaluator that maps one span of rows again and again keeps of the original space
/// for those rows only (`Evaluator::map_blocks_async`): their kNN lists (placed at their rows
/// of an n-row list) and their rows of the rank table, so that a pool of workers splits the
/// resident state instead of copying it.
#[derive(Default)]
pub(crate) struct SpanState {
    pub(crate) rows: Range<usize>,
    pub(crate) knn: Option<Arc<Neighbours>>,
    pub(crate) table: Option<Arc<RankTable>>,
    pub(crate) cross_calls: usize,
}

impl Served {
    /// The CPU reference served, exactly (`reason`: why, when another was asked for).
    pub(crate) fn cpu(reason: Option<String>) -> Served {
        Served {
            backend: "cpu",
            numerics: Numerics::Exact,
            fallback_reason: reason,
            #[cfg(feature = "gpu")]
            gpu: None,
            pairwise_gpu: false,
            high_ranks: None,
        }
    }
}

/// What a run's row pass built, kept for the views (`run_keeping`).
pub(crate) struct Kept {
    /// The original space's kNN list (built or reused), when the run needed one.
    pub(crate) knn_high: Option<Arc<Neighbours>>,
    /// Each projection's kNN list and cross ranks, when built.
    pub(crate) lows: Vec<crate::resources::ProjectionResources>,
    /// The run's progress and cancel.
    pub(crate) ctl: Control,
    /// Per projection, the optional specs left out of its scores (undefined on it).
    pub(crate) left_out: Vec<Vec<LeftOut>>,
}

/// Which backend built the resources, and how.
pub(crate) struct Served {
    pub(crate) backend: &'static str,
    /// The numerics the backend served with: Fast only for a GPU asked for Fast (the CPU
    /// reference is always exact).
    numerics: Numerics,
    pub(crate) fallback_reason: Option<String>,
    #[cfg(feature = "gpu")]
    pub(crate) gpu: Option<(Arc<Gpu>, crate::gpu::GpuStats)>,
    /// The all-pairs statistics came from the GPU's Fast reductions.
    pairwise_gpu: bool,
    /// Where the original-space cross ranks came from, when the run needed them.
    high_ranks: Option<HighRanksReport>,
}

/// Sets an [`Evaluator`]'s [`Options`] one by one: `Evaluator::builder(high).threads(4).build()`.
///
/// ```
/// use faithful::{Cancel, Evaluator, Numerics, Points};
/// let high = Points::from_vec("high", 3, 1, vec![0., 1., 3.])?;
/// let cancel = Cancel::new();
/// let eval = Evaluator::builder(high)
///     .threads(2)
///     .numerics(Numerics::Exact)
///     .memory_budget(1 << 30)
///     .progress(|p| assert!(p.done <= p.total))
///     .cancel(cancel.clone())
///     .build();
/// assert_eq!(eval.options().threads, Some(2));
/// assert_eq!(eval.options().memory_budget, Some(1 << 30));
/// assert_eq!(eval.high().n(), 3);
/// # Ok::<(), faithful::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct EvaluatorBuilder {
    high: Points,
    opts: Options,
}

impl EvaluatorBuilder {
    /// Replaces every option at once.
    pub fn options(mut self, opts: Options) -> Self {
        self.opts = opts;
        self
    }
    /// Worker threads: 0 uses Rayon's global pool (all cores); at most [`MAX_THREADS`].
    pub fn threads(mut self, threads: usize) -> Self {
        self.opts.threads = Some(threads);
        self
    }
    /// Rows per task in the row pass (results do not depend on it).
    pub fn block_rows(mut self, rows: usize) -> Self {
        self.opts.block_rows = rows;
        self
    }
    /// Also return per-point values for measures that have them ([`Score::local`]).
    pub fn local(mut self, local: bool) -> Self {
        self.opts.local = local;
        self
    }
    /// The original space's metric (default: the points' own, Euclidean unless set with
    /// [`Points::with_metric`]): scipy's `cdist(X, X, metric)` bit for bit. A point on which
    /// it is undefined (a zero vector under cosine) fails the first call with
    /// [`Error::MetricUndefined`]. Projections stay Euclidean.
    ///
    /// ```
    /// use faithful::{Evaluator, Metric, Points, Spec};
    /// let high = Points::from_vec("high", 4, 2, vec![1., 0., 1., 0.1, 0., 1., 0.1, 1.])?;
    /// let low = Points::from_vec("low", 4, 1, vec![0., 1., 5., 6.])?;
    /// let eval = Evaluator::builder(high).metric(Metric::Cosine).build();
    /// let run = eval.measure_many(&[&low], None, &["tnc:k=1".parse::<Spec>()?])?;
    /// assert_eq!(run.projections[0].scores[0].value("trustworthiness"), Some(1.0));
    /// assert_eq!(run.run.spaces.high.metric, Metric::Cosine);
    /// # Ok::<(), faithful::Error>(())
    /// ```
    pub fn metric(mut self, metric: Metric) -> Self {
        self.opts.metric = Some(metric);
        self
    }
    /// Which backend builds the resources (default [`BackendChoice::Cpu`]).
    pub fn backend(mut self, backend: BackendChoice) -> Self {
        self.opts.backend = backend;
        self
    }
    /// Exact (default) or Fast; Fast only changes what a GPU serves.
    pub fn numerics(mut self, numerics: Numerics) -> Self {
        self.opts.numerics = numerics;
        self
    }
    /// Use the first GPU adapter whose name contains `name` (case-insensitive).
    #[cfg(feature = "gpu")]
    pub fn adapter(mut self, name: impl Into<String>) -> Self {
        self.opts.gpu.adapter = Some(name.into());
        self
    }
    /// Use exactly `adapter`, one of [`crate::gpu_adapters`], when the GPU serves
    /// ([`BackendChoice::Gpu`], or `Auto` on a hardware adapter); it comes before
    /// [`EvaluatorBuilder::adapter`]'s name. An adapter that is not
    /// [usable](crate::AdapterInfo::is_usable) fails with [`GpuError::Unsupported`] (`Gpu`) or
    /// leaves the run to the CPU with the reason in the report (`Auto`).
    ///
    /// ```
    /// use faithful::{BackendChoice, Evaluator, Points, Spec};
    /// let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.])?;
    /// let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.])?;
    /// let specs = ["tnc:k=2".parse::<Spec>()?];
    /// let cpu = Evaluator::builder(high.clone()).build().measure(&low, None, &specs)?;
    /// for adapter in faithful::gpu_adapters().into_iter().filter(|a| a.is_usable()) {
    ///     let eval = Evaluator::builder(high.clone()).backend(BackendChoice::Gpu).gpu_adapter(&adapter).build();
    ///     match eval.measure_many(&[&low], None, &specs) {
    ///         // The GPU's answer is the CPU reference's, bit for bit.
    ///         Ok(run) => {
    ///             assert_eq!(run.projections[0].scores, cpu);
    ///             assert_eq!(run.run.adapter.map(|a| a.name), Some(adapter.name));
    ///         }
    ///         // A usable adapter whose driver fails to start a device.
    ///         Err(e) => println!("{}: {e}", adapter.name),
    ///     }
    /// }
    /// # Ok::<(), faithful::Error>(())
    /// ```
    #[cfg(all(feature = "gpu", not(target_arch = "wasm32")))]
    pub fn gpu_adapter(mut self, adapter: &crate::AdapterInfo) -> Self {
        self.opts.gpu.chosen = Some(adapter.clone());
        self
    }
    /// Bytes the pair order and parameter-sized lists may hold in memory (default: half the
    /// physical memory, at most what the process's limits leave); beyond it the pair order is
    /// sorted externally.
    pub fn memory_budget(mut self, bytes: u64) -> Self {
        self.opts.memory_budget = Some(bytes);
        self
    }
    /// Bytes of temporary files the external sort may write (default: unlimited).
    pub fn temp_budget(mut self, bytes: u64) -> Self {
        self.opts.temp_budget = Some(bytes);
        self
    }
    /// Where the external sort's workspace goes (default: the system's temporary directory).
    pub fn temp_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.opts.temp_dir = Some(dir.into());
        self
    }
    /// Called from worker threads with the phase and progress of long all-pairs passes.
    pub fn progress(mut self, f: impl Fn(crate::Progress) + Send + Sync + 'static) -> Self {
        self.opts.progress = Some(ProgressFn::new(f));
        self
    }
    /// A flag that stops a run with [`Error::Interrupted`] once set (from any thread).
    pub fn cancel(mut self, cancel: Cancel) -> Self {
        self.opts.cancel = Some(cancel);
        self
    }
    /// Whether to keep the original space's rank table (default [`ResidentRanks::Auto`]: from
    /// the second call that needs cross ranks, when it fits the memory budget).
    pub fn resident_ranks(mut self, policy: ResidentRanks) -> Self {
        self.opts.resident_ranks = policy;
        self
    }
    /// Whether projections of dimension ≤ 3 use the exact spatial index (default
    /// [`LowIndex::Auto`]); the results are the same bits either way.
    pub fn low_index(mut self, choice: LowIndex) -> Self {
        self.opts.low_index = choice;
        self
    }
    /// The evaluator.
    pub fn build(self) -> Evaluator {
        Evaluator::new(self.high, self.opts)
    }
}

impl Evaluator {
    /// A builder for an evaluator of the original space `high`, with default [`Options`].
    pub fn builder(high: Points) -> EvaluatorBuilder {
        EvaluatorBuilder { high, opts: Options::default() }
    }

    /// The options this evaluator runs with.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The options for later calls: the browser's `Session` sets `local`, `progress` and
    /// `cancel` per call; the cached kNN, device and all-pairs statistics stay.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn options_mut(&mut self) -> &mut Options {
        &mut self.opts
    }

    /// An evaluator for the original space `high`.
    pub fn new(high: Points, opts: Options) -> Self {
        let high = with_metric(high, opts.metric);
        Evaluator {
            knn_high: Mutex::new(graph_lists(&high)),
            high,
            opts,
            #[cfg(feature = "gpu")]
            gpu: Mutex::new(None),
            pairwise: Mutex::default(),
            ranks: Mutex::default(),
            span: Mutex::default(),
            high_fingerprint: std::sync::OnceLock::new(),
        }
    }

    /// An evaluator that uses an already started GPU (benchmarks: a warm device and compiled
    /// pipelines, but no cached resources).
    #[cfg(feature = "gpu")]
    pub fn with_gpu(high: Points, opts: Options, gpu: Arc<Gpu>) -> Self {
        let high = with_metric(high, opts.metric);
        Evaluator {
            knn_high: Mutex::new(graph_lists(&high)),
            high,
            opts,
            gpu: Mutex::new(Some(Ok(gpu))),
            pairwise: Mutex::default(),
            ranks: Mutex::default(),
            span: Mutex::default(),
            high_fingerprint: std::sync::OnceLock::new(),
        }
    }

    /// The GPU, started on first use and kept for later calls.
    #[cfg(feature = "gpu")]
    async fn gpu(&self) -> Result<Arc<Gpu>, GpuError> {
        if let Some(started) = self.gpu.lock().expect("gpu lock").clone() {
            return started;
        }
        let started = backend::start_gpu(&self.opts.gpu).await;
        *self.gpu.lock().expect("gpu lock") = Some(started.clone());
        started
    }

    /// Builds the resources on the selected backend; a GPU failure retries with smaller
    /// blocks, then falls back to the CPU, and says so.
    /// `rows` are the rows to build (a shard's block, or all); `numerics` the posture asked for.
    pub(crate) async fn build(
        &self,
        cached: Option<&Neighbours>,
        table: Option<&TablePlan>,
        lows: &[&Points],
        needs: Needs,
        rows: Range<usize>,
        numerics: Numerics,
        fuse: Option<(usize, &Control)>,
    ) -> Result<(PassOutput, Served)> {
        let cpu = |reason: Option<String>| -> Result<(PassOutput, Served)> {
            let (ranks, high_ranks) = self.resident_table(table, &rows);
            let resident = Resident { knn: cached, ranks: ranks.as_deref() };
            let (o, needs) = (&self.opts, needs.clone());
            let pass = match fuse {
                Some((km, ctl)) => self.fused_pass(cached, lows, &needs, km, ctl)?,
                None => row_pass_resident(&self.high, resident, lows, needs, o.block_rows, o.low_index, rows.clone()),
            };
            Ok((
                pass,
                Served {
                    backend: "cpu",
                    numerics: Numerics::Exact,
                    fallback_reason: reason,
                    #[cfg(feature = "gpu")]
                    gpu: None,
                    pairwise_gpu: false,
                    high_ranks,
                },
            ))
        };
        #[cfg(feature = "gpu")]
        let selected = match (self.opts.backend, crate::gpu::domain::metric_unsupported(&self.high)) {
            // The certified kernels compute distances of coordinates, under the certified metrics only.
            (BackendChoice::Auto, Some(why)) => Selected::Cpu { reason: Some(format!("auto: {why}")) },
            (BackendChoice::Gpu, Some(why)) => {
                Selected::Cpu { reason: Some(format!("{why}; the CPU reference served")) }
            }
            _ => {
                let gpu_work = needs.gpu_work(numerics == Numerics::Fast);
                backend::select(self.opts.backend, rows.len(), self.high.n(), gpu_work, || self.gpu()).await?
            }
        };
        #[cfg(not(feature = "gpu"))]
        let selected = backend::select(self.opts.backend)?;
        match selected {
            Selected::Cpu { reason } => {
                let reason = match (reason, numerics) {
                    (r, Numerics::Fast) => Some(
                        r.map_or(String::new(), |r| r + "; ")
                            + "the CPU reference is always exact (Fast applies to GPU work)",
                    ),
                    (r, Numerics::Exact) => r,
                };
                cpu(reason)
            }
            #[cfg(feature = "gpu")]
            Selected::Gpu(gpu) => {
                let mut last: Option<GpuError> = None;
                for _attempt in 0..2 {
                    let pass =
                        gpu_row_pass_rows_async(&gpu, &self.high, cached, lows, needs.clone(), numerics, rows.clone());
                    match pass.await {
                        Ok((pass, stats)) => {
                            let mut reason = last
                                .as_ref()
                                .map(|e| format!("GPU failed once ({e}); retried with half the rows per dispatch"));
                            let incomplete = stats.knn.rows_incomplete + stats.ranks.rows_incomplete;
                            if incomplete > 0 {
                                add_reason(
                                    &mut reason,
                                    format!(
                                        "the completeness witness found {incomplete} rows the device did not finish; the CPU reference recomputed them"
                                    ),
                                );
                            }
                            let served = Served {
                                backend: "gpu",
                                numerics,
                                fallback_reason: reason,
                                gpu: Some((gpu.clone(), stats)),
                                pairwise_gpu: false,
                                high_ranks: table.map(|_| HighRanksReport {
                                    source: "recomputed",
                                    reason: "the GPU serves the cross ranks".into(),
                                    table_bytes: RankTable::bytes_for(self.high.n()),
                                    built_now: false,
                                }),
                            };
                            return Ok((pass, served));
                        }
                        Err(e @ GpuError::Runtime { .. }) => {
                            gpu.shrink_blocks();
                            last = Some(e);
                        }
                        Err(e) => {
                            last = Some(e);
                            break;
                        }
                    }
                }
                match last.expect("an error ended the attempts") {
                    e @ GpuError::Domain(_) => cpu(Some(format!("{e}; the CPU reference served"))),
                    e => cpu(Some(format!("GPU failed ({e}); the CPU reference served"))),
                }
            }
        }
    }

    /// The row pass fused with the co-ranking pass at `km` (all rows): per projection, one pass
    /// that sorts both rows of every point once gives the co-ranking counts and, read off the
    /// same orders, the kNN lists and cross ranks of `needs` (the same bits as the row pass).
    fn fused_pass(
        &self,
        cached: Option<&Neighbours>,
        lows: &[&Points],
        needs: &Needs,
        km: usize,
        ctl: &Control,
    ) -> Result<PassOutput> {
        let n = self.high.n();
        let ks = needs.pass_ks(lows.len());
        let own_high = ks.kh > 0 && ks.usable(cached).is_none();
        let block_rows = self.opts.block_rows.max(1);
        let mut out = PassOutput {
            high: None,
            lows: Vec::with_capacity(lows.len()),
            stats: crate::resources::PassStats { block_rows, blocks: n.div_ceil(block_rows), ..Default::default() },
            extents: Default::default(),
            low_index: Vec::new(),
            coranking: Vec::with_capacity(lows.len()),
            high_rows: None,
        };
        for (p, low) in lows.iter().enumerate() {
            // Projection-only cross ranks come with both directions (the fused pass ranks every j).
            let lists = ListKs { kh: if p == 0 && own_high { ks.kh } else { 0 }, kl: ks.kl, kc: ks.kc.max(ks.kcl) };
            let (counts, f) = crate::measures::coranking::fused(&self.high, low, km, lists, block_rows, ctl, 0..n)?;
            if p == 0 {
                out.high = f.high;
            }
            out.lows.push(ProjectionResources { knn: f.low, cross: f.cross });
            out.coranking.push(counts);
            out.stats.distance_rows += 2 * n as u64;
            out.stats.rows_fused += n as u64;
            out.stats.rows_integer_keys += crate::resources::lattice_rows(&self.high, low, n);
            if ks.kl > 0 {
                out.low_index.push(LowIndexReport {
                    path: "rows",
                    reason: "fused with the co-ranking pass: its full sorted rows give the lists too".into(),
                });
            }
        }
        Ok(out)
    }

    /// The rank table that `plan` asks for (built now if it says so: all rows for a whole run,
    /// kept for later runs; the span's rows for a span, kept for later calls on it) and its
    /// report.
    fn resident_table(
        &self,
        plan: Option<&TablePlan>,
        rows: &Range<usize>,
    ) -> (Option<Arc<RankTable>>, Option<HighRanksReport>) {
        match plan {
            None => (None, None),
            Some(TablePlan::Use(t, r)) => (Some(t.clone()), Some(r.clone())),
            Some(TablePlan::Build(r)) if *rows == (0..self.high.n()) => {
                let t = Arc::new(RankTable::build(&self.high, self.opts.block_rows));
                self.ranks.lock().expect("ranks lock").table = Some(t.clone());
                (Some(t), Some(r.clone()))
            }
            Some(TablePlan::Build(r)) => {
                let t = Arc::new(RankTable::build_rows(&self.high, rows.clone(), self.opts.block_rows));
                self.span.lock().expect("span lock").table = Some(t.clone());
                (Some(t), Some(r.clone()))
            }
            Some(TablePlan::Recompute(r)) => (None, Some(r.clone())),
        }
    }

    /// The original space's whole rank table, when an earlier call built it.
    pub(crate) fn full_table(&self) -> Option<Arc<RankTable>> {
        self.ranks.lock().expect("ranks lock").table.clone()
    }

    /// The original space.
    pub fn high(&self) -> &Points {
        &self.high
    }

    /// Evaluates `specs` on one projection.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn measure(&self, low: &Points, labels: Option<&Labels>, specs: &[Spec]) -> Result<Vec<Score>> {
        Ok(self.measure_many(&[low], labels, specs)?.projections.remove(0).scores)
    }

    /// Evaluates `specs` on each projection, sharing every resource that can be shared.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn measure_many(&self, lows: &[&Points], labels: Option<&Labels>, specs: &[Spec]) -> Result<Evaluation> {
        self.measure_many_as(self.opts.numerics, lows, labels, specs)
    }

    /// [`Evaluator::measure_many`] with `numerics` for this call only (Python's per-call
    /// `numerics=`); the caches are shared, each reused only by a call that accepts it.
    #[doc(hidden)]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn measure_many_as(
        &self,
        numerics: Numerics,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
    ) -> Result<Evaluation> {
        self.on_threads(|| pollster::block_on(self.run(lows, labels, specs, numerics)))
    }

    /// Sets the numerics of later calls. What this evaluator keeps across calls keeps its own
    /// label: the original space's kNN list built by a Fast call serves only later Fast calls
    /// (an Exact call builds its own), and every run report says what served each output.
    ///
    /// ```
    /// use faithful::{Evaluator, Numerics, Points, Spec};
    /// let high = Points::from_vec("high", 6, 2, vec![0., 0., 1., 0., 0., 1., 5., 5., 6., 5., 5., 6.])?;
    /// let low = Points::from_vec("low", 6, 1, vec![0., 1., 2., 10., 11., 12.])?;
    /// let specs = ["tnc:k=2".parse::<Spec>()?];
    /// let mut eval = Evaluator::builder(high).numerics(Numerics::Fast).build();
    /// let fast = eval.measure_many(&[&low], None, &specs)?;
    /// eval.set_numerics(Numerics::Exact);
    /// let exact = eval.measure_many(&[&low], None, &specs)?;
    /// // On the CPU both are exact; on a GPU the first would say "fast".
    /// assert_eq!(exact.run.numerics, "exact");
    /// assert!(exact.run.served.iter().all(|s| s.numerics == "exact"));
    /// # Ok::<(), faithful::Error>(())
    /// ```
    pub fn set_numerics(&mut self, numerics: Numerics) {
        self.opts.numerics = numerics;
    }

    /// Runs `run` on [`Options::threads`] worker threads (Rayon's global pool for `None` or 0).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn on_threads<T: Send>(&self, run: impl FnOnce() -> Result<T> + Send) -> Result<T> {
        match self.opts.threads {
            None | Some(0) => run(),
            Some(t) => {
                check_threads(t)?;
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .map_err(|e| Error::ThreadPool { threads: t, reason: e.to_string() })?;
                pool.install(run)
            }
        }
    }

    /// [`Evaluator::measure_many`] for async callers (the browser, where GPU readback must be
    /// awaited); `threads` does not apply.
    pub async fn measure_many_async(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
    ) -> Result<Evaluation> {
        self.run(lows, labels, specs, self.opts.numerics).await
    }

    /// The run's budgets, the default memory budget read once (it reads several files under
    /// /proc and /sys: a tenth of a millisecond, more than a small measure's whole work).
    pub(crate) fn budgets(&self) -> Budgets {
        let o = &self.opts;
        let memory = Some(o.memory_budget.unwrap_or_else(crate::resources::default_memory_budget));
        Budgets { memory, temp: o.temp_budget, temp_dir: o.temp_dir.clone() }
    }

    /// The original space's metric is set and defined on every point.
    fn check_space(&self) -> Result<()> {
        if let Some(m) = self.opts.metric.filter(|&m| m != self.high.metric()) {
            // `with_metric` applied every metric it could; this one it could not.
            self.high.metric_allowed(m)?;
        }
        self.high.check_metric()
    }

    pub(crate) fn validate(&self, lows: &[&Points], labels: Option<&Labels>, specs: &[Spec]) -> Result<Vec<Resolved>> {
        self.check_space()?;
        let n = self.high.n();
        if lows.is_empty() {
            return Err(Error::NoProjection);
        }
        for low in lows {
            if low.n() != n {
                return Err(Error::RowMismatch { name: low.name().into(), expected: n, got: low.n() });
            }
        }
        if let Some(l) = labels {
            l.check_len(n)?;
        }
        let mut resolved = specs.iter().map(Resolved::new).collect::<Result<Vec<_>>>()?;
        for r in &mut resolved {
            r.default_k(n);
            r.check_n(n)?;
            if r.def.min_classes > 0 {
                let l = labels.ok_or_else(|| Error::LabelsRequired { id: r.def.id.into() })?;
                if l.classes() < r.def.min_classes {
                    return Err(Error::TooFewClasses {
                        id: r.def.id.into(),
                        need: r.def.min_classes,
                        got: l.classes(),
                    });
                }
            }
        }
        crate::space::check(&self.high, lows, &resolved)?;
        Ok(resolved)
    }

    /// Keeps `list`, just built by `served`, for later calls, labelled with what built it.
    fn keep_knn(&self, list: &Arc<Neighbours>, served: &Served) {
        let kept = CachedKnn { list: list.clone(), backend: served.backend, numerics: served.numerics };
        *self.knn_high.lock().expect("cache lock") = Some(kept);
    }

    async fn run(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
        numerics: Numerics,
    ) -> Result<Evaluation> {
        Ok(self.run_keeping(lows, labels, specs, &[], numerics, Needs::default(), self.opts.local).await?.0)
    }

    /// [`Evaluator::run`] whose row pass also builds `extra` (the views' kNN lists and cross
    /// ranks), returning the pass's resources with the scores; `local`: per-point values.
    /// `optional`: specs scored after `specs` from the same pass where they are defined; on a
    /// projection where one is [`Error::Undefined`] it is left out of that projection's scores
    /// and named in [`Kept::left_out`] (any other error fails the call, as the specs' do).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_keeping(
        &self,
        lows: &[&Points],
        labels: Option<&Labels>,
        specs: &[Spec],
        optional: &[Spec],
        numerics: Numerics,
        extra: Needs,
        local: bool,
    ) -> Result<(Evaluation, Kept)> {
        let t0 = Instant::now();
        let all: Vec<Spec> = specs.iter().chain(optional).cloned().collect();
        let resolved = self.validate(lows, labels, &all)?;
        let t_valid = t0.elapsed().as_secs_f64();

        let needs = resolved.iter().map(Resolved::needs).fold(extra, Needs::merge);
        let (o, n) = (&self.opts, self.high.n());
        let budgets = self.budgets();
        let ctl = Control { progress: o.progress.clone(), cancel: o.cancel.clone() };
        let order_plan = plan_order(self.high.n(), &needs, &budgets)?;
        // Then what parameters size (k, n_triplets), also before any work.
        for r in &resolved {
            r.check_memory(self.high.n(), lows.len(), budgets.memory_bytes())?;
        }
        let any_pairwise = needs.any_pairwise();
        // A cached list serves only a call that accepts its numerics (never a Fast list in an
        // Exact call, whatever backend serves this call).
        let cached = self.knn_high.lock().expect("cache lock").clone().filter(|c| c.accepted_by(numerics));
        let reused = cached.as_ref().is_some_and(|c| c.list.k >= needs.knn_high.max(needs.cross));
        // coranking asked with neighbourhood measures: one pass serves them all (on the CPU).
        let fuse = fuse_km(&resolved, &needs, &self.high);
        #[cfg_attr(not(feature = "gpu"), allow(unused_mut))]
        let table = (needs.cross > 0 && fuse.is_none()).then(|| {
            let state = self.ranks.lock().expect("ranks lock");
            let order_bytes = match &order_plan {
                Some(OrderPlan::InMemory { bytes }) => *bytes,
                _ => 0,
            };
            let other = needs.list_bytes(self.high.n(), lows.len()).saturating_add(order_bytes);
            let (policy, budget) = (self.opts.resident_ranks, budgets.memory_bytes());
            plan_rank_table(n, n, policy, state.table.clone(), state.cross_calls, other, budget)
        });
        let (pass, mut served) = self
            .build(
                cached.as_ref().map(|c| &*c.list),
                table.as_ref(),
                lows,
                needs.clone(),
                0..n,
                numerics,
                fuse.map(|km| (km, &ctl)),
            )
            .await?;
        if needs.cross > 0 {
            self.ranks.lock().expect("ranks lock").cross_calls += 1;
        }
        let reused = cached.filter(|_| reused);
        let knn_high: Option<Arc<Neighbours>> = match pass.high {
            Some(fresh) => {
                let fresh = Arc::new(fresh);
                self.keep_knn(&fresh, &served);
                Some(fresh)
            }
            None => reused.as_ref().map(|c| c.list.clone()),
        };
        // Fast posture on a GPU: pair sums and densities from the device's f32 reductions.
        #[cfg(feature = "gpu")]
        let fast_gpu = match &served.gpu {
            Some((g, _))
                if served.numerics == Numerics::Fast && (needs.pair_sums || !needs.density_sigmas.is_empty()) =>
            {
                Some(g.clone())
            }
            _ => None,
        };
        #[cfg(not(feature = "gpu"))]
        let fast_gpu: Option<std::convert::Infallible> = None;
        let cpu_needs = if fast_gpu.is_some() {
            Needs { pair_sums: false, density_sigmas: Vec::new(), ..needs.clone() }
        } else {
            needs.clone()
        };
        #[cfg_attr(not(feature = "gpu"), allow(unused_mut))]
        let (mut pairwise, mut pairwise_report) = build_pairwise(
            &self.high,
            lows,
            &cpu_needs,
            order_plan.as_ref(),
            &budgets,
            &self.pairwise,
            &pass.extents,
            self.opts.block_rows,
            &ctl,
        )?;
        #[cfg(feature = "gpu")]
        if let Some(g) = fast_gpu {
            match crate::gpu::fast_pairwise_async(&g, &self.high, lows, &needs, &mut pairwise).await {
                Ok(incomplete) => {
                    served.pairwise_gpu = true;
                    if incomplete > 0 {
                        add_reason(
                            &mut served.fallback_reason,
                            format!(
                                "the completeness witness found {incomplete} pair-statistics rows the device did not finish; the CPU twin recomputed them"
                            ),
                        );
                    }
                }
                Err(e) => {
                    add_reason(
                        &mut served.fallback_reason,
                        format!("GPU pair reductions failed ({e}); the CPU served them in f64"),
                    );
                    (pairwise, pairwise_report) = build_pairwise(
                        &self.high,
                        lows,
                        &needs,
                        order_plan.as_ref(),
                        &budgets,
                        &self.pairwise,
                        &pass.extents,
                        self.opts.block_rows,
                        &ctl,
                    )?;
                }
            }
        }
        let t_res = t0.elapsed().as_secs_f64();

        let mut projections = Vec::with_capacity(lows.len());
        let mut left_out = Vec::with_capacity(lows.len());
        for (p, ((low, res), pw)) in lows.iter().zip(&pass.lows).zip(&pairwise).enumerate() {
            let ctx = Ctx {
                high: &self.high,
                low,
                labels,
                knn_high: knn_high.as_deref(),
                knn_low: res.knn.as_ref(),
                cross: res.cross.as_ref(),
                pairwise: Some(pw),
                block_rows: self.opts.block_rows,
                local,
                ctl: &ctl,
                coranking: pass.coranking.get(p),
                memory_budget: budgets.memory_bytes(),
            };
            let mut scores = Vec::with_capacity(resolved.len());
            let mut omitted = Vec::new();
            for (s, r) in resolved.iter().enumerate() {
                let out = match (r.def.compute)(&ctx, r).and_then(|out| finite(r, out)) {
                    Err(Error::Undefined { id, reason, .. }) if s >= specs.len() => {
                        omitted.push(LeftOut { id, reason });
                        continue;
                    }
                    out => out.map_err(|e| e.on_projection(low.name()))?,
                };
                let local = (local && !r.def.local.is_empty()).then_some(out.local);
                let (values, curves) = (out.values, out.curves);
                scores.push(Score::new(r, values, local, curves));
            }
            projections.push(ProjectionScores { name: low.name().into(), scores });
            left_out.push(omitted);
        }
        let t_end = t0.elapsed().as_secs_f64();

        let resource_bytes = knn_high.as_ref().map_or(0, |k| k.bytes())
            + pass
                .lows
                .iter()
                .map(|r| r.knn.as_ref().map_or(0, |k| k.bytes()) + r.cross.as_ref().map_or(0, |c| c.bytes()))
                .sum::<usize>();
        let timings =
            Timings { validate_s: t_valid, resources_s: t_res - t_valid, measures_s: t_end - t_res, total_s: t_end };
        let pairwise_report = any_pairwise.then_some(pairwise_report);
        let work = (pass.stats, pass.low_index, pass.high_rows);
        let run = self.report(lows, needs, reused.as_ref(), work, &served, resource_bytes, timings, pairwise_report);
        self.check_reads()?;
        Ok((Evaluation { projections, run }, Kept { knn_high, lows: pass.lows, ctl, left_out }))
    }

    /// The all-pairs cache (the views' Shepard pass keeps the original space's extent there).
    pub(crate) fn pairwise_cache(&self) -> &Mutex<PairwiseCache> {
        &self.pairwise
    }

    /// The exact kNN graph of the original space (ties by index, self excluded), with the
    /// report of what served it. The result is also kept for later measure calls.
    ///
    /// ```
    /// use faithful::{Evaluator, Points};
    /// let points = Points::from_vec("line", 4, 1, vec![0., 1., 3., 7.])?;
    /// let (graph, report) = Evaluator::builder(points).build().knn(2)?;
    /// assert_eq!((graph.n(), graph.k), (4, 2));
    /// assert_eq!(graph.row(0, 2), [1, 2]);
    /// assert_eq!(graph.dist_row(3, 2), [4.0, 6.0]);
    /// assert_eq!(report.backend, "cpu");
    /// assert!(Evaluator::builder(Points::from_vec("two", 2, 1, vec![0., 1.])?).build().knn(2).is_err());
    /// # Ok::<(), faithful::Error>(())
    /// ```
    ///
    /// With [`Numerics::Fast`] on a GPU the lists are the device's f32 order, not certified:
    /// `report.numerics` is then `"fast"`; it is `"exact"` only for the reference's lists.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn knn(&self, k: usize) -> Result<(Arc<Neighbours>, RunReport)> {
        self.knn_as(self.opts.numerics, k)
    }

    /// [`Evaluator::knn`] with `numerics` for this call only.
    #[doc(hidden)]
    #[cfg(not(target_arch = "wasm32"))]
    pub fn knn_as(&self, numerics: Numerics, k: usize) -> Result<(Arc<Neighbours>, RunReport)> {
        self.on_threads(|| pollster::block_on(self.knn_numerics(k, numerics)))
    }

    /// [`Evaluator::knn`] for async callers.
    pub async fn knn_async(&self, k: usize) -> Result<(Arc<Neighbours>, RunReport)> {
        self.knn_numerics(k, self.opts.numerics).await
    }

    async fn knn_numerics(&self, k: usize, numerics: Numerics) -> Result<(Arc<Neighbours>, RunReport)> {
        self.check_space()?;
        let n = self.high.n();
        if k < 1 || k >= n {
            // A k past i64 is shown as given, never wrapped (`k=-1`).
            return Err(match i64::try_from(k) {
                Ok(k) => Error::KOutOfRange { id: "knn".into(), k, n, rule: "1 <= k < n" },
                Err(_) => Error::BadParam {
                    id: "knn".into(),
                    param: "k".into(),
                    value: k.to_string(),
                    reason: format!("out of range: need 1 <= k < n (n={n})"),
                },
            });
        }
        if let Some(g) = self.high.knn_graph() {
            // The graph's own lists, cut to k.
            if k > g.k() {
                return Err(Error::NeedsInput {
                    id: "knn".into(),
                    need: format!("{k} neighbours per point"),
                    given: format!("a kNN graph ({} neighbours per point)", g.k()),
                });
            }
            let (idx, dist) = g.lists();
            let cut = |i: usize| i % g.k() < k;
            let nb = Arc::new(Neighbours {
                k,
                idx: idx.iter().enumerate().filter(|(t, _)| cut(*t)).map(|(_, &j)| j).collect(),
                dist: dist.iter().enumerate().filter(|(t, _)| cut(*t)).map(|(_, &d)| d).collect(),
            });
            let needs = Needs { knn_high: k, ..Needs::default() };
            let served = Served {
                backend: "cpu",
                numerics: Numerics::Exact,
                fallback_reason: None,
                #[cfg(feature = "gpu")]
                gpu: None,
                pairwise_gpu: false,
                high_ranks: None,
            };
            // The graph is the given list itself: reported as a reused, exact list.
            let given = CachedKnn { list: nb.clone(), backend: "cpu", numerics: Numerics::Exact };
            let run = self.report(
                &[],
                needs,
                Some(&given),
                Default::default(),
                &served,
                nb.bytes(),
                Timings::default(),
                None,
            );
            return Ok((nb, run));
        }
        let needs = Needs { knn_high: k, ..Needs::default() };
        let (bytes, budget) = (needs.list_bytes(n, 0), self.budgets().memory_bytes());
        if bytes > budget {
            let what = format!("the neighbour lists of {n} points");
            return Err(Error::ParamMemory {
                id: "knn".into(),
                param: "k".into(),
                value: k.to_string(),
                what,
                bytes,
                budget,
            });
        }
        let t0 = Instant::now();
        let (pass, served) = self.build(None, None, &[], needs.clone(), 0..n, numerics, None).await?;
        self.check_reads()?;
        let nb = Arc::new(pass.high.expect("the pass builds the requested kNN"));
        self.keep_knn(&nb, &served);
        let t = t0.elapsed().as_secs_f64();
        let timings = Timings { validate_s: 0.0, resources_s: t, measures_s: 0.0, total_s: t };
        let run = self.report(&[], needs, None, (pass.stats, Vec::new(), None), &served, nb.bytes(), timings, None);
        Ok((nb, run))
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        lows: &[&Points],
        needs: Needs,
        reused: Option<&CachedKnn>,
        (work, low_index, high_rows): (crate::resources::PassStats, Vec<LowIndexReport>, Option<HighRowsReport>),
        served: &Served,
        resource_bytes: usize,
        timings: Timings,
        pairwise: Option<crate::resources::PairwiseReport>,
    ) -> RunReport {
        let n = self.high.n();
        let name = |n: Numerics| if n == Numerics::Fast { "fast" } else { "exact" };
        // Each output with what built it: a reused original-space list keeps the backend and
        // numerics of the call that built it.
        let served_list: Vec<ServedOutput> = ["knn_high", "knn_low", "cross_ranks"]
            .iter()
            .map(|o| {
                let (b, n) = match reused {
                    Some(c) if *o == "knn_high" => (c.backend, c.numerics),
                    _ => (served.backend, served.numerics),
                };
                ServedOutput { output: o.to_string(), backend: b.into(), numerics: name(n).into() }
            })
            .chain(pairwise.is_some().then(|| {
                let (b, p) = if served.pairwise_gpu { ("gpu", "fast") } else { ("cpu", "exact") };
                ServedOutput { output: "pairwise".into(), backend: b.into(), numerics: p.into() }
            }))
            .chain(std::iter::once(ServedOutput {
                output: "measures".into(),
                backend: "cpu".into(),
                numerics: "exact".into(),
            }))
            .collect();
        // The run is exact only when everything in it is: one Fast output makes it Fast.
        let numerics = if served_list.iter().any(|s| s.numerics == "fast") { "fast" } else { "exact" };
        RunReport {
            faithful_version: env!("CARGO_PKG_VERSION"),
            backend_requested: serde_json::to_value(self.opts.backend)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            backend: served.backend.into(),
            numerics: numerics.into(),
            fallback_reason: served.fallback_reason.clone(),
            #[cfg(feature = "gpu")]
            adapter: served.gpu.as_ref().map(|(g, _)| g.report.clone()),
            #[cfg(feature = "gpu")]
            gpu: served
                .gpu
                .as_ref()
                .map(|(g, s)| crate::report::GpuRun { device_start_s: g.start_s, stats: s.clone() }),
            #[cfg(not(feature = "gpu"))]
            adapter: None,
            #[cfg(not(feature = "gpu"))]
            gpu: None,
            threads: rayon::current_num_threads(),
            n,
            dim_high: self.high.dim(),
            dims_low: lows.iter().map(|l| l.dim()).collect(),
            spaces: crate::space::SpacesReport::of(&self.high),
            served: served_list,
            plan: BlockPlan {
                needs,
                knn_high_reused: reused.is_some(),
                block_rows: work.block_rows,
                blocks: work.blocks,
                // The certified rows' group of f32 rows takes the place of the exact rows' tile.
                scratch_bytes_per_worker: n * (8 + 8 + 16)
                    + (n * 8 * crate::reference::ROW_TILE).max(work.certified_group_bytes as usize),
                resource_bytes,
                pairwise,
                high_ranks: served.high_ranks.clone(),
                low_index,
                high_rows,
            },
            work,
            timings,
        }
    }
}

impl Evaluator {
    /// Every read of a given distance matrix succeeded (a file that changed during the run
    /// fails it, never scores a partly read matrix).
    fn check_reads(&self) -> Result<()> {
        self.high.distances().map_or(Ok(()), |d| d.check_reads())
    }
}

/// `high` under `metric` when it can take it (coordinates; a metric computed from them);
/// otherwise unchanged, and the first call says why ([`Evaluator::check_space`]).
fn with_metric(high: Points, metric: Option<Metric>) -> Points {
    match metric {
        Some(m) if m != high.metric() && high.metric_allowed(m).is_ok() => high.apply_metric(m),
        _ => high,
    }
}

/// A kNN graph's lists, as the evaluator's cached original kNN.
fn graph_lists(high: &Points) -> Option<CachedKnn> {
    let g = high.knn_graph()?;
    let (idx, dist) = g.lists();
    let list = Arc::new(Neighbours { k: g.k(), idx: idx.to_vec(), dist: dist.to_vec() });
    // A given graph is the original space's lists as the user holds them: exact by definition.
    Some(CachedKnn { list, backend: "cpu", numerics: Numerics::Exact })
}

/// The one check where scores are produced: a measure's values and local values are matched to
/// the keys it declares by name and put in the declared order ([`Error::MeasureOutput`] for a
/// key missing, undeclared or returned twice: never a value under another key's name, never
/// one dropped), and every value and local value is a finite number, or the run fails with
/// [`Error::NonFiniteScore`] naming the key (never a NaN in a table, a JSON `null` or a local
/// value).
fn finite(r: &Resolved, out: crate::measures::Output) -> Result<crate::measures::Output> {
    let local_keys: Vec<String> = r.def.local_keys().map(String::from).collect();
    let out = crate::measures::Output {
        values: by_key(r, &r.keys(), out.values)?,
        local: by_key(r, &local_keys, out.local)?,
        curves: out.curves,
    };
    let bad =
        |key: &str, value: f64| Error::NonFiniteScore { id: r.def.id.into(), projection: None, key: key.into(), value };
    for (key, v) in &out.values {
        if !v.is_finite() {
            return Err(bad(key, *v));
        }
    }
    for (key, values) in out.local.iter().chain(&out.curves) {
        // A point without a value (`NaN`, `null` in JSON) only where the kind allows it
        // (`partial_mean`, `log_ratio`); infinities never.
        let missing_ok = r.def.local_kind(key).is_some_and(|k| k.allows_missing());
        let bad_value = |v: &f64| !(v.is_finite() || (missing_ok && v.is_nan()));
        if let Some((i, &v)) = values.iter().enumerate().find(|(_, v)| bad_value(v)) {
            return Err(bad(&format!("{key}[{i}]"), v));
        }
    }
    Ok(out)
}

/// `got`, named by the measure, in the order of `declared`: every declared key exactly once and
/// nothing else, or [`Error::MeasureOutput`] naming the measure and the key.
fn by_key<T>(r: &Resolved, declared: &[String], mut got: Vec<(String, T)>) -> Result<Vec<(String, T)>> {
    use crate::error::OutputKeyProblem;
    let err = |key: &str, problem| Error::MeasureOutput {
        id: r.def.id.into(),
        key: key.into(),
        problem,
        keys: declared.join(", "),
    };
    for (i, (key, _)) in got.iter().enumerate() {
        if got[..i].iter().any(|(seen, _)| seen == key) {
            return Err(err(key, OutputKeyProblem::Duplicated));
        }
        if !declared.contains(key) {
            return Err(err(key, OutputKeyProblem::Undeclared));
        }
    }
    let mut ordered = Vec::with_capacity(declared.len());
    for key in declared {
        let at = got.iter().position(|(k, _)| k == key).ok_or_else(|| err(key, OutputKeyProblem::Missing))?;
        ordered.push(got.swap_remove(at));
    }
    Ok(ordered)
}

/// The k_max of the first coranking spec when the row pass can be fused with its pass: other
/// measures need neighbour lists or cross ranks (which the co-ranking pass's sorted rows give
/// too) and no densities (whose extents the row pass finds).
pub(crate) fn fuse_km(resolved: &[Resolved], needs: &Needs, high: &Points) -> Option<usize> {
    let lists = needs.knn_high > 0 || needs.knn_low > 0 || needs.cross > 0 || needs.cross_low > 0;
    let first = resolved.iter().find(|r| r.def.id == "coranking")?;
    // A kNN graph has no rows to sort: its co-ranking and lists come from the graph.
    let rows = high.knn_graph().is_none();
    (lists && rows && needs.density_sigmas.is_empty()).then(|| crate::measures::coranking::k_max(first, high.n()))
}

/// Appends `reason` to a run's fallback reasons ("; "-separated).
#[cfg(feature = "gpu")]
fn add_reason(reasons: &mut Option<String>, reason: String) {
    *reasons = Some(reasons.take().map_or(reason.clone(), |r| format!("{r}; {reason}")));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::OutputKeyProblem;
    use crate::measures::Output;

    /// tnc's output with `values` named as given and both local keys present.
    fn tnc_output(values: &[(&str, f64)]) -> Output {
        values
            .iter()
            .fold(Output::new(), |o, (k, v)| o.value(*k, *v))
            .local("local_trustworthiness", vec![])
            .local("local_continuity", vec![])
    }

    /// The key and problem of the error `finite` gives tnc's `out`.
    fn problem(out: Output) -> (String, OutputKeyProblem) {
        let r = Resolved::new(&Spec::new("tnc")).unwrap();
        match finite(&r, out) {
            Err(Error::MeasureOutput { id, key, problem, .. }) => {
                assert_eq!(id, "tnc");
                (key, problem)
            }
            other => panic!("expected MeasureOutput, got {other:?}"),
        }
    }

    /// A cached original-space list labelled Fast (as a GPU's unrefined list would be; here a
    /// deliberately wrong one, so that any use of it shows) never serves an Exact call: the
    /// Exact call equals a fresh evaluator's run bit for bit and labels everything exact. A
    /// Fast call may reuse it, and its report then says the list was the GPU's, fast.
    #[test]
    fn a_fast_cached_knn_list_never_serves_an_exact_call() {
        let n = 40;
        let coords = |s: u64| (0..n * 3).map(|i| ((i as u64 * s + 7) % 23) as f64 * 0.37).collect::<Vec<_>>();
        let high = Points::from_vec("high", n, 3, coords(5)).unwrap();
        let low = Points::from_vec("low", n, 2, coords(3)[..n * 2].to_vec()).unwrap();
        let specs: Vec<Spec> = ["tnc:k=6", "mrre:k=6", "lcmc:k=6"].iter().map(|s| s.parse().unwrap()).collect();
        let want = Evaluator::new(high.clone(), Options::default()).measure_many(&[&low], None, &specs).unwrap();
        let eval = Evaluator::new(high, Options::default());
        // Every point's "neighbours" are the next points by index: not the exact lists.
        let k = 8;
        let forge = || {
            let idx = (0..n).flat_map(|i| (1..=k).map(move |d| ((i + d) % n) as u32)).collect();
            let list = Neighbours { k, idx, dist: (0..n * k).map(|t| (t % k + 1) as f64).collect() };
            Some(CachedKnn { list: Arc::new(list), backend: "gpu", numerics: Numerics::Fast })
        };
        *eval.knn_high.lock().unwrap() = forge();

        let exact = eval.measure_many_as(Numerics::Exact, &[&low], None, &specs).unwrap();
        assert_eq!(exact.projections[0].scores, want.projections[0].scores);
        assert_eq!(exact.run.numerics, "exact");
        assert!(!exact.run.plan.knn_high_reused);
        assert!(exact.run.served.iter().all(|s| s.numerics == "exact" && s.backend == "cpu"), "{:?}", exact.run.served);
        // The exact list replaced the forged one: a Fast call now reuses an exact list.
        let fast = eval.measure_many_as(Numerics::Fast, &[&low], None, &specs).unwrap();
        assert_eq!(fast.projections[0].scores, want.projections[0].scores);
        assert!(fast.run.plan.knn_high_reused);
        assert_eq!(fast.run.numerics, "exact");

        // A Fast call does reuse a Fast list, and says so.
        *eval.knn_high.lock().unwrap() = forge();
        let fast = eval.measure_many_as(Numerics::Fast, &[&low], None, &specs).unwrap();
        assert!(fast.run.plan.knn_high_reused);
        assert_eq!(fast.run.numerics, "fast");
        let knn_high = fast.run.served.iter().find(|s| s.output == "knn_high").unwrap();
        assert_eq!((knn_high.backend.as_str(), knn_high.numerics.as_str()), ("gpu", "fast"));
        assert_ne!(
            fast.projections[0].scores, want.projections[0].scores,
            "the forged list was not used: the test proves nothing"
        );
    }

    #[test]
    fn values_are_matched_to_the_declared_keys_by_name_and_put_in_their_order() {
        let r = Resolved::new(&Spec::new("tnc")).unwrap();
        let out = Output::new()
            .value("continuity", 0.25)
            .value("trustworthiness", 0.5)
            .local("local_continuity", vec![0.0])
            .local("local_trustworthiness", vec![1.0]);
        let got = finite(&r, out).unwrap();
        assert_eq!(got.values, [("trustworthiness".to_string(), 0.5), ("continuity".to_string(), 0.25)]);
        assert_eq!(
            got.local,
            [("local_trustworthiness".to_string(), vec![1.0]), ("local_continuity".to_string(), vec![0.0])]
        );
    }

    #[test]
    fn a_missing_undeclared_or_duplicated_key_is_a_typed_error_naming_it() {
        use OutputKeyProblem::*;
        let (key, p) = problem(tnc_output(&[("trustworthiness", 0.5)]));
        assert_eq!((key.as_str(), p), ("continuity", Missing));
        let (key, p) = problem(tnc_output(&[("trustworthiness", 0.5), ("continuity", 0.2), ("extra", 0.1)]));
        assert_eq!((key.as_str(), p), ("extra", Undeclared));
        // A value under a misspelt key is never taken for the declared one.
        let (key, p) = problem(tnc_output(&[("trustworthiness", 0.5), ("continuty", 0.2)]));
        assert_eq!((key.as_str(), p), ("continuty", Undeclared));
        let (key, p) = problem(tnc_output(&[("trustworthiness", 0.5), ("trustworthiness", 0.2)]));
        assert_eq!((key.as_str(), p), ("trustworthiness", Duplicated));
        // Local keys are matched the same way.
        let out =
            Output::new().value("trustworthiness", 0.5).value("continuity", 0.2).local("local_continuity", vec![]);
        let (key, p) = problem(out);
        assert_eq!((key.as_str(), p), ("local_trustworthiness", Missing));
        let r = Resolved::new(&Spec::new("tnc")).unwrap();
        let err = finite(&r, tnc_output(&[("trustworthiness", 0.5)])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tnc: output key 'continuity' is missing (its keys: [trustworthiness, continuity]; a bug in faithful, please report it)"
        );
    }

    /// A keyed measure's one key is the one its parameters name: `ivm`'s silhouette value under
    /// `davies_bouldin` is an error, not a davies_bouldin score.
    #[test]
    fn a_keyed_measure_must_return_the_key_its_parameters_name() {
        let r = Resolved::new(&"ivm:measure=davies_bouldin".parse::<Spec>().unwrap()).unwrap();
        let err = finite(&r, Output::new().value("silhouette", 0.5)).unwrap_err();
        assert!(
            matches!(&err, Error::MeasureOutput { id, key, problem: OutputKeyProblem::Undeclared, .. } if id == "ivm" && key == "silhouette"),
            "{err:?}"
        );
        assert_eq!(finite(&r, Output::new().value("davies_bouldin", 0.5)).unwrap().values[0].1, 0.5);
    }

    #[test]
    fn non_finite_values_and_local_values_are_typed_errors() {
        let r = Resolved::new(&Spec::new("tnc")).unwrap();
        let ok = tnc_output(&[("trustworthiness", 0.5), ("continuity", 0.25)]);
        assert_eq!(finite(&r, ok.clone()).unwrap(), ok);
        let err = finite(&r, tnc_output(&[("trustworthiness", 0.5), ("continuity", f64::NAN)]))
            .unwrap_err()
            .on_projection("p");
        assert!(
            matches!(&err, Error::NonFiniteScore { id, key, projection: Some(p), .. } if id == "tnc" && key == "continuity" && p == "p"),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "tnc on p: continuity is not a finite number (NaN); no score is reported");
        let out = Output::new()
            .value("trustworthiness", 0.5)
            .value("continuity", 0.5)
            .local("local_trustworthiness", vec![1.0, f64::INFINITY])
            .local("local_continuity", vec![]);
        let err = finite(&r, out).unwrap_err();
        assert!(
            matches!(&err, Error::NonFiniteScore { key, value, .. } if key == "local_trustworthiness[1]" && *value == f64::INFINITY),
            "{err:?}"
        );
    }
}
