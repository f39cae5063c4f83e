//! The original space's kNN through its box tree (`reference::BoxTree`), for a row pass that
//! needs nothing else of the original rows (no cross ranks counted in them, no extents): the
//! exact lists and distances, computing only the leaves each row's k-th neighbour does not
//! rule out. Whether the tree prunes enough depends on the data (clusters: most leaves are
//! ruled out; a uniform cube in many dimensions: few), so a sample of leaves decides first;
//! either way the lists are the same bits.

use rayon::prelude::*;

use super::certified_rows::HighRowsReport;
use super::neighbours::Neighbours;
use crate::data::Points;
use crate::reference::{BoxScratch, BoxTree};

/// The most the tree may hold (beyond it the rows serve).
const MAX_TREE_BYTES: usize = 256 << 20;

/// Leaves in the sample that decides.
const SAMPLE_LEAVES: usize = 16;

/// The sample's share of the pairs computed above which the rows serve: the tree computes a
/// pair in about half the time the certified f32 rows take per pair (their bounds, scans and
/// selection included; measured at D = 10, n = 5000), and loses its order and bounds' overhead
/// besides.
const MAX_VISITED: f64 = 0.4;

/// How the tree is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeChoice {
    /// When the sample prunes enough.
    Auto,
    /// Whenever the tree can be built (the tests' setting).
    #[cfg_attr(not(test), allow(dead_code))]
    Always,
}

/// What the box tree served.
#[derive(Debug)]
pub struct TreeKnn {
    pub list: Neighbours,
    /// How they were served, for the run report.
    pub report: HighRowsReport,
    /// Pairs whose distance the tree computed (the sample's included).
    pub pairs: u64,
}

/// The kNN lists of every point of `high` at `k` (1 ≤ k < n) through the box tree (another
/// metric, or a tree over [`MAX_TREE_BYTES`], does not serve), with the report of how they
/// were served; `Err(reason)` when the tree does not serve.
pub fn tree_knn(high: &Points, k: usize, choice: TreeChoice) -> Result<TreeKnn, String> {
    let bytes = BoxTree::bytes_for(high.n(), high.dim());
    if bytes > MAX_TREE_BYTES {
        return Err(format!("the box tree would take {bytes} bytes"));
    }
    let tree = BoxTree::build(high).ok_or_else(|| format!("{}: no box tree", high.metric()))?;
    let n = high.n();
    assert!(k >= 1 && k < n, "tree_knn: 1 ≤ k < n");
    let leaves = tree.leaves();
    let run = |b: usize, sc: &mut BoxScratch| {
        let m = tree.leaf_ids(b).len();
        let (mut idx, mut dist) = (vec![0u32; m * k], vec![0.0f64; m * k]);
        let visited = tree.knn_leaf(high, b, k, sc, &mut idx, &mut dist);
        (idx, dist, visited)
    };
    let mut done: Vec<(usize, (Vec<u32>, Vec<f64>, u64))> = Vec::new();
    if choice == TreeChoice::Auto {
        let step = leaves.div_ceil(SAMPLE_LEAVES).max(1);
        let sample: Vec<usize> = (0..leaves).step_by(step).collect();
        // In rounds of four leaves: a space the tree does not prune is declined after the
        // first round (an eighth of a full sample's rows), so declining costs little.
        let (mut rows, mut visited) = (0usize, 0u64);
        for round in sample.chunks(4) {
            let part: Vec<_> = round.par_iter().map_init(BoxScratch::default, |sc, &b| (b, run(b, sc))).collect();
            rows += round.iter().map(|&b| tree.leaf_ids(b).len()).sum::<usize>();
            visited += part.iter().map(|(_, p)| p.2).sum::<u64>();
            done.extend(part);
            let share = visited as f64 / (rows as f64 * n as f64);
            if share > MAX_VISITED {
                return Err(format!(
                    "a sample of {rows} rows computed {:.0} % of their pairs in the box tree (above {:.0} %)",
                    share * 100.0,
                    MAX_VISITED * 100.0
                ));
            }
        }
    }
    // The sample's leaves are done: the rest.
    let mut sampled = vec![false; leaves];
    done.iter().for_each(|&(b, _)| sampled[b] = true);
    let rest: Vec<usize> = (0..leaves).filter(|&b| !sampled[b]).collect();
    done.extend(rest.par_iter().map_init(BoxScratch::default, |sc, &b| (b, run(b, sc))).collect::<Vec<_>>());
    let (mut idx, mut dist) = (vec![0u32; n * k], vec![0.0f64; n * k]);
    let mut visited = 0u64;
    for (b, (li, ld, v)) in done {
        visited += v;
        for (r, &i) in tree.leaf_ids(b).iter().enumerate() {
            let i = i as usize;
            idx[i * k..(i + 1) * k].copy_from_slice(&li[r * k..(r + 1) * k]);
            dist[i * k..(i + 1) * k].copy_from_slice(&ld[r * k..(r + 1) * k]);
        }
    }
    let reason = format!(
        "{}: the kNN through a tree of {leaves} boxed leaves, {:.1} % of the pairs computed in f64 with the reference's bits ({} bytes)",
        high.metric(),
        visited as f64 * 100.0 / (n as f64 * n as f64),
        tree.bytes()
    );
    Ok(TreeKnn {
        list: Neighbours { k, idx, dist },
        report: HighRowsReport { path: "box_tree_f64", reason },
        pairs: visited,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::rows_knn;
    use crate::splitmix::SplitMix64;

    fn brute(p: &Points, k: usize) -> Neighbours {
        let (idx, dist) = rows_knn(p, k);
        Neighbours { k, idx, dist }
    }

    /// Clusters: the sample says the tree prunes and it serves; a uniform cube in 30
    /// dimensions: the sample declines, saying why. Forced, the tree gives the rows' lists on
    /// both.
    #[test]
    fn the_sample_decides_and_the_lists_are_the_rows_lists() {
        let mut rng = SplitMix64(9);
        let (n, d) = (1500, 10);
        let centres: Vec<f64> = (0..5 * d).map(|_| rng.normal() * 8.0).collect();
        let blobs: Vec<f64> = (0..n * d).map(|t| centres[(t / d) % 5 * d + t % d] + rng.normal()).collect();
        let blobs = Points::from_vec("blobs", n, d, blobs).unwrap();
        let cube = Points::from_vec("cube", n, 30, (0..n * 30).map(|_| rng.uniform()).collect()).unwrap();
        let TreeKnn { list, report, pairs } = tree_knn(&blobs, 10, TreeChoice::Auto).unwrap();
        assert_eq!(report.path, "box_tree_f64");
        // Every row computed at least its k neighbours' distances, and the tree pruned.
        assert!(pairs >= (n * 10) as u64 && pairs < (n * n / 2) as u64, "{pairs}");
        let want = brute(&blobs, 10);
        assert_eq!(list.idx, want.idx);
        assert_eq!(list.dist, want.dist);
        let why = tree_knn(&cube, 10, TreeChoice::Auto).unwrap_err();
        assert!(why.contains("of their pairs in the box tree"), "{why}");
        let list = tree_knn(&cube, 7, TreeChoice::Always).unwrap().list;
        let want = brute(&cube, 7);
        assert_eq!(list.idx, want.idx);
        assert_eq!(list.dist, want.dist);
    }
}
