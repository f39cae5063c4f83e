//! Distances between persistence diagrams with the L∞ ground distance, as gudhi computes them
//! by default (`gudhi.bottleneck_distance`, `gudhi.wasserstein.wasserstein_distance` with
//! `order=1, internal_p=inf`): a point (b, d) is matched to a point of the other diagram at cost
//! `max(|b − b'|, |d − d'|)` or to the diagonal at cost `(d − b)/2`.
//!
//! H0 diagrams of a point cloud are all born at 0, so they are death times on a line. Both
//! distances then have exact algorithms on the sorted deaths:
//! - bottleneck: pairing the largest remaining death of each diagram is always safe (an exchange
//!   argument: the largest death overall must be matched, and its other side's largest is the
//!   partner that leaves the most room), so the optimum is, over m, the worse of the m largest
//!   pairs' cost and half the largest death left unpaired: `min_m max(max_{s<m} |a_s − b_s|,
//!   max(a_m, b_m)/2)` with both lists descending;
//! - 1-Wasserstein: some optimal matching pairs the deaths without crossings (on a line
//!   `|a1 − b2| + |a2 − b1| ≤ |a1 − b1| + |a2 − b2|` when the pairs cross), so a dynamic program
//!   over the two sorted lists finds it: O(|a|·|b|) time, O(|b|) memory.
//!
//! General diagrams (H1): the bottleneck distance by a search over the candidate costs with a
//! matching test (a matching of the cost-≤ t pairs that covers every point farther than t from
//! the diagonal in both diagrams exists iff one covers those of each diagram: Mendelsohn–Dulmage),
//! the 1-Wasserstein distance by the Hungarian algorithm on the diagrams augmented with each
//! other's diagonal projections. Each returns a cost the matching actually has, as gudhi does.

/// L∞ distance of two diagram points.
fn linf(a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.0 - b.0).abs().max((a.1 - b.1).abs())
}

/// Distance of a point to the diagonal.
fn to_diagonal(p: (f64, f64)) -> f64 {
    (p.1 - p.0) / 2.0
}

/// The bottleneck distance of two H0 diagrams given by their (finite) death times.
pub(in crate::measures) fn bottleneck_h0(a: &[f64], b: &[f64]) -> f64 {
    let desc = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|x, y| y.total_cmp(x));
        v
    };
    let (a, b) = (desc(a), desc(b));
    let (mut paired, mut best) = (0.0f64, f64::INFINITY);
    for m in 0..=a.len().max(b.len()) {
        let (x, y) = (a.get(m).copied().unwrap_or(0.0), b.get(m).copied().unwrap_or(0.0));
        best = best.min(paired.max(x.max(y) / 2.0));
        if m >= a.len() || m >= b.len() {
            break;
        }
        paired = paired.max((x - y).abs());
    }
    best
}

/// The 1-Wasserstein distance of two H0 diagrams given by their (finite) death times.
pub(in crate::measures) fn wasserstein_h0(a: &[f64], b: &[f64]) -> f64 {
    let asc = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v
    };
    let (a, b) = (asc(a), asc(b));
    // row[j]: the least cost of matching a[..i] and b[..j].
    let mut row: Vec<f64> = std::iter::once(0.0)
        .chain(b.iter().scan(0.0, |s, &y| {
            *s += y / 2.0;
            Some(*s)
        }))
        .collect();
    for &x in &a {
        let mut diag = row[0];
        row[0] += x / 2.0;
        for (j, &y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (up + x / 2.0).min(row[j] + y / 2.0).min(diag + (x - y).abs());
            diag = up;
        }
    }
    row[b.len()]
}

/// Kuhn's augmenting paths: whether every left vertex in `left` can be matched (`adj[l]` the
/// right vertices it may take).
fn covers(left: &[usize], adj: &dyn Fn(usize, usize) -> bool, right: usize) -> bool {
    let mut owner: Vec<usize> = vec![usize::MAX; right];
    fn augment(l: usize, adj: &dyn Fn(usize, usize) -> bool, owner: &mut [usize], seen: &mut [bool]) -> bool {
        for r in 0..owner.len() {
            if !seen[r] && adj(l, r) {
                seen[r] = true;
                if owner[r] == usize::MAX || augment(owner[r], adj, owner, seen) {
                    owner[r] = l;
                    return true;
                }
            }
        }
        false
    }
    let mut seen = vec![false; right];
    for &l in left {
        seen.iter_mut().for_each(|s| *s = false);
        if !augment(l, adj, &mut owner, &mut seen) {
            return false;
        }
    }
    true
}

/// The bottleneck distance of two finite diagrams of (birth, death) points.
pub(in crate::measures) fn bottleneck(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let mut candidates: Vec<f64> = a.iter().chain(b).map(|&p| to_diagonal(p)).collect();
    candidates.extend(a.iter().flat_map(|&p| b.iter().map(move |&q| linf(p, q))));
    candidates.push(0.0);
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    let feasible = |t: f64| {
        let ra: Vec<usize> = (0..a.len()).filter(|&i| to_diagonal(a[i]) > t).collect();
        let rb: Vec<usize> = (0..b.len()).filter(|&j| to_diagonal(b[j]) > t).collect();
        covers(&ra, &|i, j| linf(a[i], b[j]) <= t, b.len()) && covers(&rb, &|j, i| linf(a[i], b[j]) <= t, a.len())
    };
    // The smallest feasible candidate (the largest is always feasible: everything to the diagonal).
    let (mut lo, mut hi) = (0usize, candidates.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if feasible(candidates[mid]) { hi = mid } else { lo = mid + 1 }
    }
    candidates[lo]
}

/// The 1-Wasserstein distance (order 1, L∞ ground) of two finite diagrams: a minimum-cost
/// perfect matching of `a` plus `b`'s diagonal projections with `b` plus `a`'s (Hungarian
/// algorithm with potentials, O(N³) for N = |a| + |b|), the matched costs summed.
pub(in crate::measures) fn wasserstein(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let (m1, m2) = (a.len(), b.len());
    let n = m1 + m2;
    if n == 0 {
        return 0.0;
    }
    // A cost no optimal matching takes: more than every point to the diagonal.
    let forbidden = 1.0 + 2.0 * a.iter().chain(b).map(|&p| to_diagonal(p)).sum::<f64>();
    // Rows: a, then b's diagonal copies; columns: b, then a's diagonal copies.
    let cost = |r: usize, c: usize| -> f64 {
        match (r < m1, c < m2) {
            (true, true) => linf(a[r], b[c]),
            (true, false) => {
                if c - m2 == r {
                    to_diagonal(a[r])
                } else {
                    forbidden
                }
            }
            (false, true) => {
                if r - m1 == c {
                    to_diagonal(b[c])
                } else {
                    forbidden
                }
            }
            (false, false) => 0.0,
        }
    };
    // e-maxx's Hungarian algorithm, 1-based with a virtual column 0.
    let (mut u, mut v) = (vec![0.0f64; n + 1], vec![0.0f64; n + 1]);
    let (mut p, mut way) = (vec![0usize; n + 1], vec![0usize; n + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0usize;
        let mut minv = vec![f64::INFINITY; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let (i0, mut delta, mut j1) = (p[j0], f64::INFINITY, 0usize);
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut costs: Vec<f64> = (1..=n).map(|j| cost(p[j] - 1, j - 1)).collect();
    costs.sort_by(f64::total_cmp);
    crate::sum::pairwise_sum(&costs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every matching of two small diagrams (each point to one of the other's or to the diagonal).
    fn brute(a: &[(f64, f64)], b: &[(f64, f64)]) -> (f64, f64) {
        fn go(
            i: usize,
            a: &[(f64, f64)],
            b: &[(f64, f64)],
            used: &mut Vec<bool>,
            cost: Vec<f64>,
            out: &mut (f64, f64),
        ) {
            if i == a.len() {
                let mut all = cost.clone();
                all.extend((0..b.len()).filter(|&j| !used[j]).map(|j| to_diagonal(b[j])));
                let max = all.iter().fold(0.0f64, |m, &c| m.max(c));
                out.0 = out.0.min(max);
                out.1 = out.1.min(all.iter().sum());
                return;
            }
            let mut c = cost.clone();
            c.push(to_diagonal(a[i]));
            go(i + 1, a, b, used, c, out);
            for j in 0..b.len() {
                if !used[j] {
                    used[j] = true;
                    let mut c = cost.clone();
                    c.push(linf(a[i], b[j]));
                    go(i + 1, a, b, used, c, out);
                    used[j] = false;
                }
            }
        }
        let mut out = (f64::INFINITY, f64::INFINITY);
        go(0, a, b, &mut vec![false; b.len()], Vec::new(), &mut out);
        out
    }

    #[test]
    fn small_diagrams_match_every_matching() {
        let mut s = 3u64;
        let mut rnd = |k: u64| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) % k) as f64
        };
        for trial in 0..300 {
            let (m1, m2) = (rnd(6) as usize, rnd(6) as usize);
            let h0 = trial % 2 == 0;
            let mut point = |_| {
                let b = if h0 { 0.0 } else { rnd(8) };
                (b, b + 1.0 + rnd(9))
            };
            let a: Vec<(f64, f64)> = (0..m1).map(&mut point).collect();
            let b: Vec<(f64, f64)> = (0..m2).map(&mut point).collect();
            let (bn, w) = brute(&a, &b);
            assert_eq!(bottleneck(&a, &b), bn, "{a:?} {b:?}");
            assert!((wasserstein(&a, &b) - w).abs() < 1e-9, "{a:?} {b:?}");
            if h0 {
                let (da, db): (Vec<f64>, Vec<f64>) = (a.iter().map(|p| p.1).collect(), b.iter().map(|p| p.1).collect());
                assert_eq!(bottleneck_h0(&da, &db), bn, "{da:?} {db:?}");
                assert!((wasserstein_h0(&da, &db) - w).abs() < 1e-9, "{da:?} {db:?}");
            }
        }
    }
}
