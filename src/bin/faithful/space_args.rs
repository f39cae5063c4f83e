//! The original space as the user holds it: `--metric`/`--minkowski-p` for coordinates,
//! `--high-distances` for a distance matrix, `--high-knn` (SciPy CSR `.npz`) or
//! `--high-knn-indices`/`--high-knn-distances` for a kNN graph.

use std::path::{Path, PathBuf};

use faithful::{Error, Labels, Metric, Points, Result, data, example};

/// `--metric` and `--minkowski-p`: the same on every command.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct MetricArgs {
    /// The original space's metric, scipy's cdist(X, X, metric) bit for bit: euclidean
    /// (default), sqeuclidean, cosine, correlation, cityblock, chebyshev, minkowski (with
    /// --minkowski-p). Projections are Euclidean.
    #[arg(long, value_name = "METRIC")]
    pub metric: Option<String>,
    /// Minkowski's p for --metric minkowski: a number ≥ 1, or inf (default 2).
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = minkowski_p)]
    pub minkowski_p: Option<f64>,
}

/// `--minkowski-p`'s text as a number: a finite value too large for f64 (`1e400`) is refused
/// rather than read as inf, which only `inf` asks for. The range (≥ 1) is `Metric::minkowski`'s.
fn minkowski_p(text: &str) -> std::result::Result<f64, String> {
    let p: f64 = text.trim().parse().map_err(|_| format!("'{text}' is not a number"))?;
    let named_inf =
        matches!(text.trim().trim_start_matches(['+', '-']).to_ascii_lowercase().as_str(), "inf" | "infinity");
    if p.is_infinite() && !named_inf {
        return Err(format!("'{text}' is too large for a 64-bit float (write inf for the chebyshev limit)"));
    }
    Ok(p)
}

impl MetricArgs {
    /// The metric asked for, if any.
    pub fn metric(&self) -> Result<Option<Metric>> {
        let m = self.metric.as_deref().map(str::parse::<Metric>).transpose()?;
        match (m, self.minkowski_p) {
            (Some(Metric::Minkowski(_)), Some(p)) => Ok(Some(Metric::minkowski(p)?)),
            (_, Some(p)) => Err(Error::BadMetric {
                metric: m.map_or("euclidean".into(), |m| m.to_string()),
                reason: format!("--minkowski-p {p} needs --metric minkowski"),
            }),
            (m, None) => Ok(m),
        }
    }

    /// `points` under the metric asked for (the file named in a metric's error).
    pub fn apply(&self, points: Points, path: &Path) -> Result<Points> {
        match self.metric()? {
            Some(m) if m != Metric::Euclidean => points.with_metric(m).map_err(|e| e.in_file(path)),
            _ => Ok(points),
        }
    }
}

/// The original space's other inputs (one of them, or `--high`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct HighInputArgs {
    /// The original space as its n×n distance matrix (.npy float64/float32): finite,
    /// non-negative, zero diagonal, exactly symmetric; read in row blocks, never held whole.
    #[arg(long, value_name = "PATH", group = "high_input", conflicts_with = "metric")]
    pub high_distances: Option<PathBuf>,
    /// The original space as its kNN graph: a SciPy CSR matrix (.npz, scipy.sparse.save_npz of
    /// scanpy's .obsp['distances'] or kneighbors_graph(mode='distance')). Only the measures
    /// that need each point's k original neighbours run from it.
    #[arg(long, value_name = "PATH", group = "high_input", conflicts_with = "metric")]
    pub high_knn: Option<PathBuf>,
    /// The original space as its kNN graph: n×k neighbour indices (.npy integers, no self
    /// column), with --high-knn-distances.
    #[arg(long, value_name = "PATH", group = "high_input", requires = "high_knn_distances", conflicts_with = "metric")]
    pub high_knn_indices: Option<PathBuf>,
    /// The n×k distances of --high-knn-indices (.npy float64/float32).
    #[arg(long, value_name = "PATH", requires = "high_knn_indices")]
    pub high_knn_distances: Option<PathBuf>,
}

impl HighInputArgs {
    /// The files given, with their flags (without the leading `--`).
    pub fn files(&self) -> Vec<(&'static str, &Path)> {
        [
            ("high-distances", &self.high_distances),
            ("high-knn", &self.high_knn),
            ("high-knn-indices", &self.high_knn_indices),
            ("high-knn-distances", &self.high_knn_distances),
        ]
        .into_iter()
        .filter_map(|(flag, p)| p.as_deref().map(|p| (flag, p)))
        .collect()
    }

    /// The original space from whichever of these inputs was given; `None` when none was.
    pub fn read(&self) -> Result<Option<(Points, PathBuf)>> {
        if let Some(p) = &self.high_distances {
            return Ok(Some((data::read_distances(p)?, p.clone())));
        }
        if let Some(p) = &self.high_knn {
            return Ok(Some((data::read_knn_npz(p)?, p.clone())));
        }
        if let (Some(i), Some(d)) = (&self.high_knn_indices, &self.high_knn_distances) {
            return Ok(Some((data::read_knn_arrays(i, d)?, i.clone())));
        }
        Ok(None)
    }
}

/// A projection of the original space's `n` points: a row count that differs names the file
/// by its path as given (the library knows only its name).
pub fn read_low(path: &Path, n: usize) -> Result<Points> {
    let low = data::read_points(path)?;
    if low.n() != n {
        return Err(Error::RowMismatch { name: low.name().into(), expected: n, got: low.n() }.in_file(path));
    }
    Ok(low)
}

/// Refuses, before any file's data is read, projections and labels whose headers declare
/// another row count than the original space's (a 50-row projection of a 12 GB distance
/// matrix at once, not after the matrix is scanned). Files without a header (CSV) are
/// compared when read.
pub fn rows_agree(high: Option<&Path>, inputs: &HighInputArgs, lows: &[PathBuf], labels: Option<&Path>) -> Result<()> {
    let high =
        high.or(inputs.high_distances.as_deref()).or(inputs.high_knn.as_deref()).or(inputs.high_knn_indices.as_deref());
    // Only shapes the full read would accept are compared (a 1-D "matrix" is refused as such
    // when read, not as a row count).
    let Some(n) = high.and_then(data::declared_shape).and_then(|s| match s[..] {
        [n, _] => Some(n),
        _ => None,
    }) else {
        return Ok(());
    };
    for low in lows {
        if let Some([got, _]) = data::declared_shape(low).as_deref()
            && *got != n
        {
            let name = low.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            return Err(Error::RowMismatch { name, expected: n, got: *got }.in_file(low));
        }
    }
    if let Some(path) = labels
        && let Some([got]) = data::declared_shape(path).as_deref()
        && *got != n
    {
        return Err(Error::LabelLength { expected: n, got: *got }.in_file(path));
    }
    Ok(())
}

/// The original space: `--high` under the metric, or one of the other inputs.
pub fn read_high(
    high: Option<&Path>,
    inputs: &HighInputArgs,
    metric: &MetricArgs,
) -> Result<Option<(Points, PathBuf)>> {
    if let Some(p) = high {
        let points = data::read_points(p)?;
        return Ok(Some((metric.apply(points, p)?, p.to_path_buf())));
    }
    metric.metric()?;
    inputs.read()
}

/// Every input file of a scoring command, with its flag (without the leading `--`): the
/// original space's files, the projections and the labels.
pub fn input_files<'a>(
    high: Option<&'a Path>,
    inputs: &'a HighInputArgs,
    lows: &'a [PathBuf],
    labels: Option<&'a Path>,
) -> Vec<(&'static str, &'a Path)> {
    let mut out: Vec<(&'static str, &Path)> = high.map(|p| ("high", p)).into_iter().collect();
    out.extend(inputs.files());
    out.extend(lows.iter().map(|p| ("low", p.as_path())));
    out.extend(labels.map(|p| ("labels", p)));
    out
}

/// The inputs of `measure`, `views` and `report`: the original space (`--high` under the
/// metric, or one of the other inputs), the projections and the labels; the bundled digits
/// example (its PCA and random projections, with labels, its original space under the metric)
/// when no files are given.
#[derive(clap::Args)]
pub struct InputArgs {
    /// Original space, n×D (.npy float64/float32 or headerless .csv). Default: the bundled digits.
    #[arg(long, requires = "low", group = "high_input")]
    high: Option<PathBuf>,
    /// A projection, n×d (the report's views draw its first two columns); repeat for several.
    #[arg(long, requires = "high_input")]
    low: Vec<PathBuf>,
    #[command(flatten)]
    metric: MetricArgs,
    #[command(flatten)]
    inputs: HighInputArgs,
    /// One integer label per point (.npy or .csv).
    #[arg(long)]
    labels: Option<PathBuf>,
}

impl InputArgs {
    /// Every input file given, with its flag (without the leading `--`).
    pub fn files(&self) -> Vec<(&'static str, &Path)> {
        input_files(self.high.as_deref(), &self.inputs, &self.low, self.labels.as_deref())
    }

    /// The original space, projections and labels from the files, or the bundled example.
    pub fn read(&self) -> Result<(Points, Vec<Points>, Option<Labels>)> {
        rows_agree(self.high.as_deref(), &self.inputs, &self.low, self.labels.as_deref())?;
        match read_high(self.high.as_deref(), &self.inputs, &self.metric)? {
            Some((high, _)) => {
                let lows = self.low.iter().map(|p| read_low(p, high.n())).collect::<Result<Vec<Points>>>()?;
                let labels = match &self.labels {
                    Some(path) => {
                        let l = data::read_labels(path)?;
                        l.check_len(high.n()).map_err(|e| e.in_file(path))?;
                        Some(l)
                    }
                    None => None,
                };
                Ok((high, lows, labels))
            }
            None if self.labels.is_some() => Err(Error::LabelsWithoutData),
            None => {
                let ex = example::digits();
                let high = self.metric.apply(ex.high, Path::new("the bundled digits"))?;
                Ok((high, ex.projections, Some(ex.labels)))
            }
        }
    }
}
