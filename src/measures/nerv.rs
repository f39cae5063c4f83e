//! NeRV (`nerv`, Venna, Peltonen, Nybo, Aidos & Kaski, JMLR 2010): per point a Gaussian
//! neighbourhood `p_i` over the other points in X and `q_i` in Y, each with the bandwidth whose
//! neighbourhood has the asked perplexity (`bandwidth=separate`; `shared` reuses X's bandwidth
//! in Y, as SickleJS does), found by the bisection of `resources::pairs::row_terms::fit_beta`;
//! `local_nerv_i = λ KL(p_i‖q_i) + (1−λ) KL(q_i‖p_i)` (probabilities floored at 1e-12 inside
//! the logarithms); `nerv` is their mean, `nerv_recall` the mean of KL(p‖q) and `nerv_precision`
//! the mean of KL(q‖p) (lower is better); `local_nerv_recall` and `local_nerv_precision` are
//! the per-point divergences (each value is the mean of the local output in its position, so
//! NeRV folds from row shards).

use super::support::params::param_str;
use super::{Ctx, Output, Resolved};
use crate::error::{Error, Result};
use crate::resources::NervJob;
use crate::sum::mean;

/// The neighbourhood a spec asks for.
pub(super) fn job(r: &Resolved) -> NervJob {
    NervJob { perplexity: r.float("perplexity"), shared: param_str(r, "bandwidth") == "shared" }
}

/// The perplexity is an effective number of neighbours: 1 ≤ perplexity ≤ n − 1.
pub(super) fn check_perplexity(r: &Resolved, n: usize) -> Result<()> {
    let p = r.float("perplexity");
    if p >= 1.0 && p <= (n - 1) as f64 {
        return Ok(());
    }
    Err(Error::BadParam {
        id: r.def.id.into(),
        param: "perplexity".into(),
        value: p.to_string(),
        reason: format!("must be an effective number of neighbours, 1 <= perplexity <= n-1 (n={n})"),
    })
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    check_perplexity(r, ctx.n())?;
    let want = job(r);
    let lambda = r.float("lambda");
    let rows = ctx
        .sweep()
        .nerv
        .iter()
        .find(|s| s.job.shared == want.shared && s.job.perplexity.to_bits() == want.perplexity.to_bits())
        .expect("planner provides this neighbourhood's divergences");
    let local: Vec<f64> =
        rows.recall.iter().zip(&rows.precision).map(|(a, b)| lambda * a + (1.0 - lambda) * b).collect();
    Ok(Output::new()
        .value("nerv", mean(&local))
        .value("nerv_recall", mean(&rows.recall))
        .value("nerv_precision", mean(&rows.precision))
        .local("local_nerv", local)
        .local("local_nerv_recall", rows.recall.clone())
        .local("local_nerv_precision", rows.precision.clone()))
}
