//! Random-triplet accuracy (`triplet_accuracy`, PaCMAP's `random_triplet_eval`, Wang, Huang,
//! Rudin & Shaposhnik, JMLR 2021): the share of triplets (i, j, l) whose order
//! `d(i,j) < d(i,l)` is the same in both spaces (a tie is "not closer", as PaCMAP's strict `<`:
//! a pair tied in one space agrees only with a pair tied or reversed in the other).
//!
//! Sampled (default): T triplets (`n_triplets`, 0 = 5n, PaCMAP's five per point); triplet r's
//! anchor is `⌊r n / T⌋` (for T = 5n each point five times, in order, as PaCMAP) and its (j, l)
//! are draws `2r`, `2r + 1` of `np.random.default_rng(random_state).integers(0, n, size=(T, 2))`
//! (PaCMAP's `rng.choice(n, (n, 5, 2))` with its seed: the same stream). `exhaustive=true`:
//! every anchor i and every pair j < l of the other points, n(n−1)(n−2)/2 triplets, refused
//! above [`EXHAUSTIVE_MAX`].

use rayon::prelude::*;

use super::support::pairwise::undefined;
use super::support::params::{param_int, param_str};
use super::support::rng::Pcg64;
use super::{Ctx, Output, Resolved};
use crate::error::{Error, Result};
use crate::reference::{distance_pair, distance_row};

/// Bytes each sampled triplet holds while it is evaluated (two u32 draws).
pub(super) const BYTES_PER_TRIPLET: u64 = 8;

/// The most triplets `exhaustive=true` takes (about n = 1800).
pub const EXHAUSTIVE_MAX: u64 = 1_000_000_000;

/// The number of sampled triplets: `n_triplets`, or 5n for 0.
pub(super) fn triplets(n: usize, n_triplets: i64) -> u64 {
    if n_triplets == 0 { 5 * n as u64 } else { n_triplets as u64 }
}

/// Every triplet of n points: n(n−1)(n−2)/2.
fn all_triplets(n: usize) -> u64 {
    let n = n as u64;
    n * n.saturating_sub(1) * n.saturating_sub(2) / 2
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let n = ctx.n();
    let id = "triplet_accuracy";
    if param_str(r, "exhaustive") == "true" {
        let total = all_triplets(n);
        if total == 0 {
            return Err(undefined(id, "exhaustive triplets need at least 3 points"));
        }
        if total > EXHAUSTIVE_MAX {
            return Err(Error::BadParam {
                id: id.into(),
                param: "exhaustive".into(),
                value: "true".into(),
                reason: format!(
                    "{n} points make {total} triplets, more than {EXHAUSTIVE_MAX}: sample them (n_triplets) instead"
                ),
            });
        }
        let agree: u64 = (0..n).into_par_iter().map(|i| agreeing_pairs(ctx, i)).sum();
        return Ok(Output::new().value(id, agree as f64 / total as f64));
    }
    let t = triplets(n, param_int(r, "n_triplets"));
    if t == 0 {
        return Err(undefined(id, "there are no triplets to sample"));
    }
    let mut rng = Pcg64::new(param_int(r, "random_state") as u64);
    let draws: Vec<u32> = (0..2 * t).map(|_| rng.integers(n as u64) as u32).collect();
    let (high, low) = (ctx.high, ctx.low);
    let agree: u64 = draws
        .par_chunks(2 * 4096)
        .enumerate()
        .map(|(c, chunk)| {
            let start = c as u64 * 4096;
            chunk
                .chunks(2)
                .enumerate()
                .filter(|(s, jl)| {
                    let a = ((start + *s as u64) as u128 * n as u128 / t as u128) as usize;
                    let (j, l) = (jl[0] as usize, jl[1] as usize);
                    let x = distance_pair(high, a, j) < distance_pair(high, a, l);
                    let y = distance_pair(low, a, j) < distance_pair(low, a, l);
                    x == y
                })
                .count() as u64
        })
        .sum();
    Ok(Output::new().value(id, agree as f64 / t as f64))
}

/// Anchor i's agreeing pairs j < l (both ≠ i).
fn agreeing_pairs(ctx: &Ctx, i: usize) -> u64 {
    let n = ctx.n();
    let (mut dx, mut dy) = (vec![0.0; n], vec![0.0; n]);
    distance_row(ctx.high, i, &mut dx);
    distance_row(ctx.low, i, &mut dy);
    let mut agree = 0u64;
    for j in 0..n {
        if j == i {
            continue;
        }
        let (xj, yj) = (dx[j], dy[j]);
        let from = j + 1;
        let mut c = 0u64;
        for l in from..n {
            c += u64::from((xj < dx[l]) == (yj < dy[l]));
        }
        // The pair (j, i) with l = i was counted when i > j: take it out.
        if i > j {
            c -= u64::from((xj < dx[i]) == (yj < dy[i]));
        }
        agree += c;
    }
    agree
}
