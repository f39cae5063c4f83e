//! The `faithful` command line (native only).

use std::io::Write;
use std::process::ExitCode;

use crate::pair_args::install_interrupt;
use crate::{arg_errors, backends, bench, knn, measure, output, report, shard, table, views};

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

/// Exact, fast measures of how faithfully a projection keeps the structure of high-dimensional data.
#[derive(Parser)]
#[command(name = "faithful", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Evaluate measures on one or more projections (the bundled digits example when no files are given).
    Measure(measure::Args),
    /// List the measures with their parameters, output keys and per-point kinds.
    Measures(MeasuresArgs),
    /// The exact kNN graph of a dataset (ties by index, self excluded).
    Knn(knn::Args),
    /// The data behind the distortion views: kNN lists and cross ranks, the binned Shepard
    /// diagram and the co-ranking matrix (the bundled digits example when no files are given).
    Views(views::Args),
    /// One self-contained HTML report: scores, curves, CheckViz, reliability map, neighbour
    /// lens, Shepard and co-ranking heatmaps (the bundled digits example when no files are given).
    Report(report::Args),
    /// Every backend and GPU adapter, with its status, limits and features.
    Backends(backends::Args),
    /// Benchmark the kernels on the CPU and every GPU adapter, cold and warm, with parity checks.
    Bench(bench::Args),
    /// Score one block of rows into a partial (an array job's task); `fold` joins the partials.
    Shard(shard::ShardArgs),
    /// Join the partials of every block into the results of one run, bit for bit.
    Fold(shard::FoldArgs),
    /// The blocks a shard may take for n points, one A:B per line.
    Plan(shard::PlanArgs),
}

#[derive(clap::Args)]
struct MeasuresArgs {
    /// Print a JSON array: {"id", "zadu_id", "params", "keys", "local": [{"key", "kind"}],
    /// "labels", "min_classes", "description"} per measure.
    #[arg(long)]
    json: bool,
}

pub fn main() -> ExitCode {
    // A closed stdout (`faithful ... | head`) ends the process quietly, as for other Unix
    // tools, instead of a write error (see output.rs).
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A standard stream closed at start (`>&-`): refused before any work, as coreutils do.
    if let Err((e, can_say)) = output::check_standard_streams() {
        if can_say {
            let _ = writeln!(std::io::stderr(), "faithful: error: {}", faithful::quote::one_line(&e.to_string()));
        }
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version: their text on stdout, exit 0 (a write that fails is an error).
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return match output::print(&e.render().to_string()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            };
        }
        // Every other parsing error: one line, exit 2, no usage text.
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "faithful: error: {}", arg_errors::line(&e));
            return ExitCode::from(2);
        }
    };
    // Ctrl-C, SIGTERM and SIGHUP during any command: temporary files removed, one line, exit
    // 130 (a measure's external sort stops at its next check, through `cancel`).
    let cancel = faithful::Cancel::new();
    install_interrupt(cancel.clone());
    let result = match cli.command {
        Command::Measure(args) => measure::run(args, cancel),
        Command::Knn(args) => knn::run(args),
        Command::Views(args) => views::run(args, cancel),
        Command::Report(args) => report::run(args, cancel),
        Command::Backends(args) => backends::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Shard(args) => shard::shard(args),
        Command::Fold(args) => shard::fold(args),
        Command::Plan(args) => shard::plan_blocks(args),
        Command::Measures(a) if a.json => output::print(&(faithful::measures_json() + "\n")),
        Command::Measures(_) => output::print(&table::measures_table()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

/// The one error path: one line on stderr, whatever file names or contents the message quotes
/// (a stderr that cannot be written, `2>/dev/full`, leaves the exit code to tell), and the
/// exit code: 3 when the GPU was asked for and cannot serve; 130 when interrupted (Ctrl-C,
/// SIGTERM or SIGHUP, as shells report SIGINT); 2 for bad input or output that cannot be
/// written.
fn fail(e: &faithful::Error) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "faithful: error: {}", faithful::quote::one_line(&e.to_string()));
    ExitCode::from(match e {
        faithful::Error::Gpu(_) => 3,
        faithful::Error::Interrupted => 130,
        _ => 2,
    })
}
