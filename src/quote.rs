//! Showing untrusted text (file content, file names) in one-line error messages: control
//! characters escaped, long tokens cut, so that an error is always exactly one line.

/// Longest token shown from a file, in characters.
pub const TOKEN_CHARS: usize = 40;
/// Longest error line, in characters.
pub const LINE_CHARS: usize = 1000;

/// `'token'`, escaped and cut to [`TOKEN_CHARS`] characters with `…`.
pub fn quoted(token: &str) -> String {
    format!("'{}'", cut(&escaped(token), TOKEN_CHARS))
}

/// `text` with control characters (newlines, tabs, escapes, U+2028, a BOM...) escaped as in
/// Rust string literals; everything else unchanged.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{85}') {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A whole message as one bounded line: escaped, and cut to [`LINE_CHARS`] characters.
pub fn one_line(text: &str) -> String {
    cut(&escaped(text), LINE_CHARS)
}

/// The first `max` characters of `s`, with `…` when something was cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped_and_cut() {
        assert_eq!(quoted("x"), "'x'");
        assert_eq!(quoted("a\nb\tc\u{1b}"), "'a\\nb\\tc\\u{1b}'");
        let long = "7".repeat(5_000_000);
        assert_eq!(quoted(&long), format!("'{}…'", "7".repeat(TOKEN_CHARS)));
        assert_eq!(quoted(&"é".repeat(41)), format!("'{}…'", "é".repeat(40)));
    }

    #[test]
    fn a_message_is_one_bounded_line() {
        let line = one_line(&format!("bad\r\nname{}", "x".repeat(10_000)));
        assert!(!line.contains(['\n', '\r']));
        assert_eq!(line.chars().count(), LINE_CHARS + 1);
        assert_eq!(one_line("caf\u{e9}: fine"), "caf\u{e9}: fine");
    }
}
