//! `--threads`, `--block-rows`, the backend's flags (backend_args.rs) and the pair order's
//! (pair_args.rs): the same on `measure`, `views` and `report`, turned into the evaluator's
//! options in one place.

use faithful::{Cancel, Options, Result};

use crate::arg_errors::{whole, whole_usize};
use crate::backend_args::BackendArgs;
use crate::pair_args::PairArgs;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Worker threads, at most 1024 (default, or 0: all cores, as ripgrep's --threads 0).
    /// Results are identical for any count.
    #[arg(long, allow_hyphen_values = true, value_parser = whole_usize(0, usize::MAX))]
    threads: Option<usize>,
    /// Rows per task. Results are identical for any size.
    #[arg(long, default_value_t = 32, allow_hyphen_values = true, value_parser = whole(1, u64::MAX))]
    block_rows: u64,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    pairs: PairArgs,
}

impl RunArgs {
    /// The evaluator's options (the thread count checked first), with `cancel`.
    pub fn options(&self, cancel: Cancel) -> Result<Options> {
        if let Some(t) = self.threads {
            faithful::evaluate::check_threads(t)?;
        }
        let mut opts = Options::default();
        opts.threads = self.threads;
        opts.block_rows = self.block_rows as usize;
        let mut opts = self.pairs.apply(self.backend.apply(opts));
        opts.cancel = Some(cancel);
        Ok(opts)
    }
}
