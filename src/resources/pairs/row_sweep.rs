//! [`row_sweep`]: one sweep over full distance rows for the all-pairs measures whose per-point
//! values need a point's whole row (Sammon, CCA, the average local error, NeRV), which also
//! gives the [`PairSums`] (stress, scale-normalised stress, Pearson, residual variance) from each
//! row's pairs j > i when they are asked for together: one pass, as SickleJS's fused pass.
//!
//! Each row's results depend only on the row; the totals are NumPy's pairwise sums over the rows
//! in index order and the pair sums merge by the fixed tree of [`tree`], so the results are the
//! same bits for any thread count and block size. Memory: two distance rows (and for NeRV four
//! more) of O(n) per worker, and O(n) results per measure.

use std::ops::Range as Rows;

use rayon::prelude::*;

use super::super::scratch_pool::Pool;
use super::extent::Extent;
use super::row_terms::{
    CcaJob, Kernel, NervJob, ale_row, cca_row, fit_beta, kl_both, neighbourhood, normalise, sammon_row, squares,
};
use super::sums::{PairSums, tree};
use super::tile_sweep::{self, TileJob};
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::distance_row;
use crate::sum::pairwise_sum;

/// What one [`row_sweep`] computes, for every projection.
#[derive(Debug, Clone, Default)]
pub(crate) struct SweepJob {
    /// The [`PairSums`] of the pairs j > i.
    pub sums: bool,
    /// Sammon's sums.
    pub sammon: bool,
    /// CCA's sums, one per weighting.
    pub cca: Vec<CcaJob>,
    /// The average local error, with the largest distance of the original space and of each
    /// projection (both > 0), of the distances (`false`) and/or their squares (`true`).
    pub ale: Option<(f64, Vec<f64>, Vec<bool>)>,
    /// NeRV's divergences, one per neighbourhood.
    pub nerv: Vec<NervJob>,
}

/// A weighted ratio's sums: the numerator and denominator per row (full rows, each pair in both
/// of its rows) and their totals.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioSums {
    /// Σ over the rows of each row's numerator (every pair counted twice).
    pub num: f64,
    /// Σ over the rows of each row's denominator (every pair counted twice).
    pub den: f64,
    /// Each row's numerator.
    pub rows: Vec<f64>,
}

/// NeRV's per-point divergences for one neighbourhood.
#[derive(Debug, Clone, PartialEq)]
pub struct NervRows {
    pub job: NervJob,
    /// `KL(p_i ‖ q_i)` per point (recall).
    pub recall: Vec<f64>,
    /// `KL(q_i ‖ p_i)` per point (precision).
    pub precision: Vec<f64>,
}

/// What the full-row sweep found for one projection.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowSweep {
    /// Each pair was measured once for both of its rows (the tiled sweep), not in each row.
    pub tiled: bool,
    /// The extent of the projection's pair distances.
    pub low: Option<Extent>,
    /// The pair sums, when asked for.
    pub sums: Option<PairSums>,
    /// Sammon's sums: Σ (d^X − d^Y)²/d^X over pairs with d^X > 0, and Σ d^X.
    pub sammon: Option<RatioSums>,
    /// Pairs i < j at original distance 0 (left out of Sammon's stress).
    pub zero_high_pairs: u64,
    /// CCA's sums per weighting, in the job's order.
    pub cca: Vec<(CcaJob, RatioSums)>,
    /// Per point, the average local error: `(squared, values)` per variant asked for.
    pub ale: Vec<(bool, Vec<f64>)>,
    /// NeRV per neighbourhood, in the job's order.
    pub nerv: Vec<NervRows>,
}

/// One row's results for one projection.
#[derive(Clone)]
struct RowOut {
    high: Extent,
    low: Extent,
    sums: PairSums,
    zero_high: u64,
    sammon: [f64; 2],
    cca: Vec<[f64; 2]>,
    ale: Vec<f64>,
    nerv: Vec<[f64; 2]>,
}

/// Scratch of one worker: the two distance rows and NeRV's squared rows, kernels and
/// neighbourhoods (X's, one per job, fitted once per row and kept for every projection).
#[derive(Default)]
struct Scratch {
    dx: Vec<f64>,
    dy: Vec<f64>,
    x2: Vec<f64>,
    y2: Vec<f64>,
    kernel: Kernel,
    px: Vec<Vec<f64>>,
    q: Vec<f64>,
    /// CCA's weights.
    weight: Vec<f64>,
}

/// The sweep: for every row i, `d^X(i, ·)` once and `d^Y(i, ·)` per projection, and what `job`
/// asks of them. Returns the original space's extent and one [`RowSweep`] per projection.
pub(crate) fn row_sweep(
    high: &Points,
    lows: &[&Points],
    job: &SweepJob,
    block_rows: usize,
    ctl: &Control,
) -> Result<(Extent, Vec<RowSweep>)> {
    row_sweep_rows(high, lows, job, block_rows, ctl, 0..high.n())
}

/// [`row_sweep`] over the rows `range` only (a shard's block): every per-point vector then
/// holds those rows, in order, and the totals are theirs. Each row's values are the same bits
/// as in a sweep over all rows.
pub(crate) fn row_sweep_rows(
    high: &Points,
    lows: &[&Points],
    job: &SweepJob,
    block_rows: usize,
    ctl: &Control,
    range: Rows<usize>,
) -> Result<(Extent, Vec<RowSweep>)> {
    let n = high.n();
    let width = lows.len() * tile_job(job).width();
    let tiled = tile_sweep::serves(high, lows, &range, job.sums || !job.nerv.is_empty(), width);
    let (per_block, totals) = if tiled {
        tiled_rows(high, lows, job, ctl)?
    } else {
        let per_block = full_rows(high, lows, job, block_rows, ctl, range)?;
        let totals = Totals::of(&per_block, lows.len());
        (per_block, totals)
    };
    let mut results = Vec::with_capacity(lows.len());
    for p in 0..lows.len() {
        let rows: Vec<&RowOut> = per_block.iter().flat_map(|b| b[p].iter()).collect();
        let ratio = |f: &dyn Fn(&RowOut) -> [f64; 2]| {
            let num: Vec<f64> = rows.iter().map(|r| f(r)[0]).collect();
            let den: Vec<f64> = rows.iter().map(|r| f(r)[1]).collect();
            RatioSums { num: pairwise_sum(&num), den: pairwise_sum(&den), rows: num }
        };
        results.push(RowSweep {
            tiled,
            low: Some(totals.lows[p]),
            sums: job
                .sums
                .then(|| tree(&rows.iter().map(|r| r.sums).collect::<Vec<_>>(), PairSums::default(), &PairSums::merge)),
            sammon: job.sammon.then(|| ratio(&|r| r.sammon)),
            zero_high_pairs: totals.zero_high,
            cca: job.cca.iter().enumerate().map(|(c, cj)| (*cj, ratio(&|r| r.cca[c]))).collect(),
            ale: job.ale.as_ref().map_or(Vec::new(), |(_, _, variants)| {
                variants
                    .iter()
                    .enumerate()
                    .map(|(v, &sq)| (sq, rows.iter().map(|r| r.ale[v] / (n - 1) as f64).collect()))
                    .collect()
            }),
            nerv: job
                .nerv
                .iter()
                .enumerate()
                .map(|(k, nj)| NervRows {
                    job: *nj,
                    recall: rows.iter().map(|r| r.nerv[k][0]).collect(),
                    precision: rows.iter().map(|r| r.nerv[k][1]).collect(),
                })
                .collect(),
        });
    }
    Ok((totals.high, results))
}

/// Over the pairs i < j: each space's extent and the pairs at original distance 0.
struct Totals {
    high: Extent,
    lows: Vec<Extent>,
    zero_high: u64,
}

impl Totals {
    /// From the rows' own (the full-row sweep's blocks).
    fn of(per_block: &[Vec<Vec<RowOut>>], np: usize) -> Totals {
        let rows = |p: usize| per_block.iter().flat_map(move |b| b[p].iter());
        Totals {
            high: rows(0).fold(Extent::EMPTY, |e, r| e.join(r.high)),
            lows: (0..np).map(|p| rows(p).fold(Extent::EMPTY, |e, r| e.join(r.low))).collect(),
            zero_high: rows(0).map(|r| r.zero_high).sum(),
        }
    }
}

/// What the tiles sum for `job` (its Sammon, CCA and average-local-error parts).
fn tile_job(job: &SweepJob) -> TileJob<'_> {
    TileJob { sammon: job.sammon, cca: &job.cca, ale: job.ale.as_ref().map(|(mx, my, v)| (*mx, &my[..], &v[..])) }
}

/// The rows' results from [`tile_sweep`], per projection.
fn tiled_rows(
    high: &Points,
    lows: &[&Points],
    job: &SweepJob,
    ctl: &Control,
) -> Result<(Vec<Vec<Vec<RowOut>>>, Totals)> {
    let (n, np) = (high.n(), lows.len());
    let variants = job.ale.as_ref().map_or(&[][..], |(_, _, v)| &v[..]);
    let tj = tile_job(job);
    let t = tile_sweep::tile_sweep(high, lows, &tj, ctl)?;
    let q = tj.width();
    let per_p = (0..np)
        .map(|p| {
            (0..n)
                .map(|i| {
                    let mut v = t.sums[i * t.width + p * q..i * t.width + (p + 1) * q].iter().copied();
                    let mut take = || v.next().expect("the row's sums");
                    RowOut {
                        // The totals say these (the tiles measured them).
                        high: Extent::EMPTY,
                        low: Extent::EMPTY,
                        sums: PairSums::default(),
                        zero_high: 0,
                        sammon: if job.sammon { [take(), take()] } else { [0.0; 2] },
                        cca: job.cca.iter().map(|_| [take(), take()]).collect(),
                        ale: variants.iter().map(|_| take()).collect(),
                        nerv: Vec::new(),
                    }
                })
                .collect()
        })
        .collect();
    Ok((vec![per_p], Totals { high: t.high, lows: t.low, zero_high: t.zero_high }))
}

/// The rows `range` one at a time, both distance rows in full: per block, per projection.
fn full_rows(
    high: &Points,
    lows: &[&Points],
    job: &SweepJob,
    block_rows: usize,
    ctl: &Control,
    range: Rows<usize>,
) -> Result<Vec<Vec<Vec<RowOut>>>> {
    let n = high.n();
    let end = range.end;
    let blocks: Vec<Rows<usize>> =
        range.step_by(block_rows.max(1)).map(|s| s..(s + block_rows.max(1)).min(end)).collect();
    let done = std::sync::atomic::AtomicU64::new(0);
    let pool: Pool<Scratch> = Pool::new();
    blocks
        .par_iter()
        .map(|rows| {
            pool.with(|s| {
                ctl.check()?;
                s.dx.resize(n, 0.0);
                s.dy.resize(n, 0.0);
                if !job.nerv.is_empty() {
                    for v in [&mut s.x2, &mut s.y2, &mut s.q] {
                        v.resize(n, 0.0);
                    }
                    s.px.resize_with(job.nerv.len(), Vec::new);
                    s.px.iter_mut().for_each(|p| p.resize(n, 0.0));
                }
                let mut out = vec![Vec::with_capacity(rows.len()); lows.len()];
                for i in rows.clone() {
                    distance_row(high, i, &mut s.dx);
                    if !job.nerv.is_empty() {
                        squares(&s.dx, i, &mut s.x2);
                    }
                    // NeRV's original-space bandwidth and neighbourhood depend only on X's row and
                    // the perplexity: once per row, whatever the number of projections.
                    let mut betas_x = Vec::with_capacity(job.nerv.len());
                    for (nj, px) in job.nerv.iter().zip(&mut s.px) {
                        let (beta, total) = fit_beta(&s.x2, i, nj.perplexity, &mut s.kernel);
                        normalise(&s.kernel.e, total, px);
                        betas_x.push(beta);
                    }
                    for (p, low) in lows.iter().enumerate() {
                        distance_row(low, i, &mut s.dy);
                        out[p].push(row(s, i, p, job, &betas_x));
                    }
                }
                let d = done.fetch_add(rows.len() as u64, std::sync::atomic::Ordering::Relaxed) + rows.len() as u64;
                ctl.report("all-pairs sweep", d, n as u64);
                Ok(out)
            })
        })
        .collect::<Result<_>>()
}

/// Row i's results for projection p, its two distance rows in the scratch.
fn row(s: &mut Scratch, i: usize, p: usize, job: &SweepJob, betas_x: &[f64]) -> RowOut {
    let (dx, dy) = (&s.dx[..], &s.dy[..]);
    let (hx, hy) = (&dx[i + 1..], &dy[i + 1..]);
    let mut r = RowOut {
        high: Extent::of(hx),
        low: Extent::of(hy),
        zero_high: hx.iter().filter(|&&d| d == 0.0).count() as u64,
        sums: PairSums::default(),
        sammon: [0.0; 2],
        cca: Vec::new(),
        ale: Vec::new(),
        nerv: Vec::new(),
    };
    if job.sums {
        r.sums = PairSums::of_row(hx, hy);
    }
    if job.sammon {
        r.sammon = sammon_row(dx, dy);
    }
    r.cca = job.cca.iter().map(|&c| cca_row(dx, dy, c, &mut s.weight)).collect();
    if let Some((max_x, max_y, variants)) = &job.ale {
        r.ale = variants.iter().map(|&sq| ale_row(dx, dy, *max_x, max_y[p], sq)).collect();
    }
    if !job.nerv.is_empty() {
        squares(dy, i, &mut s.y2);
    }
    r.nerv = job
        .nerv
        .iter()
        .zip(betas_x)
        .zip(&s.px)
        .map(|((nj, &beta_x), px)| {
            if nj.shared {
                neighbourhood(&s.y2, i, beta_x, &mut s.kernel, &mut s.q);
            } else {
                let (_, total) = fit_beta(&s.y2, i, nj.perplexity, &mut s.kernel);
                normalise(&s.kernel.e, total, &mut s.q);
            }
            kl_both(px, &s.q, i)
        })
        .collect();
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::pairs::CcaKernel;

    /// Hostile points: duplicates, a lattice with exact ties, 1e-9 jitter, a scale.
    fn points(n: usize, dim: usize, seed: u64, scale: f64) -> Points {
        let mut rng = crate::splitmix::SplitMix64(seed);
        let v: Vec<f64> = (0..n * dim)
            .map(|t| match (t / dim) % 5 {
                0 => ((t % dim) as f64) * scale,
                1 => ((t * 7 % 4) as f64 + 1e-9 * rng.uniform()) * scale,
                _ => (rng.uniform() * 10.0).round() * scale,
            })
            .collect();
        Points::from_vec("p", n, dim, v).unwrap()
    }

    /// The tiled sweep gives every row's sums and the totals of the full-row sweep, bit for
    /// bit: one leaf (n ≤ 128), leaves whose last is not a multiple of 8, duplicates and zero
    /// distances, two projections, both CCA kernels and both average-local-error variants; the
    /// vector versions this CPU has and the portable ones.
    #[test]
    fn tiles_are_the_full_rows_bits() {
        let ctl = Control::default();
        let cases = [(8usize, 1u64), (9, 2), (61, 3), (128, 4), (129, 5), (300, 6), (1003, 7)];
        for (portable, (n, seed)) in [false, true].into_iter().flat_map(|p| cases.map(|c| (p, c))) {
            #[cfg(target_arch = "x86_64")]
            crate::resources::isa::PORTABLE.store(portable, std::sync::atomic::Ordering::Relaxed);
            let high = points(n, 6, seed, if seed % 2 == 0 { 1e-150 } else { 1.0 });
            let (a, b) = (points(n, 2, seed + 10, 3.0), points(n, 2, seed + 20, 1e100));
            let lows = [&a, &b];
            assert!(tile_sweep::serves(&high, &lows, &(0..n), false, 14));
            // Stacks beyond the cap: the full rows serve.
            assert!(!tile_sweep::serves(&high, &lows, &(0..n), false, usize::MAX / 2));
            let job = SweepJob {
                sums: false,
                sammon: true,
                cca: vec![
                    CcaJob { lambda: 2.0, kernel: CcaKernel::Exponential },
                    CcaJob { lambda: 4.0, kernel: CcaKernel::Step },
                ],
                ale: Some((7.0, vec![3.0, 1e101], vec![false, true])),
                nerv: Vec::new(),
            };
            let (tiled, totals) = tiled_rows(&high, &lows, &job, &ctl).unwrap();
            for block_rows in [1, 7, 64] {
                let full = full_rows(&high, &lows, &job, block_rows, &ctl, 0..n).unwrap();
                let want = Totals::of(&full, 2);
                assert_eq!((totals.high, &totals.lows, totals.zero_high), (want.high, &want.lows, want.zero_high));
                for p in 0..2 {
                    let rows: Vec<&RowOut> = full.iter().flat_map(|b| b[p].iter()).collect();
                    for (i, (t, f)) in tiled[0][p].iter().zip(rows).enumerate() {
                        let bits = |r: &RowOut| -> Vec<u64> {
                            r.sammon.iter().chain(r.cca.iter().flatten()).chain(&r.ale).map(|v| v.to_bits()).collect()
                        };
                        assert_eq!(bits(t), bits(f), "n {n}, projection {p}, row {i}, portable {portable}");
                    }
                }
            }
        }
    }
}
