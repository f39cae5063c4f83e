//! Leave-one-out k-nearest-neighbour classification (`knn_classification`): each point's class
//! predicted by a majority vote of its k exact nearest neighbours (self excluded, ties in
//! distance by index), in the projection and in the original space. A tie in the vote goes to
//! the smallest label among the tied classes. `knn_accuracy_low` and `knn_accuracy_high` are the
//! shares of points predicted correctly, `knn_accuracy_ratio` their ratio (low over high);
//! `local_knn_accuracy_low` is 1 for a point predicted correctly in the projection, else 0.
//! SickleJS's `classificationError` is 1 − accuracy with a tie counted as correct when the
//! point's own class is among the tied ones; scikit-learn's `KNeighborsClassifier` takes, among
//! tied classes, the first in sorted label order, as here.

use super::support::pairwise::undefined;
use super::{Ctx, Output, Resolved, per_point};
use crate::error::Result;
use crate::resources::Neighbours;

const ID: &str = "knn_classification";

/// Whether the majority class of `neighbours` (by `codes`; ties to the smallest code) is `own`.
fn predicted_correctly(neighbours: &[u32], codes: &[u32], own: u32, votes: &mut Vec<u32>) -> bool {
    votes.clear();
    votes.extend(neighbours.iter().map(|&j| codes[j as usize]));
    votes.sort_unstable();
    let (mut best, mut best_count) = (u32::MAX, 0usize);
    let mut t = 0;
    while t < votes.len() {
        let c = votes[t];
        let run = votes[t..].iter().take_while(|&&v| v == c).count();
        // Codes ascend, so a strictly larger count is needed to displace a smaller label.
        if run > best_count {
            (best, best_count) = (c, run);
        }
        t += run;
    }
    best == own
}

fn correct(knn: &Neighbours, k: usize, codes: &[u32]) -> Vec<bool> {
    per_point(codes.len(), |i| predicted_correctly(knn.row(i, k), codes, codes[i], &mut Vec::with_capacity(k)))
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (k, n) = (r.k, ctx.n());
    let codes = ctx.labels().codes();
    let low = correct(ctx.knn_low(), k, codes);
    let high = correct(ctx.knn_high(), k, codes);
    let (cl, ch) = (low.iter().filter(|&&c| c).count(), high.iter().filter(|&&c| c).count());
    if ch == 0 {
        return Err(undefined(
            ID,
            "knn_accuracy_ratio: no point is classified correctly in the original space (accuracy 0)",
        ));
    }
    Ok(Output::new()
        .value("knn_accuracy_low", cl as f64 / n as f64)
        .value("knn_accuracy_high", ch as f64 / n as f64)
        .value("knn_accuracy_ratio", cl as f64 / ch as f64)
        .local("local_knn_accuracy_low", low.iter().map(|&c| f64::from(u8::from(c))).collect()))
}
