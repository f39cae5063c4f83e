//! Distance consistency (`dsc`): the share of points whose nearest class centroid in the
//! projection is their own class's (ties to the lowest sorted label, as `np.argmin`).

use super::support::centroids::consistent;
use super::{Ctx, Output, Resolved};
use crate::error::Result;

pub(super) fn compute(ctx: &Ctx, _r: &Resolved) -> Result<Output> {
    let labels = ctx.labels();
    let rows: Vec<usize> = (0..ctx.n()).collect();
    let hits = consistent(ctx.low, &rows, labels.codes(), labels.classes());
    Ok(Output::new().value("distance_consistency", hits as f64 / ctx.n() as f64))
}
