//! Every kernel's CPU twin (`src/gpu/twin/NAME.rs`) against the device's output of
//! `shaders/NAME.wgsl`, one test per kernel, named after it. Where the kernel's outcome is exact
//! (certified candidates and ranks) the comparison is exact; where it is raw f32 (s̃, ε, Fast
//! sums) it is within the proven bound ε or, for the Fast sums, a relative tolerance (`approx`).
//! Runs on lavapipe in CI (and on llvmpipe GL with `WGPU_BACKEND=gl`).

mod common;
#[path = "common/gpu.rs"]
mod gpu_common;

use approx::{abs_diff_eq, assert_abs_diff_eq, relative_eq};
use common::{corpus, points, uniform};
use faithful::gpu::bound::Params;
use faithful::gpu::prepare::prepare;
use faithful::gpu::{GpuRequest, KernelSet, Tiles, gpu_row_pass, knn_candidates, sqdist, twin};
use faithful::reference::{distance_pair, key};
use faithful::resources::{Needs, row_pass};
use faithful::{Metric, Numerics, Points};
use gpu_common::{density_matches_twin, gpu, pair_stats_match_twin};

/// The common corpus plus a case whose candidate lists overflow (identical points).
fn kernel_corpus() -> Vec<(String, Points, Points)> {
    let mut c = corpus();
    c.push(("identical_300".into(), points("s", 300, 3, |_, _| 2.0), points("sl", 300, 2, |i, _| (i % 3) as f64)));
    c
}

/// Spaces under cityblock and chebyshev (the distance kernels' linear form): a tie-heavy
/// lattice with duplicates, generic data of odd D, and n past 63 tiles of points (τ' from the
/// tile minima).
fn linear_corpus() -> Vec<(String, Points, Points)> {
    let mut out = Vec::new();
    for metric in [Metric::Cityblock, Metric::Chebyshev] {
        let lattice = common::levels("lattice", 150, 4, 3, 7);
        let spaces = [
            ("lattice_150", lattice, uniform("ll", 150, 2, 8)),
            ("uniform_97_d9", uniform("u", 97, 9, 9), uniform("ul", 97, 2, 10)),
            ("dups_4200", common::with_duplicates(4200, 4, 43), uniform("dl", 4200, 2, 11)),
        ];
        for (name, high, low) in spaces {
            out.push((format!("{name}/{metric}"), high.with_metric(metric).unwrap(), low));
        }
    }
    out
}

/// `distances.wgsl` (the classic kernel set): the device's s̃ and the twin's are both within ε
/// of the reference's squared distance, so within 2ε of each other.
#[test]
fn distances() {
    let Some(g) = gpu(GpuRequest { kernels: KernelSet::Classic, ..Default::default() }) else { return };
    for (name, high, low) in kernel_corpus() {
        for p in [&high, &low] {
            let n = p.n();
            let (prep, s, e) = sqdist::bounded_sqdist(&g, p, 0..n).unwrap();
            for i in 0..n {
                for j in 0..n {
                    let (dev, tw, eps) = (s[i * n + j], twin::sqdist(&prep, i, j), e[i * n + j]);
                    assert!(
                        abs_diff_eq!(dev, tw, epsilon = 2.0 * eps),
                        "{name} ({i},{j}): device {dev} twin {tw} ε {eps}"
                    );
                }
            }
        }
    }
}

/// Device s̃ of the tiled kernel against the twin's tile walk, pair by pair, within the sum of
/// both bounds (each is within ε of the reference); the twin's witness counts are those the
/// host expects of a complete dispatch.
fn tiled_matches_twin(req: GpuRequest, p: &Points, tag: &str) {
    let Some(g) = gpu(req) else { return };
    let n = p.n();
    let (prep, s, e) = sqdist::bounded_sqdist(&g, p, 0..n).unwrap();
    let (tw, trips) = twin::distances_tiled(&prep, g.tiles, 0, n);
    let want = g.tiles.trips_per_coordinate(n) * p.dim() as u64;
    assert!(trips.iter().all(|&t| u64::from(t) == want), "{tag}: twin witness");
    for t in 0..n * n {
        assert_abs_diff_eq!(s[t], tw[t], epsilon = 2.0 * e[t]);
    }
}

/// `distances_tiled.wgsl` at WebGPU's floor tiles (what every adapter accepts) and at the
/// adapter's own, with n and D not multiples of the tiles: partial row tiles, point tiles and
/// coordinate sub-chunks.
#[test]
fn distances_tiled() {
    for (n, d) in [(70, 37), (131, 50), (5, 3)] {
        let p = uniform("u", n, d, n as u64);
        let floor = GpuRequest { tiles: Some(Tiles::choose(&wgpu::Limits::default())), ..Default::default() };
        tiled_matches_twin(floor, &p, &format!("floor tiles n={n} D={d}"));
        tiled_matches_twin(GpuRequest::default(), &p, &format!("adapter tiles n={n} D={d}"));
    }
}

/// `sqdist.wgsl`: the device's s̃ is the twin row's within 2ε, and the device's ε is the
/// twin's ε of the device's s̃ (the same f32 operations; a driver may fuse them, so a few ulps
/// apart). The twin's own bound is checked without a GPU in `gpu_parity`.
#[test]
fn sqdist() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, _) in kernel_corpus() {
        let n = high.n();
        let (prep, s, e) = sqdist::bounded_sqdist(&g, &high, 0..n).unwrap();
        let params = Params::new(n, high.dim());
        for i in 0..n {
            let (ts, te) = twin::sqdist_row(&params, &prep, i);
            for j in 0..n {
                let (dev_s, dev_e) = (s[i * n + j], e[i * n + j]);
                assert!(
                    abs_diff_eq!(dev_s, ts[j], epsilon = 2.0 * te[j]),
                    "{name} s̃({i},{j}): device {dev_s} twin {}",
                    ts[j]
                );
                let want = params.eps_of(dev_s, prep.norms[i], prep.norms[j]);
                assert!(
                    relative_eq!(dev_e, want, max_relative = 1e-5),
                    "{name} ε({i},{j}): device {dev_e} twin {want}"
                );
            }
        }
    }
}

/// The reference's first k neighbours of row i, by its f64 `(d, j)` keys.
fn true_knn(p: &Points, i: usize, k: usize) -> Vec<u32> {
    let mut d = vec![0.0; p.n()];
    faithful::reference::distance_row(p, i, &mut d);
    let mut keys: Vec<u128> = (0..p.n()).filter(|&j| j != i).map(|j| key(d[j], j)).collect();
    keys.sort_unstable();
    keys[..k].iter().map(|kk| (kk & 0xFFFF_FFFF) as u32).collect()
}

/// `knn_candidates.wgsl`: both the device's and the twin's candidates hold every true
/// neighbour (the certified outcome, exact), and the s̃ they report agree within 2ε; τ' comes
/// from the tile minima of `distances_tiled`'s epilogue on both or on neither (on both once
/// every thread has a minimum: n > 63 tiles of points, the last case here).
#[test]
fn knn_candidates() {
    let mut cases = kernel_corpus();
    cases.push(("uniform_4500".into(), uniform("u", 4500, 3, 45), uniform("ul", 4500, 2, 46)));
    cases.push(("dups_4200".into(), common::with_duplicates(4200, 4, 42), uniform("dl", 4200, 2, 47)));
    knn_candidates_match_twin(cases);
}

/// `knn_candidates.wgsl` on the linear form's s̃ and ε (cityblock, chebyshev), as above.
#[test]
fn knn_candidates_under_cityblock_and_chebyshev() {
    knn_candidates_match_twin(linear_corpus());
}

fn knn_candidates_match_twin(cases: Vec<(String, Points, Points)>) {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, _) in cases {
        let (n, k) = (high.n(), 5);
        let raw = knn_candidates::raw_candidates(&g, &high, k).unwrap();
        let prep = prepare(&high);
        // The space's own form: squared (Euclidean), cityblock or chebyshev.
        let params = knn_candidates::with_knn(Params::new_form(n, high.dim(), prep.form), k);
        let (s, _) = twin::distances_tiled(&prep, g.tiles, 0, n);
        let minima = twin::tile_minima(&params, &prep, g.tiles, 0, n, &s);
        let per = g.tiles.minima(n);
        let rows: Vec<usize> = if n > 1000 { (0..n).step_by(n / 97).collect() } else { (0..n).collect() };
        let mut from_minima = 0;
        for i in rows {
            let dev = &raw[i];
            let tw = twin::knn_candidates(&params, &prep, i, &minima[i * per..(i + 1) * per]);
            assert_eq!(dev.from_minima, tw.from_minima, "{name} row {i}: τ' source");
            from_minima += usize::from(dev.from_minima);
            let copied = dev.count as usize >= k && dev.count <= params.cap;
            assert_eq!(dev.candidates.len(), if copied { dev.count as usize } else { 0 }, "{name} row {i}: compaction");
            if !copied || tw.count > params.cap {
                continue; // overflow: the row is recomputed on the CPU either way
            }
            for j in true_knn(&high, i, k) {
                let has = |l: &[(u32, f32)]| l.iter().any(|&(c, _)| c == j);
                assert!(has(&dev.candidates), "{name} row {i}: device candidates miss true neighbour {j}");
                assert!(has(&tw.candidates), "{name} row {i}: twin candidates miss true neighbour {j}");
            }
            for &(j, sg) in &dev.candidates {
                if let Some(&(_, st)) = tw.candidates.iter().find(|&&(c, _)| c == j) {
                    let e = params.eps_of(st, prep.norms[i], prep.norms[j as usize]);
                    assert!(abs_diff_eq!(sg, st, epsilon = 2.0 * e), "{name} ({i},{j}): device {sg} twin {st}, ε {e}");
                }
            }
        }
        if n > 63 * g.tiles.points() as usize {
            assert!(from_minima > 0, "{name}: τ' never came from the tile minima");
        }
    }
}

/// `knn_candidates.wgsl` on a streamed plan's point tile (`Params::col0`; the distances and
/// minima of the tile alone): the device's and the twin's candidates hold every true neighbour
/// among the tile's points, name only points of the tile, agree on τ′'s source (the tile
/// minima once the tile holds more than 63 tiles of 64 points) and on s̃ within 2ε.
#[test]
fn knn_candidates_on_a_point_tile() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let k = 5;
    for (name, high, cols) in [
        ("uniform_4500", uniform("u", 4500, 3, 45), 250..4400),
        ("dups_600", common::with_duplicates(600, 4, 42), 37..290),
        (
            "lattice_150/cityblock",
            common::levels("lattice", 150, 4, 3, 7).with_metric(Metric::Cityblock).unwrap(),
            100..150,
        ),
    ] {
        let n = high.n();
        let raw = knn_candidates::raw_candidates_tile(&g, &high, k, cols.clone()).unwrap();
        let prep = prepare(&high);
        let mut params = knn_candidates::with_knn(Params::new_form(n, high.dim(), prep.form), k);
        (params.col0, params.n) = (cols.start as u32, cols.len() as u32);
        let (s, _) = twin::distances_tiled(&prep, g.tiles, 0, n);
        let minima = twin::tile_minima(&params, &prep, g.tiles, 0, n, &s);
        let per = g.tiles.minima(cols.len());
        let mut from_minima = 0;
        for i in (0..n).step_by(n.div_ceil(150)) {
            let (dev, tw) = (&raw[i], twin::knn_candidates(&params, &prep, i, &minima[i * per..(i + 1) * per]));
            assert_eq!(dev.from_minima, tw.from_minima, "{name} row {i}: τ' source");
            from_minima += usize::from(dev.from_minima);
            assert!(
                dev.candidates.iter().all(|&(j, _)| cols.contains(&(j as usize))),
                "{name} row {i}: outside the tile"
            );
            let copied = dev.count as usize >= k && dev.count <= params.cap;
            if !copied || tw.count > params.cap {
                continue;
            }
            let mut d = vec![0.0; n];
            faithful::reference::distance_row(&high, i, &mut d);
            let mut keys: Vec<u128> = cols.clone().filter(|&j| j != i).map(|j| key(d[j], j)).collect();
            keys.sort_unstable();
            for kk in &keys[..k] {
                let j = (kk & 0xFFFF_FFFF) as u32;
                assert!(dev.candidates.iter().any(|&(c, _)| c == j), "{name} row {i}: device misses {j}");
                assert!(tw.candidates.iter().any(|&(c, _)| c == j), "{name} row {i}: twin misses {j}");
            }
            for &(j, sg) in &dev.candidates {
                if let Some(&(_, st)) = tw.candidates.iter().find(|&&(c, _)| c == j) {
                    let e = params.eps_of(st, prep.norms[i], prep.norms[j as usize]);
                    assert!(abs_diff_eq!(sg, st, epsilon = 2.0 * e), "{name} ({i},{j}): device {sg} twin {st}, ε {e}");
                }
            }
        }
        if cols.len() > 63 * g.tiles.points() as usize {
            assert!(from_minima > 0, "{name}: τ' never came from the tile's minima");
        }
    }
}

/// `rank_counts.wgsl`: the twin's certain counts plus its overlaps decided in f64 (what the host
/// does with the device's) are the reference's ranks, exactly, and equal the device's.
#[test]
fn rank_counts() {
    rank_counts_match_twin(kernel_corpus());
}

/// `rank_counts.wgsl` on the linear form's s̃ and ε (cityblock, chebyshev), as above.
#[test]
fn rank_counts_under_cityblock_and_chebyshev() {
    rank_counts_match_twin(linear_corpus().into_iter().filter(|(_, h, _)| h.n() < 1000).collect());
}

fn rank_counts_match_twin(cases: Vec<(String, Points, Points)>) {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in cases {
        let (n, k) = (high.n(), 5);
        let cpu = row_pass(&high, None, &[&low], Needs::cross_with_dists(k), 16);
        let (dev, _) = gpu_row_pass(&g, &high, None, &[&low], Needs::cross_with_dists(k), Numerics::Exact).unwrap();
        let (cl, dl) = (&cpu.lows[0], &dev.lows[0]);
        let queries = &cl.knn.as_ref().unwrap().idx;
        let want = &cl.cross.as_ref().unwrap().rank_high_of_low;
        assert_eq!(&dl.cross.as_ref().unwrap().rank_high_of_low, want, "{name}: device ranks");
        let prep = prepare(&high);
        let mut params = Params::new_form(n, high.dim(), prep.form);
        params.k = k as u32;
        params.cap = u32::MAX;
        let mut compared = 0;
        for i in 0..n {
            let qs = &queries[i * k..(i + 1) * k];
            let row = twin::rank_counts(&params, &prep, i, qs);
            assert_eq!(row.overlaps.len(), row.count as usize, "{name} row {i}: every overlap kept");
            let qkey = |q: usize| key(distance_pair(&high, i, qs[q] as usize), qs[q] as usize);
            for (q, &j) in qs.iter().enumerate() {
                let decided = row
                    .overlaps
                    .iter()
                    .filter(|&&(slot, l)| {
                        slot as usize == q && key(distance_pair(&high, i, l as usize), l as usize) < qkey(q)
                    })
                    .count() as u32;
                assert_eq!(1 + row.certain[q] + decided, want[i * k + q], "{name} row {i} query {j}");
                // Fast counts only inside the undecided overlaps.
                let open = row.overlaps.iter().filter(|&&(slot, _)| slot as usize == q).count() as u32;
                assert!(row.fast[q] <= open, "{name} row {i} query {j}: fast {} of {open}", row.fast[q]);
                compared += 1;
            }
        }
        assert_eq!(compared, n * k);
    }
}

/// `pair_stats.wgsl`: the device's row sums and the twin's, both merged in f64, agree to a
/// relative 1e-4 (f32 sums in different orders), or within 1e-6 of the sums' scale.
#[test]
fn pair_stats() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in kernel_corpus() {
        pair_stats_match_twin(&g, &name, &high, &low);
    }
}

/// `density.wgsl`: the device's normalised densities and the twin's agree to a relative 1e-4.
#[test]
fn density() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    for (name, high, low) in kernel_corpus() {
        let (hx, _) = pair_stats_match_twin(&g, &name, &high, &low);
        if hx.max > 0.0 {
            density_matches_twin(&g, &name, &high, hx.max, &[0.1, 1.0]);
        }
    }
}

/// `exact_sqdist.wgsl`: the device's emulated binary64 sums of squares are the twin's and the
/// reference's bits (their roots `distance_pair`'s), every row's witness complete: the corpus,
/// plus the scales where the emulation's rare paths run (squares in the subnormal range at
/// 1e-160 and 1e-300, near-overflow at 1e140, coordinates one ulp apart, a wide D = 301).
#[test]
fn exact_sqdist() {
    let Some(g) = gpu(GpuRequest::default()) else { return };
    let mut cases = kernel_corpus();
    let mut r = common::Rng(41);
    for (name, scale, d) in [("subnormal_squares", 1e-160, 5), ("subnormal", 1e-300, 3), ("huge", 1e140, 4)] {
        cases.push((name.into(), points(name, 40, d, |_, _| scale * (r.uniform() - 0.5)), uniform("l", 40, 2, 3)));
    }
    let base = uniform("ulp", 2, 7, 5);
    let near = points("ulp_apart", 50, 7, |i, c| {
        let v = base.row(0)[c];
        f64::from_bits(v.to_bits() + (i as u64 * (c as u64 + 1)) % 5)
    });
    cases.push(("ulp_apart".into(), near, uniform("l", 50, 2, 4)));
    cases.push(("wide".into(), uniform("w", 30, 301, 6), uniform("l", 30, 2, 7)));
    for (name, high, low) in cases {
        for p in [&high, &low] {
            let (n, d) = (p.n(), p.dim());
            let kq = n.min(64);
            // Every row against kq points from i + 1 on (wrapping), itself included where kq = n.
            let queries: Vec<u32> = (0..n).flat_map(|i| (0..kq).map(move |t| ((i + 1 + t) % n) as u32)).collect();
            let (sums, trips) = faithful::gpu::exact_sqdist::raw_sums(&g, p, 0, kq, &queries).unwrap();
            let words: Vec<[u32; 2]> = p.as_slice().iter().map(|&v| twin::f64_words(v)).collect();
            for i in 0..n {
                assert_eq!(trips[i] as usize, kq * d, "{name}: row {i}'s witness");
                for t in 0..kq {
                    let j = queries[i * kq + t] as usize;
                    let tw = twin::exact_sqdist(&words[i * d..(i + 1) * d], &words[j * d..(j + 1) * d]);
                    let dev = sums[i * kq + t];
                    assert_eq!(dev, tw, "{name}: ({i}, {j}) device {dev:?} twin {tw:?}");
                    let s = f64::from_bits(u64::from(dev[0]) | (u64::from(dev[1]) << 32));
                    assert_eq!(s.sqrt().to_bits(), distance_pair(p, i, j).to_bits(), "{name}: ({i}, {j})");
                }
            }
        }
    }
}
