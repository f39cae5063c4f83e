//! The co-ranking pass: every pair's rank in both spaces, tallied into the integer counts from
//! which the whole co-ranking family (Q_NX, R_NX, T, C, MRRE, LCMC for every K) follows.
//!
//! For each row i both spaces' rows are ranked in the reference's order `(d(i,j), j)` (ties by
//! index, self excluded): an integer lattice (`lattice.rs`: small integer coordinates) by its
//! exact integer keys, counted in O(n + range); any other space by its f64 distances and
//! `row_order`'s bucket sort. That gives `ρ_ij` (original space) and `r_ij` (projection) for
//! every j. The row's tallies are then read per rank rather than per pair (`Tally`): one
//! sequential pass over the ranks x ≤ k_max adds a histogram of `max(ρ, r)` (Q_NX), difference
//! arrays for the T and C numerators and the MRRE numerators grouped by their denominator's rank.
//! The co-ranking matrix is never built: memory is O(n) per worker. Tallies are merged by integer
//! addition, so the counts are the same for any thread count and block size; each row's own
//! summary is computed from that row alone and stored in row order.
//!
//! Fused with the row pass ([`coranking_pass_fused`]): when neighbourhood measures are asked
//! with the co-ranking family, the same ranked rows also give both kNN lists (the points at the
//! first k ranks) and the cross ranks, so one pass serves every measure.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::lattice::Lattice;
use super::row_order::RowOrder;
use super::{CrossRanks, Neighbours};
use crate::control::Control;
use crate::data::Points;
use crate::error::Result;
use crate::reference::{distance_row, select_knn};

/// The integer tallies of the co-ranking matrix `Q[a][b] = #{(i, j) : ρ_ij = a, r_ij = b}` that
/// the curves need, for K = 1 ..= `k_max` (index K − 1). A row shard's partial carries them
/// (serialised without `rows`, which travel as its local values).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoRankCounts {
    pub n: usize,
    pub k_max: usize,
    /// The largest K with T and C tallied (`min(k_max, largest K < n/2)`: ZADU's tnc range).
    pub k_tnc: usize,
    /// `#{(i, j) : ρ_ij ≤ K and r_ij ≤ K}` (Q_NX's numerator).
    pub joint: Vec<u64>,
    /// `Σ_{(i, j) : r_ij ≤ K < ρ_ij} (ρ_ij − K)`: trustworthiness's numerator, K ≤ `k_tnc`.
    pub trust: Vec<u128>,
    /// `Σ_{(i, j) : ρ_ij ≤ K < r_ij} (r_ij − K)`: continuity's numerator, K ≤ `k_tnc`.
    pub cont: Vec<u128>,
    /// `Σ_{(i, j) : r_ij = m} |ρ_ij − r_ij|`, m = 1 ..= k_max: MRRE's false-neighbour terms
    /// share the denominator m.
    pub err_low: Vec<u64>,
    /// `Σ_{(i, j) : ρ_ij = m} |ρ_ij − r_ij|`: MRRE's missing-neighbour terms over m.
    pub err_high: Vec<u64>,
    /// Per row, in row order: the row summary's value.
    #[serde(skip)]
    pub rows: Vec<f64>,
}

impl CoRankCounts {
    /// No counts (a placeholder).
    pub fn empty() -> CoRankCounts {
        CoRankCounts {
            n: 0,
            k_max: 0,
            k_tnc: 0,
            joint: Vec::new(),
            trust: Vec::new(),
            cont: Vec::new(),
            err_low: Vec::new(),
            err_high: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// The same shape with every tally 0 and no rows.
    pub fn zeros(&self) -> CoRankCounts {
        CoRankCounts {
            joint: vec![0; self.joint.len()],
            trust: vec![0; self.trust.len()],
            cont: vec![0; self.cont.len()],
            err_low: vec![0; self.err_low.len()],
            err_high: vec![0; self.err_high.len()],
            rows: Vec::new(),
            ..*self
        }
    }

    /// Adds the tallies of the next span of rows (`o`'s rows follow `self`'s): integers add
    /// exactly, so the sum over any split is the whole pass's counts. False (and `self` partly
    /// added) when a tally overflows, which counts of real rows never do.
    pub fn add(&mut self, o: &CoRankCounts) -> bool {
        let ok =
            |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).all(|(x, &y)| x.checked_add(y).map(|v| *x = v).is_some());
        let wide =
            |a: &mut [u128], b: &[u128]| a.iter_mut().zip(b).all(|(x, &y)| x.checked_add(y).map(|v| *x = v).is_some());
        self.rows.extend_from_slice(&o.rows);
        ok(&mut self.joint, &o.joint)
            && wide(&mut self.trust, &o.trust)
            && wide(&mut self.cont, &o.cont)
            && ok(&mut self.err_low, &o.err_low)
            && ok(&mut self.err_high, &o.err_high)
    }
}

/// The largest K that ZADU's tnc accepts for n points (`K < n/2`).
pub fn tnc_limit(n: usize) -> usize {
    n.saturating_sub(1) / 2
}

/// Runs the pass. `k_max` must be in `1 ..= n − 2`. `row_summary` receives, for each row i,
/// its cumulative counts `#{j : max(ρ_ij, r_ij) ≤ K}` for K = 1 ..= k_max and returns the
/// row's own value (it must depend on nothing else). Reports progress per block of rows and
/// checks for a stop before every row (a row takes milliseconds at n = 50 000).
pub fn coranking_pass(
    high: &Points,
    low: &Points,
    k_max: usize,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
) -> Result<CoRankCounts> {
    coranking_pass_rows(high, low, k_max, block_rows, ctl, row_summary, 0..high.n())
}

/// [`coranking_pass`] over the rows `span` only (a row shard): the tallies of those rows'
/// pairs, and their summaries in `rows`. The tallies of disjoint spans add up to the whole
/// pass's ([`CoRankCounts::add`]).
pub fn coranking_pass_rows(
    high: &Points,
    low: &Points,
    k_max: usize,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
    span: std::ops::Range<usize>,
) -> Result<CoRankCounts> {
    let lists = ListKs { kh: 0, kl: 0, kc: 0 };
    Ok(pass(high, low, k_max, lists, block_rows, ctl, row_summary, span, None, true)?.0)
}

/// [`coranking_pass`] that also tallies the co-ranking matrix in the log bins `bins` of both
/// ranks: `matrix[a * B + b] = #{(i, j) : ρ_ij in bin a, r_ij in bin b}` (B = `bins.len()`),
/// every ordered pair i ≠ j once, so the matrix sums to n(n − 1). O(B²) memory per worker.
pub fn coranking_matrix_pass(
    high: &Points,
    low: &Points,
    k_max: usize,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
    bins: &RankBins,
) -> Result<(CoRankCounts, Vec<u64>)> {
    assert_eq!(bins.n, high.n(), "the bins are for this n");
    let lists = ListKs { kh: 0, kl: 0, kc: 0 };
    let (counts, _, matrix) =
        pass(high, low, k_max, lists, block_rows, ctl, row_summary, 0..high.n(), Some(bins), true)?;
    Ok((counts, matrix.expect("the matrix was asked for")))
}

/// The list lengths a fused pass reads off its sorted rows: the original space's kNN (`kh`),
/// the projection's (`kl`) and the cross ranks of each space's first `kc` neighbours; 0: none.
#[derive(Debug, Clone, Copy)]
pub struct ListKs {
    pub kh: usize,
    pub kl: usize,
    pub kc: usize,
}

/// What a fused pass read off its sorted rows, for the rows of its span: the lists a row pass
/// would have built, the same bits (both take the first k of the reference order and its
/// distances).
#[derive(Debug, PartialEq)]
pub struct FusedLists {
    pub high: Option<Neighbours>,
    pub low: Option<Neighbours>,
    pub cross: Option<CrossRanks>,
}

/// [`coranking_pass_rows`] fused with the row pass: the same counts, and the kNN lists and
/// cross ranks of `lists` for the rows `span` (row `span.start` first) read off the same sorted
/// rows (`kh`, `kl` ≤ n − 1), so that neighbourhood measures asked with the co-ranking family
/// need no pass of their own.
#[allow(clippy::too_many_arguments)]
pub fn coranking_pass_fused(
    high: &Points,
    low: &Points,
    k_max: usize,
    lists: ListKs,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
    span: std::ops::Range<usize>,
) -> Result<(CoRankCounts, FusedLists)> {
    let (counts, fused, _) = pass(high, low, k_max, lists, block_rows, ctl, row_summary, span, None, true)?;
    Ok((counts, fused))
}

/// One block's share of the fused lists, row-major.
#[derive(Default)]
struct BlockLists {
    high_idx: Vec<u32>,
    high_dist: Vec<f64>,
    low_idx: Vec<u32>,
    low_dist: Vec<f64>,
    rank_hl: Vec<u32>,
    rank_lh: Vec<u32>,
    dist_hl: Vec<f64>,
    dist_lh: Vec<f64>,
}

#[allow(clippy::too_many_arguments)]
fn pass(
    high: &Points,
    low: &Points,
    k_max: usize,
    lists: ListKs,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
    span: std::ops::Range<usize>,
    bins: Option<&RankBins>,
    lattices: bool,
) -> Result<(CoRankCounts, FusedLists, Option<Vec<u64>>)> {
    let n = high.n();
    assert!(!span.is_empty() && span.end <= n, "rows {span:?} out of range for n {n}");
    assert!(n >= 3 && (1..=n - 2).contains(&k_max), "k_max {k_max} out of range for n {n}");
    assert_eq!(low.n(), n, "both spaces have the same rows");
    assert!(lists.kh < n && lists.kl < n && lists.kc <= lists.kl, "lists {lists:?} for n {n}");
    let k_tnc = tnc_limit(n).min(k_max);
    let shape = Shape { n, k_max, k_tnc };
    let block_rows = block_rows.max(1);
    // One tally per concurrently running task (at most the thread count), reused across blocks.
    let pool: Mutex<Vec<Tally>> = Mutex::new(Vec::new());
    // Integer lattices rank by exact integer keys (`lattice.rs`); other spaces by f64 distances.
    // (`lattices` false: the tests' way to run the f64 path on lattice data.)
    let lattice = |p: &Points| if lattices { Lattice::of(p) } else { None };
    let (high_lattice, low_lattice) = (lattice(high), lattice(low));
    let done = AtomicU64::new(0);
    let blocks: Vec<std::ops::Range<usize>> =
        span.clone().step_by(block_rows).map(|s| s..(s + block_rows).min(span.end)).collect();
    let outs = blocks
        .par_iter()
        .map(|rows| {
            let mut t = pool
                .lock()
                .expect("tally pool")
                .pop()
                .unwrap_or_else(|| Tally::new(shape, bins, (high_lattice.as_ref(), low_lattice.as_ref()), lists));
            let m = rows.len();
            let mut summaries = Vec::with_capacity(m);
            let mut out = BlockLists {
                high_idx: vec![0; m * lists.kh],
                high_dist: vec![0.0; m * lists.kh],
                low_idx: vec![0; m * lists.kl],
                low_dist: vec![0.0; m * lists.kl],
                rank_hl: vec![0; m * lists.kc],
                rank_lh: vec![0; m * lists.kc],
                dist_hl: vec![0.0; m * lists.kc],
                dist_lh: vec![0.0; m * lists.kc],
            };
            let mut result = Ok(());
            for (r, i) in rows.clone().enumerate() {
                result = ctl.check();
                if result.is_err() {
                    break;
                }
                let cum = t.row(high, low, i);
                summaries.push(row_summary(cum));
                t.lists(lists, r, &mut out);
            }
            // The tally goes back either way: a stopped run drops them all.
            pool.lock().expect("tally pool").push(t);
            if result.is_ok() {
                let d = done.fetch_add(m as u64, Ordering::Relaxed) + m as u64;
                ctl.report("co-ranking", d, span.len() as u64);
            }
            result.map(|()| (summaries, out))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut total = pool.into_inner().expect("tally pool").into_iter().reduce(Tally::merge).expect("n >= 3 rows ran");
    let rows = outs.iter().flat_map(|(s, _)| s.iter().copied()).collect();
    let cat_u = |f: fn(&BlockLists) -> &Vec<u32>| outs.iter().flat_map(|(_, o)| f(o).iter().copied()).collect();
    let cat_f = |f: fn(&BlockLists) -> &Vec<f64>| outs.iter().flat_map(|(_, o)| f(o).iter().copied()).collect();
    let fused = FusedLists {
        high: (lists.kh > 0).then(|| Neighbours {
            k: lists.kh,
            idx: cat_u(|o| &o.high_idx),
            dist: cat_f(|o| &o.high_dist),
        }),
        low: (lists.kl > 0).then(|| Neighbours {
            k: lists.kl,
            idx: cat_u(|o| &o.low_idx),
            dist: cat_f(|o| &o.low_dist),
        }),
        cross: (lists.kc > 0).then(|| CrossRanks {
            k: lists.kc,
            rank_high_of_low: cat_u(|o| &o.rank_hl),
            rank_low_of_high: cat_u(|o| &o.rank_lh),
            dist_high_of_low: cat_f(|o| &o.dist_hl),
            dist_low_of_high: cat_f(|o| &o.dist_lh),
        }),
    };
    let matrix = total.matrix.take().map(|m| m.counts);
    Ok((total.counts(rows), fused, matrix))
}

/// Log bins of the ranks 1 ..= n − 1 for the co-ranking matrix: each octave [2^m, 2^(m+1))
/// split into `per_octave` bins at the integers `2^m + ⌊t · 2^m / per_octave⌋` (t = 0 …
/// per_octave − 1; where an octave has fewer ranks than that, every rank is its own bin), up to n.
/// Integer arithmetic only: the same edges on every platform.
#[derive(Debug, Clone, PartialEq)]
pub struct RankBins {
    /// Points: the ranks binned are 1 ..= n − 1.
    pub n: usize,
    /// Bin t holds the ranks `edges[t] .. edges[t + 1]`: `edges[0] = 1`, the last is n.
    pub edges: Vec<u32>,
    /// The bin of each rank (index rank − 1).
    of_rank: Vec<u16>,
}

/// The most bins per octave of [`RankBins`].
pub const MAX_PER_OCTAVE: usize = 16;

impl RankBins {
    /// The bins for n points (n ≥ 2, n − 1 < 2^32), `per_octave` in `1 ..= MAX_PER_OCTAVE`.
    pub fn new(n: usize, per_octave: usize) -> RankBins {
        assert!(n >= 2 && (n as u64) <= u64::from(u32::MAX), "n {n} out of range");
        assert!((1..=MAX_PER_OCTAVE).contains(&per_octave), "per_octave {per_octave} out of range");
        let mut edges: Vec<u32> = Vec::new();
        let mut base: u64 = 1;
        'octaves: loop {
            for t in 0..per_octave as u64 {
                let e = base + t * base / per_octave as u64;
                if e >= n as u64 {
                    break 'octaves;
                }
                if edges.last() != Some(&(e as u32)) {
                    edges.push(e as u32);
                }
            }
            base *= 2;
        }
        edges.push(n as u32);
        let mut of_rank = Vec::with_capacity(n - 1);
        for (b, w) in edges.windows(2).enumerate() {
            of_rank.extend(std::iter::repeat_n(b as u16, (w[1] - w[0]) as usize));
        }
        RankBins { n, edges, of_rank }
    }
    /// Number of bins.
    pub fn len(&self) -> usize {
        self.edges.len() - 1
    }
    /// Whether there are no bins (never: n ≥ 2 has one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bin of `rank` (1 ..= n − 1).
    #[inline]
    pub fn bin(&self, rank: usize) -> usize {
        usize::from(self.of_rank[rank - 1])
    }
}

/// A worker's co-ranking matrix in log bins.
struct BinnedMatrix {
    bins: RankBins,
    counts: Vec<u64>,
}

/// The joint counts `#{j : ρ_ij ≤ K and r_ij ≤ K}` for K ≤ `k_max` from the original space's
/// kNN lists alone (`graph`: n rows of at least `k_max` neighbours, in order), the projection's
/// first `k_max` neighbours found here: a point at place p in one list and q in the other
/// counts for every K ≥ max(p, q). Q_NX, R_NX and LCMC need nothing more, so with exact lists
/// these are the full pass's integers; the rank-based tallies (T, C, MRRE) stay empty.
pub fn coranking_from_lists(
    graph: (&[u32], usize),
    low: &Points,
    k_max: usize,
    block_rows: usize,
    ctl: &Control,
    row_summary: &(dyn Fn(&[u32]) -> f64 + Sync),
) -> Result<CoRankCounts> {
    let (idx, kg) = graph;
    let n = low.n();
    assert!(k_max >= 1 && k_max <= kg && idx.len() == n * kg, "the graph holds k_max neighbours per row");
    let mut rows = vec![0.0; n];
    let hist = Mutex::new(vec![0u64; k_max + 1]);
    let done = AtomicU64::new(0);
    rows.par_chunks_mut(block_rows.max(1)).enumerate().try_for_each(|(b, out)| -> Result<()> {
        let (mut dy, mut keys) = (vec![0.0; n], Vec::with_capacity(n));
        let (mut ly, mut ld) = (vec![0u32; k_max], vec![0.0; k_max]);
        let (mut place, mut row_hist) = (vec![u32::MAX; n], vec![0u32; k_max + 1]);
        let mut local = vec![0u64; k_max + 1];
        for (r, o) in out.iter_mut().enumerate() {
            ctl.check()?;
            let i = b * block_rows.max(1) + r;
            distance_row(low, i, &mut dy);
            select_knn(&dy, i, k_max, &mut keys, &mut ly, &mut ld);
            for (q, &j) in ly.iter().enumerate() {
                place[j as usize] = q as u32 + 1;
            }
            row_hist.fill(0);
            for (p, &j) in idx[i * kg..i * kg + k_max].iter().enumerate() {
                let q = place[j as usize];
                if q != u32::MAX {
                    row_hist[(p + 1).max(q as usize)] += 1;
                }
            }
            for &j in &ly {
                place[j as usize] = u32::MAX;
            }
            let mut c = 0u32;
            for (h, total) in row_hist[1..].iter_mut().zip(&mut local[1..]) {
                *total += u64::from(*h);
                c += *h;
                *h = c;
            }
            *o = row_summary(&row_hist[1..]);
        }
        let mut all = hist.lock().expect("histogram");
        all.iter_mut().zip(&local).for_each(|(a, &l)| *a += l);
        let d = done.fetch_add(out.len() as u64, Ordering::Relaxed) + out.len() as u64;
        ctl.report("co-ranking", d, n as u64);
        Ok(())
    })?;
    let joint = hist
        .into_inner()
        .expect("histogram")
        .into_iter()
        .skip(1)
        .scan(0u64, |c, h| {
            *c += h;
            Some(*c)
        })
        .collect();
    Ok(CoRankCounts {
        n,
        k_max,
        k_tnc: 0,
        joint,
        trust: Vec::new(),
        cont: Vec::new(),
        err_low: Vec::new(),
        err_high: Vec::new(),
        rows,
    })
}

#[derive(Clone, Copy)]
struct Shape {
    n: usize,
    k_max: usize,
    k_tnc: usize,
}

/// One space's side of a row: how its rows are ranked (integer keys on an integer lattice, else
/// the reference's f64 distances) and the row's scratch.
struct Side<'a> {
    lattice: Option<&'a Lattice>,
    /// The row's distances (f64 path) or keys (lattice path).
    dist: Vec<f64>,
    keys: Vec<u32>,
    words: Vec<u32>,
    /// The sorts' order of the row (scratch: the ranks are the result).
    order: Vec<u32>,
    /// `rank[j]`: j's place in the order, from 1 (`rank[i] = 0`).
    rank: Vec<u32>,
}

impl<'a> Side<'a> {
    fn new(n: usize, lattice: Option<&'a Lattice>) -> Self {
        let (nd, nk) = if lattice.is_some() { (0, n) } else { (n, 0) };
        Side {
            lattice,
            dist: vec![0.0; nd],
            keys: vec![0; nk],
            words: Vec::new(),
            order: Vec::with_capacity(n),
            rank: vec![0; n],
        }
    }

    /// Ranks row i (the same ranks either way: the lattice's premises, `lattice.rs`): by counting
    /// small integer keys, else by sorting the keys or the distances.
    fn rank_row(&mut self, points: &Points, i: usize, sorter: &mut RowOrder) {
        let n = self.rank.len();
        match self.lattice {
            Some(l) => {
                let top = l.keys_row(i, &mut self.words, &mut self.keys);
                debug_assert!(top <= l.max_key());
                if sorter.rank_keys(&self.keys, i, top, &mut self.rank) {
                    return;
                }
                sorter.sort_keys(&self.keys, i, &mut self.order);
            }
            None => {
                distance_row(points, i, &mut self.dist);
                sorter.sort(&self.dist, i, &mut self.order);
            }
        }
        let rank = &mut self.rank[..n];
        rank[i] = 0;
        for (p, &j) in self.order.iter().enumerate() {
            rank[j as usize] = p as u32 + 1;
        }
    }

    /// `d(i, j)` of the last row, the reference's bits.
    #[inline]
    fn dist(&self, j: usize) -> f64 {
        match self.lattice {
            Some(l) => l.distance(self.keys[j]),
            None => self.dist[j],
        }
    }
}

/// One worker's scratch (O(n)) and tallies (O(k_max)). Every tally array is indexed by K or m
/// directly (index 0 unused).
///
/// A row's pairs are read per rank rather than per point: `a_of_b[x]` is the original rank of
/// the point at projection rank x and `b_of_a[x]` the projection rank of the point at original
/// rank x (two permutations of 1 ..= n − 1). Every tally at index x is a function of those two
/// numbers, so each row adds to the tallies in one sequential pass over x ≤ k_max, without a
/// branch or a random access: a pair (ρ, r) = (a, b) counts for `max(a, b)` in the joint
/// histogram (at x = a from `b_of_a` when a ≥ b, at x = b from `a_of_b` when b > a), adds
/// `|a − b|` to MRRE's `err_low[b]` and `err_high[a]`, and, as a false neighbour for K in b .. a
/// (b < a) or a missing one for K in a .. b (a < b), adds (its other rank − K) to T's or C's
/// numerator over that range: difference arrays with a start at the lower rank and an end at the
/// higher one, of which only ends ≤ k_tnc are ever read.
struct Tally<'a> {
    s: Shape,
    high: Side<'a>,
    low: Side<'a>,
    sorter: RowOrder,
    a_of_b: Vec<u32>,
    b_of_a: Vec<u32>,
    /// When lists are read off the pass: the point at each original rank (the row's order in the
    /// original space, from index 1) and at each projection rank.
    point_of_a: Vec<u32>,
    point_of_b: Vec<u32>,
    row_hist: Vec<u32>,
    hist: Vec<u64>,
    /// The MRRE, T and C tallies of every row so far.
    wide: Tallies<u64, i64>,
    /// The rows' MRRE, T and C tallies since the last flush, in 32-bit lanes (twice a vector's
    /// 64-bit lanes): a row adds at most n − 1 to any entry or takes it away, so `cap` =
    /// ⌊(2³¹ − 1)/n⌋ rows fit before they are added into `wide` ([`Tally::flush`]).
    narrow: Tallies<u32, i32>,
    pending: usize,
    cap: usize,
    matrix: Option<BinnedMatrix>,
}

/// Rows per flush of the 32-bit tallies for n points (a test may ask for fewer: flushing is exact).
fn flush_every(n: usize) -> usize {
    let cap = i32::MAX as usize / n.max(1);
    #[cfg(test)]
    let cap = match tests::FLUSH_EVERY.load(Ordering::Relaxed) {
        0 => cap,
        c => c.min(cap),
    };
    cap
}

/// MRRE's numerators by rank (index m ≤ k_max) and T's and C's: Σ of the other rank and the
/// pair count over each pair's K range, as difference arrays (index K ≤ k_tnc); in lanes of
/// `U` (unsigned) and `I` (signed).
struct Tallies<U, I> {
    err_low: Vec<U>,
    err_high: Vec<U>,
    trust_sum: Vec<I>,
    trust_count: Vec<I>,
    cont_sum: Vec<I>,
    cont_count: Vec<I>,
}

impl<U: Copy + Default, I: Copy + Default> Tallies<U, I> {
    fn new(k_max: usize, k_tnc: usize) -> Self {
        Tallies {
            err_low: vec![U::default(); k_max + 1],
            err_high: vec![U::default(); k_max + 1],
            trust_sum: vec![I::default(); k_tnc + 1],
            trust_count: vec![I::default(); k_tnc + 1],
            cont_sum: vec![I::default(); k_tnc + 1],
            cont_count: vec![I::default(); k_tnc + 1],
        }
    }

    /// Adds every tally into `total` (lanes as wide or wider) and clears it.
    fn drain_into<W: std::ops::AddAssign + From<U>, J: std::ops::AddAssign + From<I>>(
        &mut self,
        total: &mut Tallies<W, J>,
    ) {
        fn add<T: Copy + Default, W: std::ops::AddAssign + From<T>>(total: &mut [W], part: &mut [T]) {
            for (t, p) in total.iter_mut().zip(part.iter_mut()) {
                *t += W::from(std::mem::take(p));
            }
        }
        add(&mut total.err_low, &mut self.err_low);
        add(&mut total.err_high, &mut self.err_high);
        add(&mut total.trust_sum, &mut self.trust_sum);
        add(&mut total.trust_count, &mut self.trust_count);
        add(&mut total.cont_sum, &mut self.cont_sum);
        add(&mut total.cont_count, &mut self.cont_count);
    }
}

impl<'a> Tally<'a> {
    fn new(
        s: Shape,
        bins: Option<&RankBins>,
        lattices: (Option<&'a Lattice>, Option<&'a Lattice>),
        lists: ListKs,
    ) -> Self {
        let (n, k, kt) = (s.n, s.k_max, s.k_tnc);
        // The rank-indexed permutations hold a power of two ≥ n entries, indexed `& mask`.
        let size = n.next_power_of_two();
        let points = if lists.kh.max(lists.kl).max(lists.kc) > 0 { size } else { 0 };
        Tally {
            s,
            high: Side::new(n, lattices.0),
            low: Side::new(n, lattices.1),
            sorter: RowOrder::default(),
            a_of_b: vec![0; size],
            b_of_a: vec![0; size],
            point_of_a: vec![0; points],
            point_of_b: vec![0; points],
            row_hist: vec![0; k + 1],
            hist: vec![0; k + 1],
            wide: Tallies::new(k, kt),
            narrow: Tallies::new(k, kt),
            pending: 0,
            cap: flush_every(n),
            matrix: bins.map(|b| BinnedMatrix { bins: b.clone(), counts: vec![0; b.len() * b.len()] }),
        }
    }

    /// Tallies row i; returns its cumulative counts for K = 1 ..= k_max.
    fn row(&mut self, high: &Points, low: &Points, i: usize) -> &[u32] {
        let Shape { n, k_max, k_tnc } = self.s;
        self.high.rank_row(high, i, &mut self.sorter);
        self.low.rank_row(low, i, &mut self.sorter);
        let (rho, r) = (&self.high.rank[..n], &self.low.rank[..n]);
        {
            // Ranks are < n (point i's are 0, a slot no read uses), so `& mask` changes none of
            // them; it lets these stores go without bounds checks.
            let mask = self.a_of_b.len() - 1;
            let (ab, ba) = (&mut self.a_of_b[..=mask], &mut self.b_of_a[..=mask]);
            if self.point_of_a.is_empty() {
                for (&a, &b) in rho.iter().zip(r) {
                    ab[b as usize & mask] = a;
                    ba[a as usize & mask] = b;
                }
            } else {
                let (pa, pb) = (&mut self.point_of_a[..=mask], &mut self.point_of_b[..=mask]);
                for (j, (&a, &b)) in rho.iter().zip(r).enumerate() {
                    ab[b as usize & mask] = a;
                    ba[a as usize & mask] = b;
                    pa[a as usize & mask] = j as u32;
                    pb[b as usize & mask] = j as u32;
                }
            }
        }
        if let Some(m) = &mut self.matrix {
            let w = m.bins.len();
            for (t, (&a, &b)) in rho.iter().zip(r).enumerate() {
                if t != i {
                    m.counts[m.bins.bin(a as usize) * w + m.bins.bin(b as usize)] += 1;
                }
            }
        }
        // Index loops over slices of one length: they vectorise.
        if self.pending == self.cap {
            self.flush();
        }
        self.pending += 1;
        let (ab, ba) = (&self.a_of_b[1..=k_max], &self.b_of_a[1..=k_max]);
        let w = &mut self.narrow;
        let hist = &mut self.row_hist[1..=k_max];
        let (el, eh) = (&mut w.err_low[1..=k_max], &mut w.err_high[1..=k_max]);
        for t in 0..k_max {
            let (x, a, b) = (t as u32 + 1, ab[t], ba[t]);
            hist[t] = u32::from(x > a) + u32::from(x >= b);
            el[t] += x.abs_diff(a);
            eh[t] += x.abs_diff(b);
        }
        // Ranks are < n ≤ i32::MAX (`cap` ≥ 1): each fits i32.
        let (ab, ba) = (&ab[..k_tnc], &ba[..k_tnc]);
        let (ts, tc) = (&mut w.trust_sum[1..=k_tnc], &mut w.trust_count[1..=k_tnc]);
        let (cs, cc) = (&mut w.cont_sum[1..=k_tnc], &mut w.cont_count[1..=k_tnc]);
        for t in 0..k_tnc {
            let (x, a, b) = (t as i32 + 1, ab[t] as i32, ba[t] as i32);
            // At x: T's start of the pair at projection rank x (when x < a, the other rank a) and
            // end of the pair at original rank x (when b < x); C's start of the pair at original
            // rank x (when x < b, the other rank b) and end of the pair at projection rank x.
            let (t_start, t_end, c_start, c_end) = (x < a, b < x, x < b, a < x);
            ts[t] += if t_start { a } else { 0 } - if t_end { x } else { 0 };
            tc[t] += i32::from(t_start) - i32::from(t_end);
            cs[t] += if c_start { b } else { 0 } - if c_end { x } else { 0 };
            cc[t] += i32::from(c_start) - i32::from(c_end);
        }
        let mut c = 0u32;
        for (h, total) in self.row_hist[1..].iter_mut().zip(&mut self.hist[1..]) {
            *total += u64::from(*h);
            c += *h;
            *h = c;
        }
        &self.row_hist[1..]
    }

    /// Writes the last row's lists (its slot `r` of the block) from its two orders: the first k
    /// of each order are its kNN (the reference's order, ties by index), and the ranks give the
    /// cross ranks.
    fn lists(&self, ks: ListKs, r: usize, out: &mut BlockLists) {
        if self.point_of_a.is_empty() {
            return;
        }
        let (hx, ly) = (&self.point_of_a[1..], &self.point_of_b[1..]);
        for (s, &j) in hx[..ks.kh].iter().enumerate() {
            out.high_idx[r * ks.kh + s] = j;
            out.high_dist[r * ks.kh + s] = self.high.dist(j as usize);
        }
        for (s, &j) in ly[..ks.kl].iter().enumerate() {
            out.low_idx[r * ks.kl + s] = j;
            out.low_dist[r * ks.kl + s] = self.low.dist(j as usize);
        }
        for s in 0..ks.kc {
            let (jl, jh) = (ly[s] as usize, hx[s] as usize);
            let at = r * ks.kc + s;
            out.rank_hl[at] = self.high.rank[jl];
            out.dist_hl[at] = self.high.dist(jl);
            out.rank_lh[at] = self.low.rank[jh];
            out.dist_lh[at] = self.low.dist(jh);
        }
    }

    /// Adds the 32-bit tallies into the totals and clears them.
    fn flush(&mut self) {
        self.narrow.drain_into(&mut self.wide);
        self.pending = 0;
    }

    fn merge(mut self, mut o: Tally) -> Tally<'a> {
        self.flush();
        o.flush();
        fn add<T: Copy + std::ops::AddAssign>(a: &mut [T], b: &[T]) {
            a.iter_mut().zip(b).for_each(|(x, &y)| *x += y);
        }
        add(&mut self.hist, &o.hist);
        o.wide.drain_into(&mut self.wide);
        if let (Some(a), Some(b)) = (&mut self.matrix, &o.matrix) {
            add(&mut a.counts, &b.counts);
        }
        self
    }

    fn counts(mut self, rows: Vec<f64>) -> CoRankCounts {
        self.flush();
        let Shape { n, k_max, k_tnc } = self.s;
        let joint = self.hist[1..]
            .iter()
            .scan(0u64, |c, &h| {
                *c += h;
                Some(*c)
            })
            .collect();
        CoRankCounts {
            n,
            k_max,
            k_tnc,
            joint,
            trust: numerators(&self.wide.trust_sum, &self.wide.trust_count, k_tnc),
            cont: numerators(&self.wide.cont_sum, &self.wide.cont_count, k_tnc),
            err_low: self.wide.err_low[1..].to_vec(),
            err_high: self.wide.err_high[1..].to_vec(),
            rows,
        }
    }
}

/// `Σ (other − K)` for K = 1 ..= k from the difference arrays: prefix(sum) − K · prefix(count).
fn numerators(sum: &[i64], count: &[i64], k: usize) -> Vec<u128> {
    let (mut s, mut c) = (0i128, 0i128);
    (1..=k)
        .map(|kk| {
            s += i128::from(sum[kk]);
            c += i128::from(count[kk]);
            u128::try_from(s - kk as i128 * c).expect("every term other − K is positive")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::distance_pair;

    #[test]
    fn rank_bins_are_log_spaced_integers_that_tile_the_ranks() {
        let b = RankBins::new(1797, 4);
        assert_eq!(&b.edges[..12], &[1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16]);
        assert_eq!(*b.edges.last().unwrap(), 1797);
        assert!(b.edges.windows(2).all(|w| w[0] < w[1]));
        for r in 1..1797 {
            let t = b.bin(r);
            assert!(b.edges[t] as usize <= r && r < b.edges[t + 1] as usize, "rank {r} in bin {t}");
        }
        assert_eq!(RankBins::new(2, 1).edges, vec![1, 2]);
        assert_eq!(RankBins::new(9, 1).edges, vec![1, 2, 4, 8, 9]);
    }

    /// The binned matrix counts every ordered pair once, at its two ranks' bins, and the pass's
    /// other tallies are those of the plain pass.
    #[test]
    fn the_binned_matrix_holds_every_pair_at_its_ranks() {
        let n = 40;
        let pts = |d: usize, s: u64| {
            let v = (0..n * d).map(|t| (((t as u64 + 3) * s) % 11) as f64).collect();
            Points::from_vec("p", n, d, v).unwrap()
        };
        let (high, low) = (pts(3, 7), pts(2, 5));
        let rank = |p: &Points, i: usize, j: usize| {
            let d = distance_pair(p, i, j);
            1 + (0..n)
                .filter(|&l| {
                    l != i && {
                        let e = distance_pair(p, i, l);
                        e < d || (e == d && l < j)
                    }
                })
                .count()
        };
        let bins = RankBins::new(n, 2);
        let w = bins.len();
        let mut want = vec![0u64; w * w];
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                want[bins.bin(rank(&high, i, j)) * w + bins.bin(rank(&low, i, j))] += 1;
            }
        }
        let ctl = Control::default();
        let (counts, matrix) = coranking_matrix_pass(&high, &low, n - 2, 3, &ctl, &|_| 0.0, &bins).unwrap();
        assert_eq!(matrix, want);
        assert_eq!(matrix.iter().sum::<u64>(), (n * (n - 1)) as u64);
        assert_eq!(counts, coranking_pass(&high, &low, n - 2, 7, &ctl, &|_| 0.0).unwrap());
    }

    /// Rows per flush of the 32-bit tallies, when not 0 ([`flush_every`]).
    pub(super) static FLUSH_EVERY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// On integer lattices the pass ranks by integer keys; with the lattices refused it ranks by
    /// the f64 distances: every count, row summary, list and cross rank is the same, on
    /// duplicates, ties and both key-ranking ways (counted, and bucket-sorted for a wide range).
    #[test]
    fn lattice_keys_give_the_f64_pass() {
        let mut rng = crate::splitmix::SplitMix64(11);
        let mut ints = |n: usize, d: usize, levels: u64| {
            let v = (0..n * d).map(|_| (rng.next_u64() % levels) as f64).collect();
            Points::from_vec("p", n, d, v).unwrap()
        };
        let cases = [
            (ints(300, 50, 8), ints(300, 2, 100)),
            (ints(257, 5, 3), ints(257, 2, 4)),      // heavy ties, duplicate points
            (ints(200, 2, 30_000), ints(200, 2, 7)), // a range too wide to count
            (ints(5, 2, 2), ints(5, 1, 2)),
        ];
        let ctl = Control::default();
        let summary = |c: &[u32]| c.iter().enumerate().map(|(k, &v)| f64::from(v) / (k + 1) as f64).sum::<f64>();
        for (high, low) in &cases {
            let n = high.n();
            assert!(Lattice::of(high).is_some() && Lattice::of(low).is_some());
            for (k_max, lists) in
                [(n - 2, ListKs { kh: 4, kl: 3, kc: 3 }), (2.min(n - 2), ListKs { kh: 0, kl: 0, kc: 0 })]
            {
                let bins = RankBins::new(n, 2);
                let run = |lat: bool| pass(high, low, k_max, lists, 7, &ctl, &summary, 0..n, Some(&bins), lat).unwrap();
                let (a, b) = (run(true), run(false));
                assert_eq!(a.0, b.0, "counts, n {n}, k_max {k_max}");
                // The 32-bit tallies flushed every 3 rows: the same counts.
                FLUSH_EVERY.store(3, Ordering::Relaxed);
                let c = run(true);
                FLUSH_EVERY.store(0, Ordering::Relaxed);
                assert_eq!(a.0, c.0, "counts flushed every 3 rows, n {n}, k_max {k_max}");
                assert_eq!(
                    a.0.rows.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    b.0.rows.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                );
                assert_eq!(a.1, b.1, "lists, n {n}");
                assert_eq!(a.2, b.2, "matrix, n {n}");
            }
        }
    }
}
