//! Hypothesis margin (`hypothesis_margin`, Gilad-Bachrach, Navot & Tishby, ICML 2004): per point
//! `½ (d(y, nearmiss(y)) − d(y, nearhit(y)))` in the projection, the near hit being the nearest
//! other point of its class and the near miss the nearest point of another class (exact
//! distances; which of several equally near points is "the" nearest does not change the
//! distance). A point alone in its class has no near hit and no value (`NaN`, kind
//! `partial_mean`); the value is the mean over the points that have one (`np.nanmean`: NumPy's
//! pairwise sum with those points as 0, over their number).

use rayon::prelude::*;

use super::support::pairwise::undefined;
use super::{Ctx, Output, Resolved};
use crate::error::Result;
use crate::reference::distance_row;
use crate::sum::pairwise_sum_by;

const ID: &str = "hypothesis_margin";

pub(super) fn compute(ctx: &Ctx, _r: &Resolved) -> Result<Output> {
    let (y, n) = (ctx.low, ctx.n());
    let codes = ctx.labels().codes();
    let margins: Vec<f64> = (0..n)
        .into_par_iter()
        .map_init(
            || vec![0.0; n],
            |row, i| {
                distance_row(y, i, row);
                let (mut hit, mut miss) = (f64::INFINITY, f64::INFINITY);
                for (j, &d) in row.iter().enumerate() {
                    if codes[j] != codes[i] {
                        miss = miss.min(d);
                    } else if j != i {
                        hit = hit.min(d);
                    }
                }
                // No near hit (a class of one) or no near miss (one class): no value.
                if hit.is_finite() && miss.is_finite() { 0.5 * (miss - hit) } else { f64::NAN }
            },
        )
        .collect();
    let counted = margins.iter().filter(|m| !m.is_nan()).count();
    if counted == 0 {
        return Err(undefined(ID, "no point has both another point of its class and a point of another class"));
    }
    let total = pairwise_sum_by(n, &|i| if margins[i].is_nan() { 0.0 } else { margins[i] });
    Ok(Output::new().value(ID, total / counted as f64).local("local_hypothesis_margin", margins))
}
