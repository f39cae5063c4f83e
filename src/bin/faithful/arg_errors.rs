//! The argument parser's refusals in faithful's one error format: clap's own multi-line text
//! (usage, tips) becomes one line `faithful: error: <what>: <problem>` with exit code 2, like
//! every other refusal; the usage text is printed only for `--help` (and `--version`).
//! The value parsers below give every numeric option one clear message and echo the value as
//! typed (never a wrapped `-1` or a rounded `18446744073709552000`).

use clap::error::{ContextKind, ContextValue, ErrorKind};
use faithful::quote::{one_line, quoted};

/// One line for a clap error (without the `faithful: error: ` prefix).
pub fn line(e: &clap::Error) -> String {
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        Some(ContextValue::StyledStrs(v)) => Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")),
        Some(ContextValue::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    // "--k <K>" → "--k": the option as typed, without clap's value placeholder; a required
    // group "<--high <HIGH>|--high-distances <PATH>>" → "one of --high, --high-distances".
    let first_word = |one: &str| one.split(' ').next().unwrap_or(one).to_string();
    let arg = text(ContextKind::InvalidArg).map(|a| {
        a.split(", ")
            .map(|one| match one.strip_prefix('<').and_then(|g| g.strip_suffix('>')) {
                // Only clap's own text for a missing group: an unknown argument is the user's.
                Some(group) if group.contains('|') && e.kind() == ErrorKind::MissingRequiredArgument => {
                    format!("one of {}", group.split('|').map(first_word).collect::<Vec<_>>().join(", "))
                }
                _ => first_word(one),
            })
            .collect::<Vec<_>>()
            .join(", ")
    });
    let command = command_of(e);
    let help = format!("see {command} --help");
    let value = text(ContextKind::InvalidValue).map(|v| quoted(&v));
    let suggestion = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => format!("; did you mean {}?", quoted(s)),
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            format!("; did you mean {}?", v.iter().map(|s| quoted(s)).collect::<Vec<_>>().join(" or "))
        }
        _ => String::new(),
    };
    let line = match (e.kind(), arg, value) {
        (ErrorKind::ValueValidation, Some(arg), Some(value)) => {
            let why = std::error::Error::source(e).map(|s| s.to_string()).unwrap_or_else(|| "invalid value".into());
            format!("{arg} {value}: {why}")
        }
        (ErrorKind::InvalidValue, Some(arg), Some(value)) => {
            let valid = text(ContextKind::ValidValue)
                .filter(|v| !v.is_empty())
                .map(|v| format!(" (accepted: {v})"))
                .unwrap_or_default();
            if value == "''" {
                format!("{arg}: a value is required{valid}")
            } else {
                format!("{arg} {value}: not an accepted value{valid}{}", suggestion(ContextKind::SuggestedValue))
            }
        }
        (ErrorKind::UnknownArgument, Some(arg), _) => {
            format!("{}: unknown option for {command} ({help}){}", quoted(&arg), suggestion(ContextKind::SuggestedArg))
        }
        (ErrorKind::InvalidSubcommand, _, _) => {
            let sub = text(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!(
                "{}: unknown command (see faithful --help){}",
                quoted(&sub),
                suggestion(ContextKind::SuggestedSubcommand)
            )
        }
        (ErrorKind::MissingRequiredArgument, Some(args), _) => format!("{command}: {args}: required ({help})"),
        (ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand, _, _) => {
            format!("{command}: a command is required (see {command} --help)")
        }
        (ErrorKind::InvalidUtf8, _, _) => format!("{command}: an argument is not valid UTF-8"),
        // Anything else: clap's own first line (it names the argument), after the command.
        _ => {
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("invalid arguments");
            format!("{command}: {}", first.strip_prefix("error: ").unwrap_or(first))
        }
    };
    one_line(&line)
}

/// `faithful SUBCOMMAND` from the error's usage text, or `faithful`.
fn command_of(e: &clap::Error) -> String {
    let usage = match e.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(s)) => s.to_string(),
        _ => String::new(),
    };
    let words: Vec<&str> = usage.split_whitespace().skip_while(|w| *w != "faithful").take(2).collect();
    match words.as_slice() {
        ["faithful", sub] if sub.chars().all(|c| c.is_ascii_lowercase()) => format!("faithful {sub}"),
        _ => "faithful".into(),
    }
}

/// A whole number in `min..=max`, for clap (`value_parser = whole(1, u64::MAX)`): one message
/// for every bad value (a sign, a fraction, an exponent, too many digits).
pub fn whole(min: u64, max: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let range = || {
            if max == u64::MAX {
                format!("a whole number ≥ {min}")
            } else {
                format!("a whole number from {min} to {max}")
            }
        };
        let t = text.trim();
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("expected {}", range()));
        }
        match t.parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            Ok(_) => Err(format!("out of range: expected {}", range())),
            // Only a number past u64 fails to parse here (the digits are checked above).
            Err(_) => Err(format!("out of range: expected a whole number from {min} to {max}")),
        }
    }
}

/// [`whole`] for a `usize` option.
pub fn whole_usize(min: usize, max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    let parse = whole(min as u64, u64::try_from(max).unwrap_or(u64::MAX));
    move |text: &str| parse(text).and_then(|v| usize::try_from(v).map_err(|_| "out of range for this machine".into()))
}

#[cfg(test)]
mod tests {
    use super::whole;

    #[test]
    fn whole_numbers_are_checked_and_never_wrapped() {
        let p = whole(1, u64::MAX);
        assert_eq!(p("1"), Ok(1));
        assert_eq!(p("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            p("18446744073709551616"),
            Err("out of range: expected a whole number from 1 to 18446744073709551615".into())
        );
        for bad in ["-1", "1e3", "1.5", "abc", "", "+3", "0x10"] {
            assert_eq!(p(bad), Err("expected a whole number ≥ 1".into()), "{bad}");
        }
        assert_eq!(p("0"), Err("out of range: expected a whole number ≥ 1".into()));
        assert_eq!(whole(1, 1000)("1001"), Err("out of range: expected a whole number from 1 to 1000".into()));
    }
}
