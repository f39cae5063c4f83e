//! Label trustworthiness & continuity (`l_tnc`): for every pair of classes a < b, a cluster
//! validation measure (CVM) on the points of a ∪ b, once in the original space (c^X_ab) and once
//! in the projection (c^Y_ab); `lt = 1 - Σ max(c^X - c^Y, 0) / (L(L-1)/2)`, `lc` likewise with
//! `c^Y - c^X`.
//!
//! `cvm=dsc` (ZADU's default) is distance consistency and deterministic. `cvm=ch_btw` is ZADU's
//! between-class Calinski-Harabasz-style "shift" score normalised against 20 label shuffles
//! per pair and space; ZADU draws those shuffles from NumPy's global random state, faithful
//! from its own Mersenne Twister seeded with `random_seed` (see [`super::support::ch_btw`]).

use rayon::prelude::*;

use super::support::centroids::consistent;
use super::support::ch_btw;
use super::support::numpy::pairwise_sum_by;
use super::support::params::{param_int, param_str};
use super::support::rng::Mt19937;
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::{Error, Result};

/// The rows of classes `a` and `b` in point order, with codes 0 (a) and 1 (b).
fn pair_rows(codes: &[u32], a: u32, b: u32) -> (Vec<usize>, Vec<u32>) {
    codes.iter().enumerate().filter(|&(_, &c)| c == a || c == b).map(|(i, &c)| (i, u32::from(c == b))).unzip()
}

fn dsc(points: &Points, rows: &[usize], codes: &[u32]) -> f64 {
    consistent(points, rows, codes, 2) as f64 / rows.len() as f64
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let labels = ctx.labels();
    let l = labels.classes();
    let pairs: Vec<(u32, u32)> = (0..l as u32).flat_map(|a| (a + 1..l as u32).map(move |b| (a, b))).collect();
    let cvm = param_str(r, "cvm");
    let (raw, emb): (Vec<f64>, Vec<f64>) = match cvm {
        "dsc" => pairs
            .par_iter()
            .map(|&(a, b)| {
                let (rows, codes) = pair_rows(labels.codes(), a, b);
                (dsc(ctx.high, &rows, &codes), dsc(ctx.low, &rows, &codes))
            })
            .unzip(),
        _ => {
            // One generator for the whole call, drawn pair by pair (original space first), as
            // ZADU draws from NumPy's global state.
            let mut rng = Mt19937::new(param_int(r, "random_seed") as u32);
            let mut raw = Vec::with_capacity(pairs.len());
            let mut emb = Vec::with_capacity(pairs.len());
            for &(a, b) in &pairs {
                let (rows, codes) = pair_rows(labels.codes(), a, b);
                let undefined = |space: &str| Error::Undefined {
                    id: "l_tnc".into(),
                    projection: None,
                    reason: format!(
                        "the ch_btw score of classes {a} and {b} in the {space} is not finite (coinciding points)"
                    ),
                };
                raw.push(ch_btw::score(ctx.high, &rows, &codes, &mut rng).ok_or_else(|| undefined("original space"))?);
                emb.push(ch_btw::score(ctx.low, &rows, &codes, &mut rng).ok_or_else(|| undefined("projection"))?);
            }
            (raw, emb)
        }
    };
    // ZADU fills the upper triangle of L×L matrices and sums all L² entries (NumPy's order).
    let mut lt = vec![0.0; l * l];
    let mut lc = vec![0.0; l * l];
    for (p, &(a, b)) in pairs.iter().enumerate() {
        let at = a as usize * l + b as usize;
        lt[at] = (raw[p] - emb[p]).max(0.0);
        lc[at] = (emb[p] - raw[p]).max(0.0);
    }
    let denom = (l * (l - 1)) as f64 / 2.0;
    let lt = 1.0 - pairwise_sum_by(l * l, &|t| lt[t]) / denom;
    let lc = 1.0 - pairwise_sum_by(l * l, &|t| lc[t]) / denom;
    Ok(Output::new().value("label_trustworthiness", lt).value("label_continuity", lc))
}
