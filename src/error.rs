//! Typed errors: every bad input is reported, never a panic and never a NaN score.

use std::path::PathBuf;

use crate::quote::{escaped, quoted};

/// Result with faithful's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, from input validation to measure preconditions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The data has no rows.
    #[error("{name}: has no points")]
    Empty {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
    },
    /// The data has fewer than 2 points.
    #[error("{name}: needs at least 2 points, got {n}")]
    TooFewPoints {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
        /// The points it has.
        n: usize,
    },
    /// The data has no columns.
    #[error("{name}: needs at least one feature (column)")]
    NoFeatures {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
    },
    /// A coordinate is NaN or infinite.
    #[error("{name}: non-finite value {value} at row {row}, column {col}")]
    NonFinite {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
        /// The value.
        value: f64,
    },
    /// A coordinate is too large for squared distances to stay finite.
    #[error(
        "{name}: value {value:e} at row {row}, column {col} is too large (|x| must be below 1e150 so that squared distances stay finite)"
    )]
    TooLarge {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
        /// The value.
        value: f64,
    },
    /// A projection has another number of rows than the original space.
    #[error("{name}: has {got} rows but the original space has {expected}")]
    RowMismatch {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
        /// The original space's rows.
        expected: usize,
        /// The projection's rows.
        got: usize,
    },
    /// The labels have another length than the data.
    #[error("labels: has {got} entries but the data has {expected} points")]
    LabelLength {
        /// The number of points.
        expected: usize,
        /// The number of labels.
        got: usize,
    },
    /// A measure needs labels and none were given.
    #[error("{id}: needs labels (--labels)")]
    LabelsRequired {
        /// The measure's id.
        id: String,
    },
    /// A measure needs more distinct label classes.
    #[error("{id}: needs at least {need} distinct classes, the labels have {got}")]
    TooFewClasses {
        /// The measure's id.
        id: String,
        /// The classes needed.
        need: usize,
        /// The distinct classes in the labels.
        got: usize,
    },
    /// A `k` outside the range the measure accepts for this many points.
    #[error("{id}: k={k} is out of range: need {rule} (n={n})")]
    KOutOfRange {
        /// The measure's id.
        id: String,
        /// The `k` given.
        k: i64,
        /// The number of points.
        n: usize,
        /// The range `k` must be in.
        rule: &'static str,
    },
    /// A spec names no known measure.
    #[error("unknown measure id {} (known: {known})", quoted(id))]
    UnknownMeasure {
        /// The measure's id.
        id: String,
        /// The ids faithful knows, comma-separated.
        known: String,
    },
    /// A spec names a ZADU measure that faithful does not implement yet.
    #[error("measure '{id}' is a ZADU measure that this version of faithful does not implement yet")]
    NotImplemented {
        /// The measure's id.
        id: String,
    },
    /// A spec names a parameter the measure does not have.
    #[error("{id}: unknown parameter {} (accepted: {accepted})", quoted(param))]
    UnknownParam {
        /// The measure's id.
        id: String,
        /// The parameter's name.
        param: String,
        /// The parameters the measure has, comma-separated.
        accepted: String,
    },
    /// A spec leaves out a parameter that has no default.
    #[error("{id}: parameter {param} is required (it has no default), e.g. {id}:{param}={example}")]
    MissingParam {
        /// The measure's id.
        id: String,
        /// The parameter's name.
        param: String,
        /// A value to show in the message.
        example: String,
    },
    /// A parameter value the measure does not accept.
    #[error("{id}: parameter {param}={}: {reason}", escaped(value))]
    BadParam {
        /// The measure's id.
        id: String,
        /// The parameter's name.
        param: String,
        /// The value as given.
        value: String,
        /// Why.
        reason: String,
    },
    /// A spec that does not parse (`id` or `id:name=value,...`).
    #[error("malformed spec {}: {reason}", quoted(spec))]
    BadSpec {
        /// The spec as written.
        spec: String,
        /// Why.
        reason: String,
    },
    /// A measure is undefined on this data (e.g. a constant projection).
    #[error("{id}{}: undefined because {reason}", on(projection))]
    Undefined {
        /// The measure's id.
        id: String,
        /// The projection's name, when known.
        projection: Option<String>,
        /// Why.
        reason: String,
    },
    // Budgets of the pair order (srho, nm_stress): checked before any work starts, each error
    // naming the budget, what it must hold and the bytes needed. A parameter that sizes memory
    // is [`Error::ParamMemory`].
    /// The memory budget holds neither the pair order in memory nor an external sort's buffers.
    #[error(
        "memory budget of {budget} bytes is too small: the pair order of {pairs} pairs needs {in_memory} bytes in memory, or at least {external_min} bytes for an external sort"
    )]
    PairOrderMemory {
        /// The memory budget in bytes.
        budget: u64,
        /// The pairs to order, n(n − 1)/2.
        pairs: u64,
        /// Bytes the in-memory pair order needs.
        in_memory: u64,
        /// The least memory budget the external sort accepts.
        external_min: u64,
    },
    /// The temporary-space budget cannot hold the external sort of the pair order.
    #[error(
        "temporary-space budget of {budget} bytes is too small: sorting {pairs} pairs externally under a memory budget of {memory_budget} bytes needs up to {needed} bytes of temporary space"
    )]
    PairOrderTemp {
        /// The temporary-space budget in bytes.
        budget: u64,
        /// The pairs to order, n(n − 1)/2.
        pairs: u64,
        /// The memory budget the sort runs under, in bytes.
        memory_budget: u64,
        /// The most temporary space the sort can take, in bytes.
        needed: u64,
    },
    /// In a browser (no file system, so no external sort), the pair order does not fit the
    /// memory limit.
    #[error(
        "the pair order of {n} points ({pairs} pairs) needs {needed} bytes in memory, above the browser's limit of {limit} bytes; a browser has no file system for an external sort (use the command line for this size)"
    )]
    PairOrderBrowser {
        /// The points.
        n: usize,
        /// The pairs to order, n(n − 1)/2.
        pairs: u64,
        /// Bytes the in-memory pair order needs.
        needed: u64,
        /// The memory limit in bytes.
        limit: u64,
    },
    /// The run was stopped through its [`crate::Cancel`] flag.
    #[error("interrupted; temporary files were removed")]
    Interrupted,
    /// The external sort's temporary workspace failed.
    #[error("temporary workspace {}: {source}", path.display())]
    Workspace {
        /// The workspace's directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An input file could not be read or holds invalid data.
    #[error("{}", file_message(path, problem))]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: FileProblem,
    },
    /// More worker threads than [`crate::MAX_THREADS`].
    #[error("invalid option: --threads {threads} is above the limit of {limit} (0 or no --threads: all cores)")]
    TooManyThreads {
        /// The threads asked for.
        threads: usize,
        /// The most threads allowed.
        limit: usize,
    },
    /// The operating system refused the worker threads.
    #[error("invalid option: cannot start {threads} threads: {reason}")]
    ThreadPool {
        /// The threads asked for.
        threads: usize,
        /// Why.
        reason: String,
    },
    /// An evaluation was asked for no projection at all.
    #[error("invalid option: no projection to evaluate")]
    NoProjection,
    /// Labels were given without the data they label (the command line's `--labels` without
    /// `--high` and `--low`).
    #[error("invalid option: --labels needs --high and --low")]
    LabelsWithoutData,
    /// The GPU was asked for ([`crate::BackendChoice::Gpu`]) and cannot serve.
    #[error("GPU backend unavailable: {0}")]
    Gpu(#[from] GpuError),
    // Output (issue 11): a result that could not be written (a full disk, a missing folder, a
    // closed or full standard output) is a write failure, not a read error and not a panic.
    /// A result could not be written.
    #[error("cannot write {}: {source}", escaped(target))]
    Write {
        /// Where the result was to go.
        target: String,
        /// The I/O error.
        source: std::io::Error,
    },
    // Hostile parameters and numerics (issue 11): memory sized by a parameter, scores that
    // are not finite numbers.
    /// The points' working copy (coordinates by column, beside the rows) does not fit in memory:
    /// refused, never an abort.
    #[error("{name}: cannot hold its {bytes}-byte working copy in memory")]
    PointsMemory {
        /// The data's name (its file name, or the name given to [`crate::Points`]).
        name: String,
        /// Bytes the copy needs.
        bytes: u64,
    },
    /// A parameter sizes more memory than the memory budget allows.
    #[error(
        "{id}: parameter {param}={value} needs {bytes} bytes for {what}, above the memory budget of {budget} bytes (lower {param}, or raise --memory-budget)"
    )]
    ParamMemory {
        /// The measure's id.
        id: String,
        /// The parameter's name.
        param: String,
        /// The value as given.
        value: String,
        /// What the memory would hold.
        what: String,
        /// Bytes needed.
        bytes: u64,
        /// The memory budget in bytes.
        budget: u64,
    },
    /// A measure returned an output key it does not declare, missed one it declares, or
    /// returned one twice: a bug in faithful, reported instead of a value under another key's
    /// name.
    #[error("{id}: output key '{key}' {problem} (its keys: [{keys}]; a bug in faithful, please report it)")]
    MeasureOutput {
        /// The measure's id.
        id: String,
        /// The key at fault.
        key: String,
        /// What is wrong with it.
        problem: OutputKeyProblem,
        /// The keys the measure declares (values or local values), comma-separated.
        keys: String,
    },
    /// A measure produced a value that is not a finite number.
    #[error("{id}{}: {key} is not a finite number ({value}); no score is reported", on(projection))]
    NonFiniteScore {
        /// The measure's id.
        id: String,
        /// The projection's name, when known.
        projection: Option<String>,
        /// The output key (with `[i]` for a local value).
        key: String,
        /// The value (NaN or infinite).
        value: f64,
    },
    /// A measure asked of a row shard whose resources do not decompose by rows (issue 16).
    #[error(
        "{id}: cannot be computed in row shards (it needs all pairs or all rows at once); shardable measures: {shardable}"
    )]
    NotShardable {
        /// The measure's id.
        id: String,
        /// The measures that can be sharded, comma-separated.
        shardable: &'static str,
    },
    /// A row range that is not a block of the shard plan (see `faithful::shard`).
    #[error("rows {start}:{end} are not a block of the shard plan for n={n}: {reason}")]
    BadRows {
        /// First row.
        start: usize,
        /// One past the last row.
        end: usize,
        /// Points.
        n: usize,
        /// Why, and the blocks that would do.
        reason: String,
    },
    /// A shard's partial result that cannot be read or folded.
    #[error("{what}: {reason}")]
    BadPartial {
        /// The partial (its file, or its position in the list).
        what: String,
        /// What is wrong.
        reason: String,
    },
    // The original space as users hold it (issue 25): metrics, distance matrices, kNN graphs.
    /// A metric name or parameter that faithful does not accept.
    #[error("invalid metric {}: {reason}", quoted(metric))]
    BadMetric {
        /// The metric as given.
        metric: String,
        /// Why.
        reason: String,
    },
    /// A point on which the metric is undefined: a zero vector under cosine, a constant row
    /// under correlation (scipy gives NaN), or a norm outside the range where it is computed.
    #[error("{name}: row {row}: {reason}")]
    MetricUndefined {
        /// The data's name.
        name: String,
        /// The metric.
        metric: String,
        /// The row (0-based).
        row: usize,
        /// Why.
        reason: String,
    },
    /// A distance matrix that is not one (shape, a non-finite or negative entry, a nonzero
    /// diagonal, an asymmetric pair): the first offending entry is named.
    #[error("{name}: not a distance matrix: {reason}")]
    BadDistances {
        /// The matrix's name (its file name).
        name: String,
        /// Why, naming the entry.
        reason: String,
    },
    /// A kNN graph that is not one (row count, an index out of range, a self loop, a
    /// duplicate, a non-finite or negative distance): the first offending entry is named.
    #[error("{name}: not a kNN graph: {reason}")]
    BadGraph {
        /// The graph's name (its file name).
        name: String,
        /// Why, naming the row and entry.
        reason: String,
    },
    /// A measure (or parameter) needs an original-space input that this run was not given.
    #[error("{id}: needs {need}; the original space was given as {given}")]
    NeedsInput {
        /// The measure's id.
        id: String,
        /// What it needs, and which inputs provide it.
        need: String,
        /// How the original space was given.
        given: String,
    },
}

/// What is wrong with a measure's output key ([`Error::MeasureOutput`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputKeyProblem {
    /// A declared key the measure did not return.
    Missing,
    /// A key the measure returned but does not declare.
    Undeclared,
    /// A key the measure returned more than once.
    Duplicated,
}

impl std::fmt::Display for OutputKeyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputKeyProblem::Missing => "is missing",
            OutputKeyProblem::Undeclared => "is not one it declares",
            OutputKeyProblem::Duplicated => "is returned twice",
        })
    }
}

/// Why the GPU could not serve.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter (or none matching the name asked for).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter would not create a device.
    #[error("the GPU device could not be created: {0}")]
    Device(String),
    /// A dispatch or readback failed (the run retries with smaller blocks, then uses the CPU).
    #[error("GPU error during {stage}: {message}")]
    Runtime {
        /// The GPU stage that failed.
        stage: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// The adapter chosen lacks what faithful's kernels need (see
    /// [`crate::AdapterInfo::unusable`]).
    #[error("adapter '{adapter}' cannot run faithful's kernels: {reason}")]
    Unsupported {
        /// The adapter's name.
        adapter: String,
        /// What it lacks.
        reason: String,
    },
    /// The data does not fit the adapter's buffer limits.
    #[error("the data does not fit the adapter's limits: {0}")]
    Limits(String),
    /// The data or dimension is outside the domain where the f32 bound is proven
    /// (docs/exactness.md, "The certified domain"); the CPU reference serves it.
    #[error("outside the GPU's certified domain: {0}")]
    Domain(String),
    /// This build has no GPU backend: the crate's `gpu` feature is off.
    #[error("this build of faithful has no GPU backend (the `gpu` feature is off)")]
    NotBuilt,
}

/// What is wrong with an input file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileProblem {
    /// The operating system's error.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// A malformed .npy header or body.
    #[error("not a valid .npy file: {0}")]
    Npy(String),
    /// A malformed .npz archive (a SciPy sparse matrix's members, or a member's .npy).
    #[error("not a valid .npz file: {0}")]
    Npz(String),
    /// A well-formed array holding a value its use cannot take (a label or index that is not
    /// an integer), named by its position.
    #[error("{0}")]
    Element(String),
    /// A .npy element type faithful does not read.
    #[error("unsupported .npy element type {0} (points: float64 or float32; labels: integers)")]
    NpyType(String),
    /// An array of the wrong number of dimensions (points: 2, labels: 1).
    #[error("expected a {expected}-D array, got {got}-D")]
    Ndim {
        /// The dimensions expected.
        expected: usize,
        /// The dimensions found.
        got: usize,
    },
    /// A malformed CSV line.
    #[error("line {line}: {reason}")]
    Csv {
        /// The line number (1-based).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The file is not UTF-8 text (CSV).
    #[error("not UTF-8 text")]
    NotText,
    /// Neither `.npy` nor `.csv`.
    #[error("unknown file extension (expected .npy or .csv)")]
    Extension,
    /// The data read is invalid (e.g. a non-finite value).
    #[error("{0}")]
    Data(Box<Error>),
    // Hostile files (issue 11): only regular files are read, never past the size they had when
    // opened, and never into an allocation that memory cannot hold.
    /// A directory, device, FIFO or socket (what it is).
    #[error("cannot read: {0} is not a regular file")]
    NotRegular(&'static str),
    /// The file changed size while being read (its size when opened).
    #[error("the file changed while being read (its size was {0} bytes)")]
    Changed(u64),
    /// The data would not fit in memory (the bytes it needs).
    #[error("cannot hold it in memory ({0} bytes)")]
    OutOfMemory(u64),
}

impl Error {
    /// Wraps this error as a problem with the file at `path`.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Error {
        Error::File { path: path.into(), problem: FileProblem::Data(Box::new(self)) }
    }

    /// Names the projection on which a measure was undefined.
    pub fn on_projection(self, name: &str) -> Error {
        match self {
            Error::Undefined { id, projection: None, reason } => {
                Error::Undefined { id, projection: Some(name.into()), reason }
            }
            Error::NonFiniteScore { id, projection: None, key, value } => {
                Error::NonFiniteScore { id, projection: Some(name.into()), key, value }
            }
            other => other,
        }
    }
}

fn on(projection: &Option<String>) -> String {
    projection.as_ref().map(|p| format!(" on {p}")).unwrap_or_default()
}

/// `path: problem`; a validation error already names the data, so it replaces the path prefix.
fn file_message(path: &std::path::Path, problem: &FileProblem) -> String {
    match problem {
        FileProblem::Data(inner) => {
            let text = inner.to_string();
            let shown = escaped(&path.display().to_string());
            let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            let rest = text.strip_prefix(&format!("{name}: ")).unwrap_or(&text);
            format!("{shown}: {}", escaped(rest))
        }
        other => format!("{}: {other}", escaped(&path.display().to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids, parameter names, values and specs come from the user's text (a spec, a partial's
    /// JSON): in a message they are escaped and cut, so that it is always one short line (a DEL
    /// in a partial's measure id, found by the shard fuzz test, was printed raw).
    #[test]
    fn user_text_in_spec_errors_is_escaped() {
        let odd = "t\u{7f}c\nx\u{1b}[31m".repeat(20);
        let errors = [
            Error::UnknownMeasure { id: odd.clone(), known: "tnc".into() },
            Error::UnknownParam { id: "tnc".into(), param: odd.clone(), accepted: "k".into() },
            Error::BadParam {
                id: "tnc".into(),
                param: "k".into(),
                value: odd.clone(),
                reason: "not an integer".into(),
            },
            Error::BadSpec { spec: odd.clone(), reason: "empty parameter".into() },
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(!msg.chars().any(char::is_control), "{msg:?}");
            assert!(msg.contains("\\u{7f}") && msg.contains("\\n"), "{msg:?}");
            assert!(msg.chars().count() < 600, "{msg}");
        }
        let plain = Error::UnknownMeasure { id: "tcn".into(), known: "tnc".into() }.to_string();
        assert_eq!(plain, "unknown measure id 'tcn' (known: tnc)");
    }
}
