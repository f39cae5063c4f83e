//! The `faithful` binary: the command line on native targets. In a browser the crate is used
//! through its wasm API (`faithful::wasm`), so on wasm32 this binary is an empty shell.

#[cfg(not(target_arch = "wasm32"))]
mod arg_errors;
#[cfg(not(target_arch = "wasm32"))]
mod backend_args;
#[cfg(not(target_arch = "wasm32"))]
mod backends;
#[cfg(not(target_arch = "wasm32"))]
mod bench;
#[cfg(not(target_arch = "wasm32"))]
mod cli;
#[cfg(not(target_arch = "wasm32"))]
mod knn;
#[cfg(not(target_arch = "wasm32"))]
mod measure;
#[cfg(not(target_arch = "wasm32"))]
mod output;
#[cfg(not(target_arch = "wasm32"))]
mod pair_args;
#[cfg(not(target_arch = "wasm32"))]
mod report;
#[cfg(not(target_arch = "wasm32"))]
mod run_args;
#[cfg(not(target_arch = "wasm32"))]
mod shard;
#[cfg(not(target_arch = "wasm32"))]
mod space_args;
#[cfg(not(target_arch = "wasm32"))]
mod table;
#[cfg(not(target_arch = "wasm32"))]
mod views;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
