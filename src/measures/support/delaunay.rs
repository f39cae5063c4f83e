//! 2-D Delaunay triangulation for the gap index (`gi`), through the pure-Rust `spade` crate
//! (exact orientation and in-circle predicates, so the result is a true Delaunay triangulation
//! for every finite input).
//!
//! The result is a function of the input alone, deterministic and thread-independent:
//!
//! - **Duplicates**: of each group of exactly coincident points only the first occurrence (the
//!   lowest index) is triangulated; the others appear in no triangle. (scipy's Qhull also keeps one
//!   point of each group, but which one depends on its processing order, not on the index.)
//! - **Cocircular points** (e.g. the corners of a lattice square): the Delaunay triangulation is
//!   not unique, and spade's bulk loader picks one of the valid ones. Its insertion order is a
//!   total order on the distinct points (distance to their mean, then x, then y), so the choice
//!   depends only on the set of distinct points, not on their order in the input. It may differ
//!   from scipy's (Qhull's) choice.
//! - **No triangle** (fewer than 3 distinct points, or all collinear): `None`.
//!
//! In general position the Delaunay triangulation is unique and equals scipy's (tested against
//! `scipy.spatial.Delaunay` in the tests below). Triangles are returned counter-clockwise, each
//! starting at its lowest index, sorted.

use spade::{DelaunayTriangulation, HasPosition, Point2, Triangulation};

/// A distinct input point (scaled, see [`triangulate`]) and the index of its first occurrence.
struct Vertex {
    position: Point2<f64>,
    index: usize,
}

impl HasPosition for Vertex {
    type Scalar = f64;

    fn position(&self) -> Point2<f64> {
        self.position
    }
}

/// `v · 2^k` for |k| ≤ 2200, exact unless the result leaves the normal range.
fn scale_pow2(v: f64, k: i32) -> f64 {
    let half = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    let (a, b) = (k / 2, k - k / 2);
    v * half(a) * half(b)
}

/// The Delaunay triangles of `xy` (n points, x0 y0 x1 y1 ...; finite), as counter-clockwise
/// point-index triples in a canonical order; `None` when there is no triangle (fewer than three
/// distinct points, or all collinear).
///
/// spade accepts coordinates of magnitude 0 or in [2^-142, 2^201]. The points are therefore first
/// scaled by the power of two that brings the largest magnitude into [1, 2), which is exact and
/// leaves every orientation and in-circle test unchanged; a scaled coordinate still below 2^-142
/// (over 10^42 times smaller than the largest) is rounded to 0 by `spade::mitigate_underflow`, and
/// duplicates are identified after that.
pub(in crate::measures) fn triangulate(xy: &[f64]) -> Option<Vec<[usize; 3]>> {
    let n = xy.len() / 2;
    let largest = xy.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if n < 3 || largest == 0.0 || !largest.is_finite() {
        return None;
    }
    // largest = f · 2^e with f in [1, 2) (subnormals included, through their leading bit).
    let bits = largest.to_bits();
    let e = match (bits >> 52) as i32 {
        0 => 63 - bits.leading_zeros() as i32 - 1074,
        biased => biased - 1023,
    };
    let points: Vec<Point2<f64>> = xy
        .chunks_exact(2)
        // `+ 0.0` turns -0.0 into 0.0, so that the two compare (and sort) as the same point.
        .map(|p| spade::mitigate_underflow(Point2::new(scale_pow2(p[0], -e), scale_pow2(p[1], -e))))
        .map(|p| Point2::new(p.x + 0.0, p.y + 0.0))
        .collect();

    // The first occurrence of each distinct point.
    let mut order: Vec<usize> = (0..n).collect();
    let key = |i: &usize| (points[*i].x.to_bits(), points[*i].y.to_bits());
    order.sort_by(|a, b| {
        points[*a].x.total_cmp(&points[*b].x).then(points[*a].y.total_cmp(&points[*b].y)).then(a.cmp(b))
    });
    let mut firsts: Vec<usize> = Vec::with_capacity(n);
    for (j, &i) in order.iter().enumerate() {
        if j == 0 || key(&order[j - 1]) != key(&i) {
            firsts.push(i);
        }
    }
    if firsts.len() < 3 {
        return None;
    }
    firsts.sort_unstable();
    let vertices: Vec<Vertex> = firsts.iter().map(|&i| Vertex { position: points[i], index: i }).collect();
    let dt = DelaunayTriangulation::<Vertex>::bulk_load(vertices).ok()?;

    let mut tris: Vec<[usize; 3]> = dt
        .inner_faces()
        .map(|f| {
            let [a, b, c] = f.vertices().map(|v| v.data().index);
            // Rotate (keeping the counter-clockwise orientation) to start at the lowest index.
            if a < b && a < c {
                [a, b, c]
            } else if b < c {
                [b, c, a]
            } else {
                [c, a, b]
            }
        })
        .collect();
    if tris.is_empty() {
        return None;
    }
    tris.sort_unstable();
    Some(tris)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn flat(points: &[[f64; 2]]) -> Vec<f64> {
        points.iter().flatten().copied().collect()
    }

    fn orient(xy: &[f64], [a, b, c]: [usize; 3]) -> f64 {
        let p = |i: usize| robust::Coord { x: xy[2 * i], y: xy[2 * i + 1] };
        robust::orient2d(p(a), p(b), p(c))
    }

    /// A valid Delaunay triangulation of the distinct points of `xy`, each represented by its
    /// first occurrence: every triangle counter-clockwise and non-degenerate (exact predicate);
    /// each distinct point a vertex; as many triangles as any triangulation of the set has
    /// (2v − 2 − h, h the points on the convex hull's boundary); every edge shared by at most two
    /// triangles; no vertex strictly inside a triangle's circumcircle (exact predicate).
    fn check_delaunay(xy: &[f64], tris: &[[usize; 3]]) {
        let n = xy.len() / 2;
        let mut first: BTreeMap<(u64, u64), usize> = BTreeMap::new();
        for i in 0..n {
            first.entry(((xy[2 * i] + 0.0).to_bits(), (xy[2 * i + 1] + 0.0).to_bits())).or_insert(i);
        }
        let reps: BTreeSet<usize> = first.values().copied().collect();
        let used: BTreeSet<usize> = tris.iter().flatten().copied().collect();
        assert_eq!(used, reps, "the vertices are exactly the first occurrences");
        for &t in tris {
            assert!(orient(xy, t) > 0.0, "{t:?} counter-clockwise");
            assert!(t[0] < t[1] && t[0] < t[2], "{t:?} starts at its lowest index");
        }
        assert!(tris.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        // Edges: interior edges twice (once each way), hull edges once.
        let mut edges: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for t in tris {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                assert!(edges.insert((a, b), 1).is_none(), "directed edge {a}-{b} twice");
            }
        }
        let hull_edges = edges.keys().filter(|(a, b)| !edges.contains_key(&(*b, *a))).count();
        assert_eq!(tris.len(), 2 * reps.len() - 2 - hull_edges, "triangle count (Euler)");
        let p = |i: usize| robust::Coord { x: xy[2 * i], y: xy[2 * i + 1] };
        for t in tris {
            for &v in &reps {
                assert!(
                    robust::incircle(p(t[0]), p(t[1]), p(t[2]), p(v)) <= 0.0,
                    "{v} inside the circumcircle of {t:?}"
                );
            }
        }
    }

    #[test]
    fn small_and_degenerate_inputs() {
        // A non-cocircular quad: (1, 1.1) lies outside the circle through the other three.
        let quad = flat(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.1]]);
        assert_eq!(triangulate(&quad).unwrap(), vec![[0, 1, 2], [1, 3, 2]]);
        check_delaunay(&quad, &triangulate(&quad).unwrap());
        assert!(triangulate(&[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]).is_none(), "collinear");
        assert!(
            triangulate(&[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0]).is_none(),
            "collinear with duplicates"
        );
        assert!(triangulate(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none(), "coincident");
        assert!(triangulate(&[0.0; 8]).is_none(), "all at the origin");
        assert!(triangulate(&[0.0, 0.0, 1.0, 1.0, 0.0, 0.0]).is_none(), "two distinct points");
        assert!(triangulate(&[0.0, 0.0, 1.0, 1.0]).is_none(), "two points");
        // Duplicates (and -0.0 == 0.0): only the first occurrence is a vertex.
        let dup = flat(&[[1.0, 0.0], [0.0, 0.0], [0.0, 1.0], [-0.0, 0.0], [1.0, 0.0], [0.0, -0.0]]);
        assert_eq!(triangulate(&dup).unwrap(), vec![[0, 2, 1]]);
    }

    #[test]
    fn extreme_scales() {
        // The same triangulation at any scale (power-of-two scaling is exact).
        let base = flat(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.1], [0.3, 0.4], [0.9, 0.2]]);
        let want = triangulate(&base).unwrap();
        for s in [1e-300, 1e-160, 1e-40, 1e40, 1e100, 1e300, f64::MIN_POSITIVE] {
            let scaled: Vec<f64> = base.iter().map(|v| v * s).collect();
            assert_eq!(triangulate(&scaled).unwrap(), want, "scale {s}");
        }
        // Subnormal coordinates.
        let tiny: Vec<f64> = [0.0, 0.0, 4.0, 0.0, 0.0, 4.0, 4.0, 5.0].iter().map(|v| v * 5e-324).collect();
        assert_eq!(triangulate(&tiny).unwrap(), vec![[0, 1, 2], [1, 3, 2]]);
        // A coordinate over 10^42 times smaller than the largest counts as 0: here a duplicate.
        let flushed = flat(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1e-50, 0.0]]);
        assert_eq!(triangulate(&flushed).unwrap(), vec![[0, 1, 2]]);
    }

    /// The triangulation depends only on the set of distinct points: permuting the input (and
    /// adding duplicates after the first occurrences) relabels the same triangles.
    #[test]
    fn independent_of_input_order() {
        let lattice: Vec<[f64; 2]> = (0..49).map(|i| [(i % 7) as f64, (i / 7) as f64]).collect();
        let want = triangulate(&flat(&lattice)).unwrap();
        check_delaunay(&flat(&lattice), &want);
        let canon = |tris: Vec<[usize; 3]>, label: &dyn Fn(usize) -> usize| -> BTreeSet<[usize; 3]> {
            tris.into_iter()
                .map(|t| {
                    let t = t.map(label);
                    let r = (0..3).min_by_key(|&k| t[k]).unwrap();
                    [t[r], t[(r + 1) % 3], t[(r + 2) % 3]]
                })
                .collect()
        };
        let want = canon(want, &|i| i);
        for stride in [5usize, 11, 20, 37] {
            let perm: Vec<usize> = (0..49).map(|j| j * stride % 49).collect();
            let mut points: Vec<[f64; 2]> = perm.iter().map(|&i| lattice[i]).collect();
            points.extend(perm.iter().rev().map(|&i| lattice[i]));
            let got = triangulate(&flat(&points)).unwrap();
            check_delaunay(&flat(&points), &got);
            assert_eq!(canon(got, &|j| perm[j]), want, "stride {stride}");
        }
    }

    /// On the degenerate sets of tests/fixtures/seeded_zadu.json (duplicates on a lattice,
    /// cocircular points, near-collinear points, a far offset) and a Gaussian sample: a valid
    /// Delaunay triangulation of the distinct points, with as many triangles as
    /// `scipy.spatial.Delaunay`; in general position (the Gaussian sample, the near-collinear
    /// set), the very same triangles.
    #[test]
    fn against_scipy_delaunay() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seeded_zadu.json");
        let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut compared = 0;
        for rec in fixture["records"].as_array().unwrap().iter().filter(|r| r["kind"] == "delaunay") {
            let name = rec["name"].as_str().unwrap();
            let xy: Vec<f64> = rec["points"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|p| p.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
                .collect();
            let scipy: BTreeSet<[usize; 3]> = rec["simplices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let t: Vec<usize> = t.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
                    let mut t = [t[0], t[1], t[2]];
                    if orient(&xy, t) < 0.0 {
                        t.swap(1, 2);
                    }
                    let r = (0..3).min_by_key(|&k| t[k]).unwrap();
                    [t[r], t[(r + 1) % 3], t[(r + 2) % 3]]
                })
                .collect();
            let got = triangulate(&xy).unwrap();
            check_delaunay(&xy, &got);
            assert_eq!(got.len(), scipy.len(), "{name}: triangle count");
            if matches!(name, "gaussian_300" | "near_collinear") {
                assert_eq!(got.iter().copied().collect::<BTreeSet<_>>(), scipy, "{name}");
            }
            assert_eq!(triangulate(&xy).unwrap(), got, "{name}: deterministic");
            compared += 1;
        }
        assert_eq!(compared, 6);
    }
}
