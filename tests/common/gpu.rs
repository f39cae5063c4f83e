//! Acquiring the GPU in tests: under CI=true a missing adapter fails the test; elsewhere the
//! test is skipped, loudly. And the whole-resource comparison with the CPU reference.
#![allow(dead_code)]

use approx::relative_eq;
use faithful::gpu::{
    Gpu, GpuRequest, GpuStats, density, dispatch_tally, gpu_row_pass, pair_stats, prepare::prepare, twin,
};
use faithful::resources::{Extent, Needs, row_pass};
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
    let needs = Needs::cross_with_dists(k);
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

/// `pair_stats.wgsl` against its twin: the device's row sums and the twin's, both merged in f64,
/// agree to a relative 1e-4 (f32 sums in different orders), or within 1e-6 of the sums' scale.
/// Returns the original space's extent and the rows the witness found short.
pub fn pair_stats_match_twin(g: &Gpu, tag: &str, high: &Points, low: &Points) -> (Extent, u64) {
    let n = high.n();
    let (px, py) = (prepare(high), prepare(low));
    let twin_rows: Vec<f32> =
        (0..n).flat_map(|i| twin::pair_stats_row(&px, &py, (px.scale / py.scale) as f32, i)).collect();
    let (_, _, want) = pair_stats::merge_rows(&twin_rows, n, px.scale);
    let (hx, _, got, short) = pair_stats::fast_pair_sums(g, high, low, &mut dispatch_tally()).unwrap();
    let scale = 1e-6 * want.sum_xx.max(want.sum_yy);
    for (what, a, b) in [
        ("Σ(x−y)²", got.sum_sq_diff, want.sum_sq_diff),
        ("Σx²", got.sum_xx, want.sum_xx),
        ("Σy²", got.sum_yy, want.sum_yy),
        ("Σxy", got.sum_xy, want.sum_xy),
        ("m2x", got.m2_x, want.m2_x),
    ] {
        assert!(relative_eq!(a, b, epsilon = scale, max_relative = 1e-4), "{tag} {what}: device {a} twin {b}");
    }
    (hx, short)
}

/// `density.wgsl` against its twin: the device's normalised densities of `points` (largest pair
/// distance `max` > 0) and the twin's agree to a relative 1e-4 for every σ of `sigmas`.
/// Returns the rows the witness found short.
pub fn density_matches_twin(g: &Gpu, tag: &str, points: &Points, max: f64, sigmas: &[f64]) -> u64 {
    let n = points.n();
    let prep = prepare(points);
    let (dev, short) = density::fast_densities(g, points, max, sigmas, &mut dispatch_tally()).unwrap();
    let inv = (1.0 / (max * prep.scale)) as f32;
    for (s, &sigma) in sigmas.iter().enumerate() {
        let raw: Vec<f64> = (0..n).map(|i| f64::from(twin::density_row(&prep, inv, &[sigma as f32], i)[0])).collect();
        let total: f64 = raw.iter().sum();
        for i in 0..n {
            let (a, b) = (dev[s][i], raw[i] / total);
            assert!(relative_eq!(a, b, max_relative = 1e-4), "{tag} density σ={sigma} row {i}: device {a} twin {b}");
        }
    }
    short
}
