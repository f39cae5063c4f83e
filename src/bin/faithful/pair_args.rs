//! `--memory-budget`, `--temp-budget`, `--temp-dir`: limits of the pair order (srho,
//! nm_stress), a progress bar on a terminal, and Ctrl-C, SIGTERM and SIGHUP that remove
//! temporary files.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use faithful::resources::workspace;
use faithful::{Cancel, Options, ProgressFn};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(clap::Args, Debug, Clone)]
pub struct PairArgs {
    /// Memory for sorting all pairs (srho, nm_stress), e.g. 512M or 2G (K/M/G/T are powers of
    /// 1024); beyond it, an external sort in --temp-dir. Also the most that a parameter may
    /// size (k's neighbour lists, cadi's n_triplets), checked before any work. Default: half
    /// the physical memory, at most what the process's limits (ulimit -v, cgroup) leave.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Temporary space the external sort may use (checked before any work starts). Default: unlimited.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true, value_parser = parse_bytes)]
    pub temp_budget: Option<u64>,
    /// Directory for the external sort's temporary workspace. Default: the system's temporary directory.
    #[arg(long, value_name = "PATH")]
    pub temp_dir: Option<PathBuf>,
}

impl PairArgs {
    /// Applies the budgets to library options.
    pub fn apply(&self, mut opts: Options) -> Options {
        opts.memory_budget = self.memory_budget;
        opts.temp_budget = self.temp_budget;
        opts.temp_dir = self.temp_dir.clone();
        opts
    }
}

/// Reads `123`, `64K`, `512M`, `2G`, `1T` (optionally with `B` or `iB`; powers of 1024).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper.strip_suffix("IB").or_else(|| upper.strip_suffix('B')).unwrap_or(&upper);
    let (digits, shift) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 10),
        Some('M') => (&body[..body.len() - 1], 20),
        Some('G') => (&body[..body.len() - 1], 30),
        Some('T') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let bad = || "not a size in bytes below 2^64 (examples: 1048576, 512M, 2G)".to_string();
    let v: u64 = digits.trim().parse().map_err(|_| bad())?;
    v.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// A handler of Ctrl-C (SIGINT) and, through ctrlc's `termination` feature, SIGTERM and SIGHUP
/// (`timeout`, systemd, a closed terminal), for every command: the first signal during an
/// external sort asks the run to stop (it removes its workspace and the command exits with
/// 130); otherwise, or on a second signal, live workspaces and output files still being
/// written are removed, one line is printed and the process exits at once with 130. ctrlc
/// does not say which signal came, so every one exits with 130.
pub fn install_interrupt(cancel: Cancel) {
    let _ = ctrlc::set_handler(move || {
        let again = cancel.request();
        if again || !workspace::any_active() {
            workspace::remove_all_active();
            crate::output::remove_pending();
            // Never a panic here (a stderr that cannot be written, `2>/dev/full`): the exit must
            // happen whatever became of the message.
            let _ = writeln!(std::io::stderr(), "faithful: interrupted");
            std::process::exit(130);
        }
    });
}

/// A progress bar on stderr when it is a terminal; `None` otherwise (never in the JSON).
fn progress_bar() -> Option<(ProgressBar, ProgressFn)> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} ({elapsed})")
            .expect("template")
            .progress_chars("=> "),
    );
    let b = bar.clone();
    let f = ProgressFn::new(move |p| {
        if b.message() != p.phase {
            b.set_message(p.phase);
            b.set_length(p.total);
        }
        b.set_position(p.done);
    });
    Some((bar, f))
}

/// A progress bar on stderr when it is a terminal, reported to by `opts`'s run; to be cleared
/// when the run ends.
pub fn show_progress(opts: &mut Options) -> Option<ProgressBar> {
    let (bar, f) = progress_bar()?;
    opts.progress = Some(f);
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("123"), Ok(123));
        assert_eq!(parse_bytes("64K"), Ok(64 << 10));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("2gib"), Ok(2 << 30));
        assert_eq!(parse_bytes("1TB"), Ok(1 << 40));
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("-1M").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }
}
