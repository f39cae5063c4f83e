//! The H1 persistence diagram of the Vietoris–Rips filtration of a point set, by the reduction
//! of ripser (Bauer 2021, ripser 1.2): persistent cohomology over Z/2 with clearing (the edges
//! that kill an H0 class are no columns), the filtration cut at the enclosing radius (the
//! complex is a cone beyond it, so no H1 class is born or dies later), apparent and emergent
//! pairs taken without a reduction, the coboundaries enumerated implicitly and the reduction
//! matrix stored instead of the reduced columns.
//!
//! Simplices are numbered by the combinatorial number system (an edge {i > j} is
//! `C(i,2) + j`, a triangle {a > b > c} is `C(a,3) + C(b,2) + c`), and the filtration order
//! within a dimension is ripser's: diameter ascending, then index descending. The diagram (its
//! multiset of (birth, death) values with death > birth) does not depend on how simplices of
//! equal diameter are ordered; every value is an exact reference distance
//! (`docs/exactness.md`), held in f64 (ripser holds f32).
//!
//! Memory: the n(n − 1)/2 pair distances (8 bytes each) and the edge ids below the enclosing
//! radius (4 bytes each) are planned before any work ([`planned_bytes`]); the pivot table and
//! the reduction matrix, which depend on the data, are counted as they grow and the run stops
//! with a typed error the moment they would pass the budget.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use rayon::prelude::*;

use crate::control::Control;
use crate::data::Points;
use crate::error::{Error, Result};
use crate::reference::{distance_pair, distance_row};

/// Bytes planned per pair: its distance (f64) and, below the enclosing radius, its edge id (u32).
pub(in crate::measures) const BYTES_PER_PAIR: u64 = 12;
/// The most points: every edge id must fit a u32.
pub(in crate::measures) const MAX_POINTS: usize = 65_536;
/// Bytes counted per pivot-table entry (key, value, the table's control byte and spare room).
const BYTES_PER_PIVOT: u64 = 24;

/// The bytes the reduction of `n` points plans before it starts: the pair distances and edge ids
/// (12 bytes per pair), a bit per pair marking the spanning tree's edges, and O(n) scratch.
pub(in crate::measures) fn planned_bytes(n: usize) -> u64 {
    let pairs = (n as u64).saturating_mul(n.saturating_sub(1) as u64) / 2;
    pairs.saturating_mul(BYTES_PER_PAIR).saturating_add(pairs / 8).saturating_add(64 * n as u64)
}

fn c2(v: u64) -> u64 {
    v * v.saturating_sub(1) / 2
}

fn c3(v: u64) -> u64 {
    // v(v−1)(v−2) < 2^63 for v < 2^21 (at most MAX_POINTS here); the product of three
    // consecutive integers is divisible by 6.
    v * v.saturating_sub(1) * v.saturating_sub(2) / 6
}

/// The largest v with `f(v) ≤ idx`, from a floating guess corrected by steps.
fn max_vertex(idx: u64, guess: f64, f: impl Fn(u64) -> u64) -> u64 {
    let mut v = guess.max(0.0) as u64;
    while f(v) > idx {
        v -= 1;
    }
    while f(v + 1) <= idx {
        v += 1;
    }
    v
}

fn edge_vertices(e: u64) -> (u64, u64) {
    let i = max_vertex(e, (0.5 + (2.0 * e as f64 + 0.25).sqrt()).floor(), c2);
    (i, e - c2(i))
}

fn triangle_vertices(t: u64) -> (u64, u64, u64) {
    let a = max_vertex(t, (6.0 * t as f64).cbrt() + 1.0, c3);
    let r = t - c3(a);
    let (b, c) = edge_vertices(r);
    (a, b, c)
}

/// A coboundary entry: a triangle with its diameter. The heap's greatest entry is the earliest in
/// the filtration (smallest diameter, then largest index): ripser's pivot.
#[derive(Clone, Copy, Debug)]
struct Entry {
    diam: f64,
    idx: u64,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        o.diam.total_cmp(&self.diam).then(self.idx.cmp(&o.idx))
    }
}

/// The filtered complex: the pair distances and the cut.
struct Complex {
    n: u64,
    /// d(i, j) for i > j at `C(i,2) + j`.
    dist: Vec<f64>,
    threshold: f64,
}

impl Complex {
    fn d(&self, a: u64, b: u64) -> f64 {
        if a > b { self.dist[(c2(a) + b) as usize] } else { self.dist[(c2(b) + a) as usize] }
    }
    fn edge_diam(&self, e: u64) -> f64 {
        self.dist[e as usize]
    }
    fn triangle_diam(&self, t: u64) -> f64 {
        let (a, b, c) = triangle_vertices(t);
        self.d(a, b).max(self.d(a, c)).max(self.d(b, c))
    }
    /// The cofacets of edge {i > j} below the cut, in ripser's order (index descending).
    fn cofacets(&self, e: u64, mut f: impl FnMut(Entry) -> bool) {
        let (i, j) = edge_vertices(e);
        let de = self.edge_diam(e);
        for v in (0..self.n).rev() {
            if v == i || v == j {
                continue;
            }
            let diam = de.max(self.d(i, v)).max(self.d(j, v));
            if diam > self.threshold {
                continue;
            }
            let idx = if v > i {
                c3(v) + c2(i) + j
            } else if v > j {
                c3(i) + c2(v) + j
            } else {
                c3(i) + c2(j) + v
            };
            if !f(Entry { diam, idx }) {
                return;
            }
        }
    }
    /// The earliest cofacet of `e` of the same diameter (ripser's zero pivot cofacet).
    fn zero_pivot_cofacet(&self, e: u64) -> Option<u64> {
        let de = self.edge_diam(e);
        let mut found = None;
        self.cofacets(e, |t| {
            if t.diam == de {
                found = Some(t.idx);
                false
            } else {
                true
            }
        });
        found
    }
    /// The latest facet of triangle `t` of its diameter (ripser's zero pivot facet): of the
    /// facets of t's diameter, the smallest index.
    fn zero_pivot_facet(&self, t: u64) -> u64 {
        let (a, b, c) = triangle_vertices(t);
        let diam = self.triangle_diam(t);
        // Facets by increasing index: {b,c}, {a,c}, {a,b}.
        [c2(b) + c, c2(a) + c, c2(a) + b]
            .into_iter()
            .find(|&e| self.edge_diam(e) == diam)
            .expect("a facet of the diameter")
    }
    /// The facet e with (e, t) a zero-persistence apparent pair, if any.
    fn zero_apparent_facet(&self, t: u64) -> Option<u64> {
        let e = self.zero_pivot_facet(t);
        (self.zero_pivot_cofacet(e) == Some(t)).then_some(e)
    }
}

fn pop_pivot(heap: &mut BinaryHeap<Entry>) -> Option<Entry> {
    while let Some(p) = heap.pop() {
        let mut odd = true;
        while heap.peek().is_some_and(|q| q.idx == p.idx) {
            heap.pop();
            odd = !odd;
        }
        if odd {
            return Some(p);
        }
    }
    None
}

fn get_pivot(heap: &mut BinaryHeap<Entry>) -> Option<Entry> {
    let p = pop_pivot(heap);
    if let Some(p) = p {
        heap.push(p);
    }
    p
}

/// Reference distances of all pairs (condensed, i > j) and the enclosing radius
/// `min_i max_j d(i, j)`.
fn distances(points: &Points, ctl: &Control) -> Result<(Vec<f64>, f64)> {
    let n = points.n();
    let mut dist = vec![0.0f64; n * (n - 1) / 2];
    let mut rows: Vec<&mut [f64]> = Vec::with_capacity(n);
    let mut rest: &mut [f64] = &mut dist;
    for i in 0..n {
        let (row, tail) = std::mem::take(&mut rest).split_at_mut(i);
        rows.push(row);
        rest = tail;
    }
    let radius = rows
        .into_par_iter()
        .enumerate()
        .map_init(
            || vec![0.0f64; n],
            |full, (i, row)| {
                if ctl.cancelled() {
                    return f64::NAN;
                }
                distance_row(points, i, full);
                row.copy_from_slice(&full[..i]);
                full.iter().fold(0.0f64, |m, &d| m.max(d))
            },
        )
        .reduce(|| f64::INFINITY, f64::min);
    ctl.check()?;
    debug_assert!(n < 2 || dist.last().is_none_or(|&d| d == distance_pair(points, n - 1, n - 2)));
    Ok((dist, radius))
}

/// Union-find with path halving.
fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

/// The finite H1 pairs (birth, death), death > birth, of `points`' Rips filtration, sorted; and
/// the number of essential classes (none when the cut is the enclosing radius; counted, not
/// assumed). `budget` bounds the planned memory plus what the reduction grows.
pub(in crate::measures) fn h1_pairs(
    points: &Points,
    budget: u64,
    ctl: &Control,
    phase: &'static str,
) -> Result<(Vec<(f64, f64)>, usize)> {
    let n = points.n();
    if n < 3 {
        return Ok((Vec::new(), 0));
    }
    let planned = planned_bytes(n);
    let over = |bytes: u64| Error::ParamMemory {
        id: "topology".into(),
        param: "dim".into(),
        value: "1".into(),
        what: format!("the Rips H1 reduction of {n} points (pair distances, edges, pivots and reduction matrix)"),
        bytes,
        budget,
    };
    if n > MAX_POINTS || planned > budget {
        return Err(over(planned));
    }
    let (dist, threshold) = distances(points, ctl)?;
    let cx = Complex { n: n as u64, dist, threshold };

    // The edges below the cut in filtration order (diameter ascending, index descending).
    let mut edges: Vec<u32> = (0..cx.dist.len() as u32).filter(|&e| cx.dist[e as usize] <= threshold).collect();
    edges.par_sort_unstable_by(|&a, &b| cx.dist[a as usize].total_cmp(&cx.dist[b as usize]).then(b.cmp(&a)));
    ctl.check()?;

    // H0 by union-find: the edges that join two components (the spanning tree) are cleared.
    let mut tree = vec![0u64; cx.dist.len().div_ceil(64)];
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for &e in &edges {
        let (i, j) = edge_vertices(u64::from(e));
        let (a, b) = (find(&mut parent, i as u32), find(&mut parent, j as u32));
        if a != b {
            parent[a.max(b) as usize] = a.min(b);
            tree[e as usize / 64] |= 1 << (e % 64);
        }
    }
    drop(parent);

    let mut pivots: HashMap<u64, u32> = HashMap::new();
    let mut columns: Vec<u32> = Vec::new();
    let mut red_offsets: Vec<u64> = vec![0];
    let mut red: Vec<u32> = Vec::new();
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    let mut essential = 0usize;
    let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
    let mut working: Vec<u32> = Vec::new();
    let total = edges.len() as u64;
    for (done, &e) in edges.iter().rev().enumerate() {
        if done % 4096 == 0 {
            ctl.check()?;
            ctl.report(phase, done as u64, total);
            let grown = (pivots.len() as u64 * BYTES_PER_PIVOT)
                + 4 * (columns.len() + red.len()) as u64
                + 8 * red_offsets.len() as u64;
            if planned.saturating_add(grown) > budget {
                return Err(over(planned.saturating_add(grown)));
            }
        }
        if tree[e as usize / 64] >> (e % 64) & 1 == 1 {
            continue;
        }
        let e64 = u64::from(e);
        let de = cx.edge_diam(e64);
        // The coboundary, watching for the first cofacet of the edge's own diameter: an
        // apparent pair (no column), or an emergent one (its pivot, without a reduction).
        heap.clear();
        let (mut checked, mut shortcut) = (false, None);
        cx.cofacets(e64, |t| {
            if !checked && t.diam == de {
                // The earliest cofacet (of the edge's own diameter, the largest index first).
                checked = true;
                if cx.zero_pivot_facet(t.idx) == e64 {
                    shortcut = Some(None); // apparent pair: zero persistence, no column
                    return false;
                }
                if !pivots.contains_key(&t.idx) && cx.zero_apparent_facet(t.idx).is_none() {
                    shortcut = Some(Some(t)); // emergent pair: its pivot, without a reduction
                    return false;
                }
            }
            heap.push(t);
            true
        });
        let mut pivot = match shortcut {
            Some(None) => continue,
            Some(emergent) => emergent,
            None => get_pivot(&mut heap),
        };
        let col = columns.len() as u32;
        columns.push(e);
        working.clear();
        working.push(e);
        let add = |s: u32, heap: &mut BinaryHeap<Entry>, working: &mut Vec<u32>| {
            working.push(s);
            cx.cofacets(u64::from(s), |t| {
                heap.push(t);
                true
            });
        };
        loop {
            let Some(p) = pivot else {
                essential += 1;
                break;
            };
            if let Some(&other) = pivots.get(&p.idx) {
                let o = other as usize;
                add(columns[o], &mut heap, &mut working);
                for k in red_offsets[o]..red_offsets[o + 1] {
                    add(red[k as usize], &mut heap, &mut working);
                }
                pivot = get_pivot(&mut heap);
            } else if let Some(f) = cx.zero_apparent_facet(p.idx) {
                add(f as u32, &mut heap, &mut working);
                pivot = get_pivot(&mut heap);
            } else {
                if p.diam > de {
                    pairs.push((de, p.diam));
                }
                pivots.insert(p.idx, col);
                break;
            }
        }
        // The reduction column, mod 2, without the column's own edge.
        working.sort_unstable();
        let mut k = 0;
        while k < working.len() {
            let run = working[k..].iter().take_while(|&&s| s == working[k]).count();
            if run % 2 == 1 && working[k] != e {
                red.push(working[k]);
            }
            k += run;
        }
        red_offsets.push(red.len() as u64);
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    Ok((pairs, essential))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplex_numbering_round_trips() {
        // Triangles in colexicographic order are numbered 0, 1, 2, … without gaps.
        let mut next = 0u64;
        for a in 2..200u64 {
            for b in 1..a {
                for c in 0..b {
                    assert_eq!(c3(a) + c2(b) + c, next, "{{{a}, {b}, {c}}}");
                    next += 1;
                }
            }
        }
        for a in 2..60u64 {
            for b in 1..a {
                assert_eq!(edge_vertices(c2(a) + b), (a, b));
                for c in 0..b {
                    assert_eq!(triangle_vertices(c3(a) + c2(b) + c), (a, b, c));
                }
            }
        }
        let big = 65_535u64;
        assert_eq!(edge_vertices(c2(big) + big - 1), (big, big - 1));
        assert_eq!(triangle_vertices(c3(big) + c2(big - 1) + 7), (big, big - 1, 7));
    }

    /// Four points on a unit square: one H1 class, born at the side (1), dying at the diagonal (√2).
    #[test]
    fn a_square_has_one_loop() {
        let p = Points::from_vec("sq", 4, 2, vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]).unwrap();
        let (pairs, essential) = h1_pairs(&p, u64::MAX, &Control::default(), "t").unwrap();
        assert_eq!(essential, 0);
        assert_eq!(pairs, vec![(1.0, 2f64.sqrt())]);
    }

    /// A circle of 12 points: one long-lived loop; collinear points: none.
    #[test]
    fn a_circle_has_one_long_loop_and_a_line_none() {
        let n = 12;
        let rows: Vec<f64> = (0..n)
            .flat_map(|k| {
                let t = std::f64::consts::TAU * k as f64 / n as f64;
                [t.cos(), t.sin()]
            })
            .collect();
        let p = Points::from_vec("c", n, 2, rows).unwrap();
        let (pairs, essential) = h1_pairs(&p, u64::MAX, &Control::default(), "t").unwrap();
        assert_eq!((pairs.len(), essential), (1, 0), "{pairs:?}");
        assert!(pairs[0].1 - pairs[0].0 > 1.0, "{pairs:?}");
        let line = Points::from_vec("l", 6, 2, (0..12).map(|v| (v / 2) as f64 * (v % 2) as f64).collect()).unwrap();
        assert_eq!(h1_pairs(&line, u64::MAX, &Control::default(), "t").unwrap(), (vec![], 0));
    }

    #[test]
    fn the_budget_is_checked_before_any_work() {
        let p = Points::from_vec("p", 100, 1, (0..100).map(f64::from).collect()).unwrap();
        let err = h1_pairs(&p, 1000, &Control::default(), "t").unwrap_err();
        assert!(err.to_string().contains(&planned_bytes(100).to_string()), "{err}");
    }
}
