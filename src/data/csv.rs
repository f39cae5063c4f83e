//! Headerless numeric `.csv` readers (comma, semicolon, tab or space separated).

use crate::error::FileProblem;

/// Parses rows of numbers into (n, dim, row-major values); every row must have the same width.
pub fn points(text: &str) -> Result<(usize, usize, Vec<f64>), FileProblem> {
    let mut values = Vec::new();
    let mut dim = None;
    let mut n = 0;
    for (line_no, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let before = values.len();
        for field in fields(line) {
            let v: f64 = field.parse().map_err(|_| FileProblem::Csv {
                line: line_no + 1,
                reason: format!("'{field}' is not a number (the file must be headerless and numeric)"),
            })?;
            values.push(v);
        }
        let width = values.len() - before;
        match dim {
            None => dim = Some(width),
            Some(d) if d != width => {
                return Err(FileProblem::Csv {
                    line: line_no + 1,
                    reason: format!("has {width} values, earlier rows have {d}"),
                });
            }
            _ => {}
        }
        n += 1;
    }
    Ok((n, dim.unwrap_or(0), values))
}

/// Parses one label per line (whole numbers).
pub fn labels(text: &str) -> Result<Vec<i64>, FileProblem> {
    let (n, dim, values) = points(text)?;
    if n > 0 && dim != 1 {
        return Err(FileProblem::Csv { line: 1, reason: format!("labels need one value per line, found {dim}") });
    }
    values.into_iter().enumerate().map(|(i, v)| {
        super::npy::whole(v).map_err(|_| FileProblem::Csv { line: i + 1, reason: format!("label {v} is not an integer") })
    }).collect()
}

fn fields(line: &str) -> impl Iterator<Item = &str> {
    line.split([',', ';', '\t', ' ']).map(str::trim).filter(|f| !f.is_empty())
}
