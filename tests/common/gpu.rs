//! Acquiring the GPU in tests: under CI=true a missing adapter fails the test; elsewhere the
//! test is skipped, loudly. And the whole-resource comparison with the CPU reference.
#![allow(dead_code)]

use faithful::gpu::{Gpu, GpuRequest, GpuStats, gpu_row_pass};
use faithful::resources::{Needs, row_pass};
use faithful::{Numerics, Points};

pub fn gpu(req: GpuRequest) -> Option<Gpu> {
    match Gpu::new(&req) {
        Ok(g) => Some(g),
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true requires a GPU adapter (lavapipe: apt-get install mesa-vulkan-drivers): {e}");
            }
            eprintln!(
                "\n*** SKIPPING GPU TEST: no wgpu adapter ({e}). Install mesa-vulkan-drivers for lavapipe. ***\n"
            );
            None
        }
    }
}

/// GPU Exact resources (both kNN lists with distances, both cross-rank tables with
/// distances) equal the CPU reference's bit for bit; returns the GPU's stats.
pub fn compare_resources(g: &Gpu, tag: &str, high: &Points, low: &Points, k: usize) -> GpuStats {
    let needs = Needs::cross(k);
    let cpu = row_pass(high, None, &[low], needs.clone(), 16);
    let (gp, stats) = gpu_row_pass(g, high, None, &[low], needs, Numerics::Exact).unwrap();
    let n = high.n();
    let (ch, gh) = (cpu.high.as_ref().unwrap(), gp.high.as_ref().unwrap());
    assert_eq!(gh.idx, ch.idx, "{tag}: original-space kNN");
    let bits = |v: &[f64]| v.iter().map(|d| d.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&gh.dist), bits(&ch.dist), "{tag}: original-space kNN distances");
    let (cl, gl) = (&cpu.lows[0], &gp.lows[0]);
    assert_eq!(gl.knn.as_ref().unwrap().idx, cl.knn.as_ref().unwrap().idx, "{tag}: projection kNN");
    assert_eq!(
        bits(&gl.knn.as_ref().unwrap().dist),
        bits(&cl.knn.as_ref().unwrap().dist),
        "{tag}: projection kNN distances"
    );
    let (cc, gc) = (cl.cross.as_ref().unwrap(), gl.cross.as_ref().unwrap());
    assert_eq!(gc.rank_high_of_low, cc.rank_high_of_low, "{tag}: X ranks of Y neighbours");
    assert_eq!(gc.rank_low_of_high, cc.rank_low_of_high, "{tag}: Y ranks of X neighbours");
    assert_eq!(bits(&gc.dist_high_of_low), bits(&cc.dist_high_of_low), "{tag}: cross distances");
    assert_eq!(bits(&gc.dist_low_of_high), bits(&cc.dist_low_of_high), "{tag}: cross distances");
    assert!(
        stats.knn.candidates >= (2 * n * k) as u64 - stats.knn.rows_recomputed * k as u64,
        "{tag}: fewer candidates than neighbours"
    );
    stats
}
