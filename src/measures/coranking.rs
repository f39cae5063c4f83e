//! The co-ranking family (`coranking`, faithful's own measure): quality at every neighbourhood
//! size K = 1 ..= k_max from one exact pass (Lee & Verleysen's co-ranking framework).
//!
//! From the pass's integer counts (see `resources::coranking`):
//! - `Q_NX(K) = joint(K) / (nK)`, `R_NX(K) = ((n−1) Q_NX(K) − K) / (n−1−K)`,
//!   `LCMC(K) = Q_NX(K) − K/(n−1)` (ZADU's lcmc at k = K);
//! - `T(K) = 1 − trust(K) · 2/(K(2n−3K−1)) / n`, C likewise (ZADU's tnc at k = K, K < n/2);
//! - `MRRE_false(K) = 1 − (Σ_{m≤K} err_low(m)/m) / c(K) / n` with ZADU's `c(K)`, missing with
//!   err_high (ZADU's mrre at k = K);
//! - the AUC of R_NX on a log-K axis, `(Σ_K R_NX(K)/K) / (Σ_K 1/K)`, and Lueks et al.'s
//!   K_max = argmax LCMC (the first), Q_local = mean Q_NX(K ≤ K_max), Q_global = mean
//!   Q_NX(K ≥ K_max).
//!
//! Every curve is a fixed function of integers, so it is the same bits for any thread count
//! and block plan. The local value of point i is its own R_NX AUC (from its own counts).

use super::{Ctx, Output, Resolved, tnc_factor};
use crate::error::Result;
use crate::resources::{
    CoRankCounts, FusedLists, ListKs, RankBins, coranking_from_lists, coranking_matrix_pass, coranking_pass_fused,
    coranking_pass_rows,
};
use crate::sum::{Compensated, pairwise_sum, pairwise_sum_by};

/// `k_max` as resolved: the parameter, or n − 2 for 0 (validated by `Resolved::check_k`).
pub fn k_max(r: &Resolved, n: usize) -> usize {
    if r.k == 0 { n - 2 } else { r.k }
}

/// `R_NX(K)` from `Q_NX(K)`.
#[inline]
pub fn rnx(n: usize, k: usize, q: f64) -> f64 {
    ((n - 1) as f64 * q - k as f64) / (n - 1 - k) as f64
}

/// The area under `curve(K)` (K = 1 ..= len) on a log-K axis: `(Σ curve(K)/K) / (Σ 1/K)`,
/// both sums in NumPy's pairwise order.
pub fn log_auc(len: usize, curve: impl Fn(usize) -> f64) -> f64 {
    log_weighted_sum(len, curve) / log_weight(len)
}

/// `Σ curve(K)/K` for K = 1 ..= len, [`log_auc`]'s numerator.
fn log_weighted_sum(len: usize, curve: impl Fn(usize) -> f64) -> f64 {
    pairwise_sum_by(len, &|t| curve(t + 1) / (t + 1) as f64)
}

/// `Σ 1/K` for K = 1 ..= len, [`log_auc`]'s denominator.
fn log_weight(len: usize) -> f64 {
    pairwise_sum_by(len, &|t| 1.0 / (t + 1) as f64)
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let n = ctx.n();
    let km = k_max(r, n);
    if let Some(g) = ctx.high.knn_graph() {
        // From a kNN graph: Q_NX, R_NX, LCMC and what follows from them for K ≤ k_max (the
        // planner checked k_max against the graph's k); the rank-based curves need ranks.
        let own_auc = own_auc(n, km);
        let counts = coranking_from_lists((g.lists().0, g.k()), ctx.low, km, ctx.block_rows, ctx.ctl, &own_auc)?;
        let mut out = output(counts);
        out.curves.retain(|(_, v)| !v.is_empty());
        return Ok(out);
    }
    // The counts of the fused pass that built the other measures' lists, when it ran with this
    // k_max; else this measure's own pass.
    let counts = match ctx.coranking {
        Some(c) if c.k_max == km => c.clone(),
        _ => counts_rows(ctx.high, ctx.low, km, ctx.block_rows, ctx.ctl, 0..n)?,
    };
    Ok(output(counts))
}

/// The pass's counts over the rows `rows` with the kNN lists and cross ranks of `lists` read
/// off the same sorted rows (the row pass and this measure's pass fused), each row's summary its
/// own R_NX AUC as in [`counts_rows`].
pub fn fused(
    high: &crate::Points,
    low: &crate::Points,
    km: usize,
    lists: ListKs,
    block_rows: usize,
    ctl: &crate::Control,
    rows: std::ops::Range<usize>,
) -> Result<(CoRankCounts, FusedLists)> {
    let own_auc = own_auc(high.n(), km);
    coranking_pass_fused(high, low, km, lists, block_rows, ctl, &own_auc, rows)
}

/// A row's summary: its own R_NX AUC from its joint counts (`cum[K − 1]`, K ≤ km).
fn own_auc(n: usize, km: usize) -> impl Fn(&[u32]) -> f64 + Sync {
    // Every row has k_max counts, so [`log_auc`]'s denominator is computed once (the same bits).
    let weight = log_weight(km);
    move |cum: &[u32]| {
        debug_assert_eq!(cum.len(), km);
        // The terms of `log_weighted_sum(km, |k| rnx(n, k, cum[k − 1] / k))`, the same operations
        // in a loop that vectorises, then the same pairwise sum over them.
        TERMS.with_borrow_mut(|terms| {
            terms.clear();
            terms.extend(cum.iter().enumerate().map(|(t, &c)| {
                let k = t + 1;
                rnx(n, k, f64::from(c) / k as f64) / k as f64
            }));
            pairwise_sum(terms) / weight
        })
    }
}

thread_local! {
    /// [`own_auc`]'s terms of one row (reused: a row summary runs per row).
    static TERMS: std::cell::RefCell<Vec<f64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The pass's counts over the rows `rows` (all of them for the measure, one block for a
/// shard), each row's summary its own R_NX AUC.
pub fn counts_rows(
    high: &crate::Points,
    low: &crate::Points,
    km: usize,
    block_rows: usize,
    ctl: &crate::Control,
    rows: std::ops::Range<usize>,
) -> Result<CoRankCounts> {
    // A point's own Q_NX(K) is its count over K.
    let own_auc = own_auc(high.n(), km);
    coranking_pass_rows(high, low, km, block_rows, ctl, &own_auc, rows)
}

/// [`counts_rows`] over every row, also tallying the co-ranking matrix in `bins` (the views'
/// heatmap): the counts are those of the plain pass.
pub fn counts_rows_binned(
    high: &crate::Points,
    low: &crate::Points,
    km: usize,
    block_rows: usize,
    ctl: &crate::Control,
    bins: &RankBins,
) -> Result<(CoRankCounts, Vec<u64>)> {
    let own_auc = own_auc(high.n(), km);
    coranking_matrix_pass(high, low, km, block_rows, ctl, &own_auc, bins)
}

/// The measure's output from the counts of every row (a fixed function of the integers).
pub fn output(counts: CoRankCounts) -> Output {
    let km = counts.k_max;
    let curves = curves(&counts);
    let (qnx, lcmc) = (&curves[0].1, &curves[2].1);
    let auc = log_auc(km, |k| curves[1].1[k - 1]);
    // The first K of the largest LCMC.
    let best = lcmc.iter().enumerate().fold(0, |b, (t, &v)| if v > lcmc[b] { t } else { b });
    let mean = |v: &[f64]| pairwise_sum(v) / v.len() as f64;
    let (q_local, q_global) = (mean(&qnx[..=best]), mean(&qnx[best..]));
    let out = Output::new()
        .value("auc_rnx", auc)
        .value("q_local", q_local)
        .value("q_global", q_global)
        .value("k_max_lcmc", (best + 1) as f64)
        .local("local_auc_rnx", counts.rows);
    curves.into_iter().fold(out, |out, (name, v)| out.curve(name, v))
}

/// Every curve from the counts, by key, index K − 1.
pub fn curves(c: &CoRankCounts) -> Vec<(&'static str, Vec<f64>)> {
    let n = c.n;
    let nf = n as f64;
    let qnx: Vec<f64> = c.joint.iter().enumerate().map(|(t, &j)| j as f64 / (n * (t + 1)) as f64).collect();
    let rnx_curve = qnx.iter().enumerate().map(|(t, &q)| rnx(n, t + 1, q)).collect();
    let lcmc = qnx.iter().enumerate().map(|(t, &q)| q - (t + 1) as f64 / (n - 1) as f64).collect();
    let tnc = |num: &[u128]| -> Vec<f64> {
        num.iter().enumerate().map(|(t, &s)| 1.0 - s as f64 * tnc_factor(n, t + 1) / nf).collect()
    };
    let (mf, mm) = mrre(n, &c.err_low, &c.err_high);
    vec![
        ("qnx", qnx),
        ("rnx", rnx_curve),
        ("lcmc", lcmc),
        ("mrre_false", mf),
        ("mrre_missing", mm),
        ("trustworthiness", tnc(&c.trust)),
        ("continuity", tnc(&c.cont)),
    ]
}

/// MRRE for every K: `1 − (Σ_{m ≤ K} err(m)/m) / c(K) / n`, the sums compensated and `c(K)`
/// summed as ZADU (and `mrre`) sum it.
fn mrre(n: usize, err_low: &[u64], err_high: &[u64]) -> (Vec<f64>, Vec<f64>) {
    let (mut c, mut f, mut m) = (0.0, Compensated::default(), Compensated::default());
    let (mut false_curve, mut missing_curve) = (Vec::with_capacity(err_low.len()), Vec::with_capacity(err_low.len()));
    for (t, (&lo, &hi)) in err_low.iter().zip(err_high).enumerate() {
        let rank = t as i64 + 1;
        c += (n as i64 - 2 * rank + 1).abs() as f64 / rank as f64;
        f.add(lo as f64 / rank as f64);
        m.add(hi as f64 / rank as f64);
        false_curve.push(1.0 - f.value() / c / n as f64);
        missing_curve.push(1.0 - m.value() / c / n as f64);
    }
    (false_curve, missing_curve)
}
