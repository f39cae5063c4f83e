//! Acquiring the GPU in tests: under CI=true a missing adapter fails the test; elsewhere the
//! test is skipped, loudly.

use faithful::gpu::{Gpu, GpuRequest};

pub fn gpu(req: GpuRequest) -> Option<Gpu> {
    match Gpu::new(&req) {
        Ok(g) => Some(g),
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers): {e}");
            }
            eprintln!("\n*** SKIPPING GPU TEST: no wgpu adapter ({e}). Install mesa-vulkan-drivers for lavapipe. ***\n");
            None
        }
    }
}
