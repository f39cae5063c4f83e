//! Class angular distortion index (`cadi`, Gunaratne, Kobourov & Miller): T random triplets
//! (x, y, z) with y ≠ z from one class B of at least two points and x from another class A; the
//! cosine of the angle y-x-z in X and in Y; score `Σ (cos_X - cos_Y)² / (4T)`. T = `n_triplets`,
//! or 10n when it is 0 (ZADU's default).
//!
//! The triplets are drawn as ZADU's kernel draws them, from `np.random.default_rng(random_seed)`
//! (PCG64, numba's `Generator.integers`; see [`super::support::rng::Pcg64`]), so with the same
//! `random_seed` faithful's score is ZADU's. ZADU's default `random_seed=None` draws fresh OS
//! entropy (a different score on every call); faithful's default is 0.

use rayon::prelude::*;

use super::support::params::param_int;
use super::support::rng::Pcg64;
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::{Error, Result};

fn undefined(reason: impl Into<String>) -> Error {
    Error::Undefined { id: "cadi".into(), projection: None, reason: reason.into() }
}

/// ZADU's `_get_cosine`: the cosine of the angle at x, differences scaled by their largest
/// coordinate first (0 when y or z coincides with x), clipped to [-1, 1].
fn cosine(p: &Points, x: usize, y: usize, z: usize) -> f64 {
    let (px, py, pz) = (p.row(x), p.row(y), p.row(z));
    let (mut s1, mut s2) = (0.0f64, 0.0f64);
    for j in 0..p.dim() {
        s1 = s1.max((py[j] - px[j]).abs());
        s2 = s2.max((pz[j] - px[j]).abs());
    }
    if s1 == 0.0 || s2 == 0.0 {
        return 0.0;
    }
    let (mut dot, mut n1, mut n2) = (0.0, 0.0, 0.0);
    for j in 0..p.dim() {
        let v1 = (py[j] - px[j]) / s1;
        let v2 = (pz[j] - px[j]) / s2;
        dot += v1 * v2;
        n1 += v1 * v1;
        n2 += v2 * v2;
    }
    (dot / n1.sqrt() / n2.sqrt()).clamp(-1.0, 1.0)
}

/// ZADU's triplet sampler: class B (≥ 2 points) first, then A among the other classes, then x in
/// A and y ≠ z in B.
fn sample(rng: &mut Pcg64, members: &[Vec<usize>], valid_b: &[usize]) -> (usize, usize, usize) {
    let cb = valid_b[rng.integers(valid_b.len() as u64) as usize];
    let mut ca = rng.integers(members.len() as u64 - 1) as usize;
    if ca >= cb {
        ca += 1;
    }
    let (a, b) = (&members[ca], &members[cb]);
    let x = a[rng.integers(a.len() as u64) as usize];
    let y_off = rng.integers(b.len() as u64);
    let mut z_off = rng.integers(b.len() as u64);
    while y_off == z_off {
        z_off = rng.integers(b.len() as u64);
    }
    (x, b[y_off as usize], b[z_off as usize])
}

/// Memory per triplet: its three indices and its squared difference.
pub(super) const BYTES_PER_TRIPLET: u64 = 3 * std::mem::size_of::<usize>() as u64 + 8;

/// The number of triplets drawn for `n_triplets` (validated ≥ 0): 10n when it is 0.
pub(super) fn triplets(n: usize, n_triplets: i64) -> u64 {
    if n_triplets == 0 { 10 * n as u64 } else { n_triplets as u64 }
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let n = ctx.n();
    if n < 3 {
        return Err(undefined("CADI needs at least 3 points"));
    }
    // Both validated by the registry (a count, a seed) and against the memory budget.
    let t = triplets(n, param_int(r, "n_triplets")) as usize;
    let seed = param_int(r, "random_seed");
    let labels = ctx.labels();
    let mut members = vec![Vec::new(); labels.classes()];
    for (i, &c) in labels.codes().iter().enumerate() {
        members[c as usize].push(i);
    }
    let valid_b: Vec<usize> = (0..members.len()).filter(|&c| members[c].len() >= 2).collect();
    if valid_b.is_empty() {
        return Err(undefined("every class has a single point (CADI needs a class of at least 2 to draw y and z)"));
    }
    if members.iter().any(|m| m.len() as u64 > u64::from(u32::MAX)) {
        return Err(undefined("a class is too large for ZADU's 32-bit sampler"));
    }
    // Draw every triplet in ZADU's order, then evaluate them in parallel and sum in order.
    let mut rng = Pcg64::new(seed as u64);
    let triplets: Vec<(usize, usize, usize)> = (0..t).map(|_| sample(&mut rng, &members, &valid_b)).collect();
    let diffs: Vec<f64> = triplets
        .par_iter()
        .map(|&(x, y, z)| {
            let d = cosine(ctx.high, x, y, z) - cosine(ctx.low, x, y, z);
            d * d
        })
        .collect();
    let mut sum = 0.0;
    for d in diffs {
        sum += d;
    }
    Ok(Output::new().value("class_angular_distortion_index", sum / (4.0 * t as f64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_by_hand() {
        let p = Points::from_vec("p", 4, 2, vec![0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 3.0, 3.0]).unwrap();
        assert_eq!(cosine(&p, 0, 1, 2), 0.0); // right angle
        assert!((cosine(&p, 0, 1, 3) - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15); // 45°
        assert_eq!(cosine(&p, 0, 0, 2), 0.0); // y coincides with x
    }
}
