//! Typed errors: every bad input is reported, never a panic and never a NaN score.

use std::path::PathBuf;

use crate::quote::escaped;

/// Result with faithful's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, from input validation to measure preconditions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{name}: has no points")]
    Empty { name: String },
    #[error("{name}: needs at least 2 points, got {n}")]
    TooFewPoints { name: String, n: usize },
    #[error("{name}: needs at least one feature (column)")]
    NoFeatures { name: String },
    #[error("{name}: non-finite value {value} at row {row}, column {col}")]
    NonFinite { name: String, row: usize, col: usize, value: f64 },
    #[error(
        "{name}: value {value:e} at row {row}, column {col} is too large (|x| must be below 1e150 so that squared distances stay finite)"
    )]
    TooLarge { name: String, row: usize, col: usize, value: f64 },
    #[error("{name}: has {got} rows but the original space has {expected}")]
    RowMismatch { name: String, expected: usize, got: usize },
    #[error("labels: has {got} entries but the data has {expected} points")]
    LabelLength { expected: usize, got: usize },
    #[error("{id}: needs labels (--labels)")]
    LabelsRequired { id: String },
    #[error("{id}: needs at least {need} distinct classes, the labels have {got}")]
    TooFewClasses { id: String, need: usize, got: usize },
    #[error("{id}: k={k} is out of range: need {rule} (n={n})")]
    KOutOfRange { id: String, k: i64, n: usize, rule: &'static str },
    #[error("unknown measure id '{id}' (known: {known})")]
    UnknownMeasure { id: String, known: String },
    #[error("measure '{id}' is a ZADU measure that this version of faithful does not implement yet")]
    NotImplemented { id: String },
    #[error("{id}: unknown parameter '{param}' (accepted: {accepted})")]
    UnknownParam { id: String, param: String, accepted: String },
    #[error("{id}: parameter {param}={value}: {reason}")]
    BadParam { id: String, param: String, value: String, reason: String },
    #[error("malformed spec '{spec}': {reason}")]
    BadSpec { spec: String, reason: String },
    #[error("{id}{}: undefined because {reason}", on(projection))]
    Undefined { id: String, projection: Option<String>, reason: String },
    #[error("{0}")]
    Budget(String),
    #[error("interrupted; temporary files were removed")]
    Interrupted,
    #[error("temporary workspace {}: {source}", path.display())]
    Workspace { path: PathBuf, source: std::io::Error },
    #[error("{}", file_message(path, problem))]
    File { path: PathBuf, problem: FileProblem },
    /// More worker threads than [`crate::MAX_THREADS`].
    #[error("invalid option: --threads {threads} is above the limit of {limit} (0 or no --threads: all cores)")]
    TooManyThreads { threads: usize, limit: usize },
    /// The operating system refused the worker threads.
    #[error("invalid option: cannot start {threads} threads: {reason}")]
    ThreadPool { threads: usize, reason: String },
    /// An evaluation was asked for no projection at all.
    #[error("invalid option: no projection to evaluate")]
    NoProjection,
    /// Labels were given without the data they label (the command line's `--labels` without
    /// `--high` and `--low`).
    #[error("invalid option: --labels needs --high and --low")]
    LabelsWithoutData,
    #[error("GPU backend unavailable: {0}")]
    Gpu(#[from] GpuError),
    // Output (issue 11): a result that could not be written (a full disk, a missing folder, a
    // closed or full standard output) is a write failure, not a read error and not a panic.
    #[error("cannot write {}: {source}", escaped(target))]
    Write { target: String, source: std::io::Error },
    // Hostile parameters and numerics (issue 11): memory sized by a parameter, scores that
    // are not finite numbers.
    #[error(
        "{id}: parameter {param}={value} needs {bytes} bytes for {what}, above the memory budget of {budget} bytes (lower {param}, or raise --memory-budget)"
    )]
    ParamMemory { id: String, param: String, value: String, what: String, bytes: u64, budget: u64 },
    /// A measure returned another number of values than it has keys: a bug in faithful,
    /// reported instead of pairing values with the wrong keys.
    #[error("{id}: returned {got} values for its keys [{keys}] (a bug in faithful; please report it)")]
    MeasureOutput { id: String, keys: String, got: usize },
    #[error("{id}{}: {key} is not a finite number ({value}); no score is reported", on(projection))]
    NonFiniteScore { id: String, projection: Option<String>, key: String, value: f64 },
}

/// Why the GPU could not serve.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error("the GPU device could not be created: {0}")]
    Device(String),
    #[error("GPU error during {stage}: {message}")]
    Runtime { stage: &'static str, message: String },
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
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a valid .npy file: {0}")]
    Npy(String),
    #[error("unsupported .npy element type {0} (points: float64 or float32; labels: integers)")]
    NpyType(String),
    #[error("expected a {expected}-D array, got {got}-D")]
    Ndim { expected: usize, got: usize },
    #[error("line {line}: {reason}")]
    Csv { line: usize, reason: String },
    #[error("not UTF-8 text")]
    NotText,
    #[error("unknown file extension (expected .npy or .csv)")]
    Extension,
    #[error("{0}")]
    Data(Box<Error>),
    // Hostile files (issue 11): only regular files are read, never past the size they had when
    // opened, and never into an allocation that memory cannot hold.
    #[error("cannot read: {0} is not a regular file")]
    NotRegular(&'static str),
    #[error("the file changed while being read (its size was {0} bytes)")]
    Changed(u64),
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
