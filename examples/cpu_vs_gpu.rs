//! The same evaluation on the CPU and on every GPU adapter wgpu lists, asserting identical
//! neighbours-based scores, bit for bit (the cross-platform check to run first).
//!
//! `cargo run --release --example cpu_vs_gpu` (needs the `gpu` feature, on by default). With
//! no adapter it says so and checks the CPU alone.

use faithful::{BackendChoice, Evaluator, Spec};

fn main() -> Result<(), faithful::Error> {
    let ex = faithful::example_digits();
    let lows: Vec<&faithful::Points> = ex.projections.iter().collect();
    let specs: Vec<Spec> =
        ["tnc:k=10", "mrre:k=10", "lcmc:k=10", "nh:k=10"].iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    let cpu = Evaluator::builder(ex.high.clone()).backend(BackendChoice::Cpu).build();
    let want = cpu.measure_many(&lows, Some(&ex.labels), &specs)?;
    let adapters = faithful::gpu_adapters();
    if adapters.is_empty() {
        println!("no GPU adapter; the CPU reference alone ran");
    }
    for adapter in adapters {
        let label = format!("{} ({}, {})", adapter.name, adapter.backend, adapter.device_type);
        if let Some(why) = &adapter.unusable {
            println!("{label}: not usable: {why}");
            continue;
        }
        // Exactly this adapter, even where two share a name (llvmpipe on Vulkan and on GL).
        let gpu = Evaluator::builder(ex.high.clone()).backend(BackendChoice::Gpu).gpu_adapter(&adapter).build();
        match gpu.measure_many(&lows, Some(&ex.labels), &specs) {
            Ok(got) => {
                for (w, g) in want.projections.iter().zip(&got.projections) {
                    assert_eq!(w.scores, g.scores, "{} on {label}: scores differ from the CPU's", w.name);
                }
                println!("{label}: identical to the CPU reference ({} backend)", got.run.backend);
            }
            Err(e) => println!("{label}: could not serve: {e}"),
        }
    }
    Ok(())
}
