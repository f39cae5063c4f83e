//! `--backend`, `--numerics`, `--adapter`: the same on every command.

use faithful::gpu::GpuRequest;
use faithful::{BackendChoice, Numerics, Options};

#[derive(clap::Args, Debug, Clone)]
pub struct BackendArgs {
    /// Which backend builds neighbours and ranks: auto (GPU for a hardware adapter and a large
    /// job), cpu (the reference), gpu (a wgpu adapter, or exit 3 with the reason).
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// exact (identical to the reference) or fast (f32 on the GPU, labelled, with a count of
    /// comparisons too close to call).
    #[arg(long, value_enum, default_value_t = Numerics::Exact)]
    pub numerics: Numerics,
    /// Use the first GPU adapter whose name contains this (see `faithful backends`).
    #[arg(long, value_name = "SUBSTR")]
    pub adapter: Option<String>,
}

impl BackendArgs {
    /// Applies these choices to library options.
    pub fn apply(&self, mut opts: Options) -> Options {
        opts.backend = self.backend;
        opts.numerics = self.numerics;
        opts.gpu = GpuRequest { adapter: self.adapter.clone(), ..opts.gpu };
        opts
    }
}
