//! A space's pair-distance [`Extent`] through its box tree (`reference::BoxTree`): the closest
//! pair from every point's first neighbour (the tree's exact kNN at k = 1, when its sample
//! says it prunes), the farthest from pairs of leaves in descending order of their upper
//! bound. The same bits as a pass over every pair (`reference::box_tree` tests), in a fraction
//! of the pairs on clustered data and on a projection.

use super::pairs::Extent;
use super::tree_knn::{TreeChoice, box_tree, tree_knn_in};
use crate::data::Points;

/// The extent of the pairs i < j of `points` (n ≥ 2), or why the tree does not serve.
pub fn tree_extent(points: &Points) -> Result<Extent, String> {
    if points.n() < 2 {
        return Err("fewer than two points".into());
    }
    let tree = box_tree(points)?;
    let (first, _) = tree_knn_in(&tree, points, 1, TreeChoice::Auto)?;
    let min = first.dist.iter().fold(f64::INFINITY, |a, &d| if d < a { d } else { a });
    Ok(Extent { min, max: tree.farthest() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Metric;
    use crate::reference::distance_row;
    use crate::splitmix::SplitMix64;

    /// Blobs, a lattice with duplicates and a 2-D projection: the full rows' extent, bit for
    /// bit, under both metrics.
    #[test]
    fn tree_extents_are_the_rows_extents() {
        let mut rng = SplitMix64(4);
        let blobs: Vec<f64> = (0..900 * 8).map(|t| ((t / 8) % 4) as f64 * 20.0 + rng.normal()).collect();
        let lattice: Vec<f64> = (0..500 * 3).map(|_| (rng.uniform() * 4.0).floor()).collect();
        let plane: Vec<f64> = (0..2000 * 2).map(|_| rng.normal() * 1e-3).collect();
        for (n, d, v) in [(900, 8, blobs), (500, 3, lattice), (2000, 2, plane)] {
            for metric in [Metric::Euclidean, Metric::SqEuclidean] {
                let p = Points::from_vec("p", n, d, v.clone()).unwrap().with_metric(metric).unwrap();
                let mut row = vec![0.0; n];
                let mut want = Extent::EMPTY;
                for i in 0..n {
                    distance_row(&p, i, &mut row);
                    want = want.join(Extent::of_row(&row, i));
                }
                let got = tree_extent(&p).unwrap();
                assert_eq!(
                    (got.min.to_bits(), got.max.to_bits()),
                    (want.min.to_bits(), want.max.to_bits()),
                    "{n}×{d} {metric:?}"
                );
            }
        }
    }
}
