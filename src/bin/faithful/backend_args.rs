//! `--backend`, `--numerics`, `--adapter`: the same on every command.

use faithful::gpu::GpuRequest;
use faithful::{BackendChoice, Numerics, Options};

/// `--backend`: the command line's names for [`BackendChoice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// The GPU for a hardware adapter and a job large enough to pay for start-up, else the CPU.
    Auto,
    Cpu,
    /// A wgpu adapter, or an error with the reason.
    Gpu,
}

impl From<BackendArg> for BackendChoice {
    fn from(b: BackendArg) -> BackendChoice {
        match b {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Cpu => BackendChoice::Cpu,
            BackendArg::Gpu => BackendChoice::Gpu,
        }
    }
}

/// `--numerics`: the command line's names for [`Numerics`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NumericsArg {
    /// Neighbours and ranks identical to the reference (certified f32, refined in f64).
    Exact,
    /// f32 on the device without refinement; the report counts the comparisons left to f32.
    Fast,
}

impl From<NumericsArg> for Numerics {
    fn from(n: NumericsArg) -> Numerics {
        match n {
            NumericsArg::Exact => Numerics::Exact,
            NumericsArg::Fast => Numerics::Fast,
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct BackendArgs {
    /// Which backend builds neighbours and ranks: auto (GPU for a hardware adapter and a large
    /// job), cpu (the reference), gpu (a wgpu adapter, or exit 3 with the reason).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// exact (identical to the reference) or fast (f32 on the GPU, labelled, with a count of
    /// comparisons too close to call).
    #[arg(long, value_enum, default_value_t = NumericsArg::Exact)]
    pub numerics: NumericsArg,
    /// Use the first GPU adapter whose name contains this (see `faithful backends`).
    #[arg(long, value_name = "SUBSTR")]
    pub adapter: Option<String>,
}

impl BackendArgs {
    /// Applies these choices to library options.
    pub fn apply(&self, mut opts: Options) -> Options {
        opts.backend = self.backend.into();
        opts.numerics = self.numerics.into();
        opts.gpu = GpuRequest { adapter: self.adapter.clone(), ..opts.gpu };
        opts
    }
}
