//! Headerless numeric `.csv` readers. One separator per file, taken from the first data line:
//! `,` or `;` or tab (spaces around fields allowed), else runs of spaces. A line that mixes
//! separators, an empty field, a header row or a byte-order mark is an error naming the line.
//! Blank lines and lines starting with `#` are skipped.

use crate::error::FileProblem;
use crate::quote::quoted;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sep {
    Comma,
    Semicolon,
    Tab,
    Spaces,
}

/// Characters that separate fields in some file; in one file only one of them may.
const SEPARATORS: [char; 4] = [',', ';', '\t', ' '];

impl Sep {
    /// The separator of the file whose first data line is `line`.
    fn detect(line: &str, line_no: usize) -> Result<Sep, FileProblem> {
        match (line.contains(','), line.contains(';')) {
            (true, true) => Err(csv(
                line_no,
                "mixes ',' and ';' (a decimal comma? numbers need '.' as the decimal mark, and a file one separator)"
                    .into(),
            )),
            (true, false) => Ok(Sep::Comma),
            (false, true) => Ok(Sep::Semicolon),
            _ if line.contains('\t') => Ok(Sep::Tab),
            _ => Ok(Sep::Spaces),
        }
    }
    fn char(self) -> char {
        match self {
            Sep::Comma => ',',
            Sep::Semicolon => ';',
            Sep::Tab => '\t',
            Sep::Spaces => ' ',
        }
    }
    fn name(c: char) -> &'static str {
        match c {
            ',' => "','",
            ';' => "';'",
            '\t' => "tab",
            _ => "space",
        }
    }
}

fn csv(line: usize, reason: String) -> FileProblem {
    FileProblem::Csv { line, reason }
}

/// The file's data lines, each split into fields: `row(line number, fields)`.
fn each_row(text: &str, mut row: impl FnMut(usize, &[&str]) -> Result<(), FileProblem>) -> Result<(), FileProblem> {
    if text.starts_with('\u{feff}') {
        return Err(csv(1, "starts with a byte-order mark (U+FEFF); save the file as UTF-8 without BOM".into()));
    }
    let mut sep = None;
    let mut fields = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (sep, first) = match sep {
            Some(s) => s,
            None => *sep.insert((Sep::detect(trimmed, line_no)?, line_no)),
        };
        // A tab file keeps its leading and trailing tabs: they delimit empty fields.
        let line = if sep == Sep::Tab { line.trim_matches(not_tab_space) } else { trimmed };
        split(line, sep, (line_no, first), &mut fields)?;
        row(line_no, &fields)?;
    }
    Ok(())
}

/// White space around fields (Unicode's, as `str::trim`), except a tab in a tab file.
fn not_tab_space(c: char) -> bool {
    c.is_whitespace() && c != '\t'
}

/// Splits `line` at `sep` into `fields`; an empty field or another separator is an error.
/// `lines` is this line's number and that of the first data line, which set the separator.
fn split<'a>(line: &'a str, sep: Sep, lines: (usize, usize), fields: &mut Vec<&'a str>) -> Result<(), FileProblem> {
    let (line_no, first) = lines;
    fields.clear();
    let c = sep.char();
    for (col, field) in line.split(c).enumerate() {
        let field = if sep == Sep::Tab { field.trim_matches(not_tab_space) } else { field.trim() };
        if field.is_empty() {
            if sep == Sep::Spaces {
                continue;
            }
            return Err(csv(
                line_no,
                format!("empty field in column {} (fields are separated by {})", col + 1, Sep::name(c)),
            ));
        }
        if let Some(other) = field.chars().find(|ch| SEPARATORS.contains(ch)) {
            return Err(csv(
                line_no,
                format!(
                    "mixes separators: {} and {} (one separator per file, taken from the first data line, line {first})",
                    Sep::name(c),
                    Sep::name(other)
                ),
            ));
        }
        // A line of hundreds of millions of fields is valid text; holding it must not abort.
        push(fields, field)?;
    }
    Ok(())
}

/// Parses rows of numbers into (n, dim, row-major values); every row must have the same width.
pub fn points(text: &str) -> Result<(usize, usize, Vec<f64>), FileProblem> {
    let mut values = Vec::new();
    let mut dim = None;
    let mut n = 0;
    each_row(text, |line_no, fields| {
        for field in fields {
            let v: f64 = field.parse().map_err(|_| {
                let hint = if n == 0 { "a header row? " } else { "" };
                csv(
                    line_no,
                    format!("{} is not a number ({hint}the file must be headerless and numeric)", quoted(field)),
                )
            })?;
            push(&mut values, v)?;
        }
        match dim {
            None => dim = Some(fields.len()),
            Some(d) if d != fields.len() => {
                return Err(csv(line_no, format!("has {} values, earlier rows have {d}", fields.len())));
            }
            _ => {}
        }
        n += 1;
        Ok(())
    })?;
    Ok((n, dim.unwrap_or(0), values))
}

/// `v` pushed, or [`FileProblem::OutOfMemory`] when the list cannot grow (never an abort: the
/// text of a valid file can hold more values than memory).
fn push<T>(list: &mut Vec<T>, v: T) -> Result<(), FileProblem> {
    if list.len() == list.capacity() {
        let more = list.len().max(1024);
        list.try_reserve(more)
            .map_err(|_| FileProblem::OutOfMemory(((list.len() + more) * std::mem::size_of::<T>()) as u64))?;
    }
    list.push(v);
    Ok(())
}

/// Parses one integer label per line, exactly (never through f64); a decimal like `3.0` or
/// `1e3` is accepted when its value is a whole number.
pub fn labels(text: &str) -> Result<Vec<i64>, FileProblem> {
    let mut out = Vec::new();
    each_row(text, |line_no, fields| {
        let [field] = fields else {
            return Err(csv(line_no, format!("labels need one value per line, found {}", fields.len())));
        };
        let why = match decimal_integer(field) {
            Whole::Value(v) => {
                push(&mut out, v)?;
                return Ok(());
            }
            Whole::Fraction => "is not an integer",
            Whole::Overflow => "does not fit in a 64-bit integer",
            Whole::NotDecimal if field.parse::<f64>().is_ok() => "is not an integer",
            Whole::NotDecimal => "is not a number",
        };
        Err(csv(line_no, format!("label {} {why}", quoted(field))))
    })?;
    Ok(out)
}

/// What a decimal number's text is, read exactly.
#[derive(Debug, PartialEq, Eq)]
enum Whole {
    Value(i64),
    Fraction,
    Overflow,
    NotDecimal,
}

/// Reads `[+-]digits[.digits][e[+-]digits]` exactly: its integer value, or why it has none.
fn decimal_integer(s: &str) -> Whole {
    let b = s.as_bytes();
    let mut at = 0;
    let negative = matches!(b.first(), Some(b'-'));
    if matches!(b.first(), Some(b'-' | b'+')) {
        at = 1;
    }
    let digits = |at: &mut usize| {
        let start = *at;
        while b.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        &b[start..*at]
    };
    let int = digits(&mut at);
    let frac = if b.get(at) == Some(&b'.') {
        at += 1;
        digits(&mut at)
    } else {
        &[]
    };
    if int.is_empty() && frac.is_empty() {
        return Whole::NotDecimal;
    }
    let mut exp: i64 = 0;
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        let sign = match b.get(at) {
            Some(b'-') => {
                at += 1;
                -1
            }
            Some(b'+') => {
                at += 1;
                1
            }
            _ => 1,
        };
        let e = digits(&mut at);
        if e.is_empty() {
            return Whole::NotDecimal;
        }
        // Saturates far beyond any exponent that matters (the mantissa has < 2^40 digits).
        exp = sign * e.iter().fold(0i64, |a, &d| (a * 10 + i64::from(d - b'0')).min(1 << 50));
    }
    if at != b.len() {
        return Whole::NotDecimal;
    }
    // value = mantissa × 10^exp, with the mantissa's leading and trailing zeros dropped.
    let mantissa: Vec<u8> = int.iter().chain(frac).copied().skip_while(|&d| d == b'0').collect();
    let zeros = mantissa.iter().rev().take_while(|&&d| d == b'0').count();
    let mantissa = &mantissa[..mantissa.len() - zeros];
    if mantissa.is_empty() {
        return Whole::Value(0);
    }
    let exp = exp - frac.len() as i64 + zeros as i64;
    if exp < 0 {
        return Whole::Fraction;
    }
    if mantissa.len() as i64 + exp > 19 {
        return Whole::Overflow;
    }
    let m = mantissa.iter().fold(0i128, |a, &d| a * 10 + i128::from(d - b'0'));
    let v = m * 10i128.pow(exp as u32);
    i64::try_from(if negative { -v } else { v }).map_or(Whole::Overflow, Whole::Value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<impl std::fmt::Debug, FileProblem>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn every_separator_reads() {
        let want = (2, 2, vec![1.0, 2.5, -3.0, 4e3]);
        for text in [
            "1,2.5\n-3,4e3\n",
            "1, 2.5\r\n-3 ,4e3\r\n",
            "1;2.5\n-3;4e3",
            "1\t2.5\n-3\t4e3\n",
            "1 2.5\n  -3    4e3  \n",
            "\u{a0}1,\u{2003}2.5\n-3\t,4e3\r\n",
            "# comment, with; separators\n\n1,2.5\n# more\n-3,4e3\n\n",
        ] {
            assert_eq!(points(text).unwrap(), want, "{text:?}");
        }
    }

    #[test]
    fn mixed_separators_empty_fields_headers_and_bom_are_errors() {
        let e = err(points("0,5;1,25\n"));
        assert!(e.contains("line 1") && e.contains("decimal comma"), "{e}");
        let e = err(points("1,2\n3;4\n"));
        assert!(e.contains("line 2") && e.contains("mixes separators: ',' and ';'"), "{e}");
        let e = err(points("1 2\n3\t4\n"));
        assert!(e.contains("line 2") && e.contains("space and tab"), "{e}");
        let e = err(points("1\t2\n3 4\t5\n"));
        assert!(e.contains("line 2") && e.contains("tab and space"), "{e}");
        let e = err(points("1.0,2.0,3.0\n1.0,,2.0\n"));
        assert!(e.contains("line 2") && e.contains("empty field in column 2"), "{e}");
        let e = err(points("1,2,\n"));
        assert!(e.contains("empty field in column 3"), "{e}");
        let e = err(points("1\t\t2\n"));
        assert!(e.contains("empty field in column 2"), "{e}");
        let e = err(points("\n\nx,y\n1,2\n"));
        assert!(e.contains("line 3") && e.contains("'x' is not a number (a header row?"), "{e}");
        let e = err(points("1,2\n3,y\n"));
        assert!(e.contains("line 2") && !e.contains("header row"), "{e}");
        let e = err(points("\u{feff}1,2\n"));
        assert!(e.contains("line 1") && e.contains("byte-order mark"), "{e}");
    }

    #[test]
    fn shown_tokens_are_quoted_and_cut() {
        let e = err(points(&format!("1,{}\u{1b}\n", "z".repeat(100_000))));
        assert!(e.len() < 200 && e.contains('…') && !e.contains('\u{1b}'), "{e}");
    }

    #[test]
    fn labels_are_read_as_integers() {
        assert_eq!(
            labels("9007199254740993\n-9223372036854775808\n9223372036854775807\n3.0\n1e3\n+4\n-0\n").unwrap(),
            vec![9_007_199_254_740_993, i64::MIN, i64::MAX, 3, 1000, 4, 0]
        );
        let e = err(labels("1\n9223372036854775808\n"));
        assert!(e.contains("line 2") && e.contains("'9223372036854775808' does not fit in a 64-bit integer"), "{e}");
        let e = err(labels("1\n4503599627370496.4\n"));
        assert!(e.contains("line 2") && e.contains("not an integer"), "{e}");
        assert!(err(labels("nan\n")).contains("'nan' is not an integer"));
        assert!(err(labels("abc\n")).contains("'abc' is not a number"));
        assert!(err(labels("1,2\n")).contains("one value per line, found 2"));
    }

    #[test]
    fn decimal_integers_are_exact() {
        use Whole::*;
        for (s, want) in [
            ("12", Value(12)),
            ("1.2e1", Value(12)),
            ("120e-1", Value(12)),
            ("0.0e999999999999999999999", Value(0)),
            ("1e18", Value(1_000_000_000_000_000_000)),
            ("1e19", Overflow),
            ("1e99999999999999999999", Overflow),
            ("1e-99999999999999999999", Fraction),
            ("0.5", Fraction),
            (".", NotDecimal),
            ("1e", NotDecimal),
            ("--1", NotDecimal),
            ("1x", NotDecimal),
            ("-9223372036854775808.000", Value(i64::MIN)),
        ] {
            assert_eq!(decimal_integer(s), want, "{s}");
        }
    }
}
