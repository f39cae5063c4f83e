//! Steadiness & cohesiveness (`snc`), as ZADU 0.5.4's `steadiness_cohesiveness` computes it
//! (`zadu/measures/utils/snc_cpu.py`).
//!
//! Each space gets a weighted shared-nearest-neighbour graph on its exact kNN (k = ⌊√n⌋ by
//! default): the j-th neighbour of i weighs k + 1 − j, S(a, b) = Σ over common neighbours of
//! the product of weights, divided by the largest S. Steadiness extracts clusters from the
//! projection by random walks (each kNN edge followed with probability S), clusters each one in
//! the original space (HDBSCAN on 1/(S + α), or k-means) and measures how much closer the
//! clusters are in the projection; cohesiveness swaps the spaces. 150 iterations each.
//!
//! Memory: the graphs are never materialised. S is kept as the kNN lists plus their reverse
//! (O(n·k)); a row of S is accumulated in O(n) scratch when needed. An iteration holds its
//! cluster's m×m distances for HDBSCAN (m ≈ walk_num_ratio·n) and its cluster-pair sums of S
//! (exact integers). Local values, computed only when asked for, need for every pair of points
//! ever placed in two different clusters its running mean distortion: a map over the pairs
//! touched, as ZADU's per-point dicts.
//!
//! Randomness and order: all draws (seeds, walks, k-means seeds) come from NumPy's
//! `RandomState(random_state)` in ZADU's order, serially; each iteration runs on the pool as
//! soon as it is drawn and the results are summed in iteration order, so the result does not
//! depend on the thread count. A walk's points are ordered as CPython's `set` orders them
//! ([`PySet`]), the order HDBSCAN and the cluster sums see in ZADU.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, mpsc};

use rayon::prelude::*;

use super::def::custom_kmeans;
use super::support::frontier::{Frontier, extremes};
#[cfg(debug_assertions)]
use super::support::hdbscan::core_distances;
use super::support::hdbscan::{
    Key, MIN_CLUSTER_SIZE, core_keys, core_keys_u32, hdbscan_keys, hdbscan_precomputed_with_core,
};
use super::support::kmeans::kmeans;
use super::support::params::{param_int, param_str};
use super::support::pyset::PySet;
use super::support::rng::Mt19937;
use super::{Ctx, Output, Resolved};
use crate::data::Points;
use crate::error::{Error, Result};
use crate::resources::Neighbours;

/// Iterations whose events are folded into the local logs together (bounds the memory held by
/// events; a constant, so results do not depend on it or on threads).
const ITERATIONS_PER_BATCH: usize = 16;
/// Without local values, a batch holds at most this many drawn points per point of the data
/// (O(n) memory; at n = 2000 ZADU's defaults draw 100–160 points an iteration, so all 300 fit).
const DRAWN_POINTS_PER_POINT: usize = 64;
/// Largest `walk_num_ratio` accepted: the walk length is ratio·n steps per extraction.
const MAX_WALK_RATIO: f64 = 100.0;
/// Largest S whose distances are tabulated (8 MiB a graph; ⌊√n⌋-NN graphs reach it past
/// n ≈ 2·10⁴, where S is computed per pair instead).
const TABLE_MAX: u64 = 1 << 20;
/// A key `S0 − S` of a cluster's HDBSCAN matrix: falls as S grows, `S0` (S = 0) below
/// `Key::FAR` (Prim's start) and `NEAR` (the diagonal) below every pair's key.
trait SKey: Key {
    const S0: Self;
    const NEAR: Self;
    /// The key of S + w (never below NEAR: S stays at most the graph's largest).
    fn minus(self, w: u64) -> Self;
    /// S back.
    fn s(self) -> u64;
    /// The core distances' keys of an m×m key matrix ([`core_keys`]).
    fn core(keys: &[Self], m: usize, kth: usize, out: &mut Vec<Self>);
}

impl SKey for u32 {
    const S0: u32 = u32::MAX - 1;
    const NEAR: u32 = 0;
    #[inline]
    fn minus(self, w: u64) -> u32 {
        self - w as u32
    }
    fn s(self) -> u64 {
        u64::from(Self::S0 - self)
    }
    fn core(keys: &[u32], m: usize, kth: usize, out: &mut Vec<u32>) {
        core_keys_u32(keys, m, kth, out);
    }
}

impl SKey for u64 {
    const S0: u64 = u64::MAX - 1;
    const NEAR: u64 = 0;
    #[inline]
    fn minus(self, w: u64) -> u64 {
        self - w
    }
    fn s(self) -> u64 {
        Self::S0 - self
    }
    fn core(keys: &[u64], m: usize, kth: usize, out: &mut Vec<u64>) {
        core_keys(keys, m, kth, out);
    }
}

fn undefined(reason: &str) -> Error {
    Error::Undefined { id: "snc".into(), projection: None, reason: reason.into() }
}

/// One space's weighted SNN graph, kept as kNN lists and their reverse.
struct Snn<'a> {
    knn: &'a Neighbours,
    k: usize,
    /// For every point m, the points j that list m (ascending), with m's weight in j's list:
    /// `rev[rev_at[m]..rev_at[m + 1]]`, one allocation for the cache.
    rev_at: Vec<u32>,
    rev: Vec<(u32, u32)>,
    /// The largest S over pairs (1 when every S is 0: ZADU then leaves S undivided).
    max: f64,
    /// S(i, j) / max for the j-th neighbour of i, n×k.
    knn_sim: Vec<f64>,
    alpha: f64,
    /// `1/(S/max + α)` for every S in 0..=max when max <= TABLE_MAX (the same expression,
    /// evaluated once per value instead of once per pair; empty otherwise).
    distances: Vec<f64>,
    /// Whether HDBSCAN may run on `u32` keys `S0 − S` instead of the distances: proven by the
    /// table (see [`Snn::set_max`]).
    keyed: bool,
}

/// Scratch for accumulating rows of S: the row, and the points it has met (the first `len`
/// of `touched`, which has room for all n, so that a point is noted without a branch).
struct Row {
    acc: Vec<u64>,
    touched: Vec<u32>,
    len: usize,
}

impl Row {
    fn new(n: usize) -> Self {
        Row { acc: vec![0; n], touched: vec![0; n], len: 0 }
    }
    fn touched(&self) -> &[u32] {
        &self.touched[..self.len]
    }
    fn clear(&mut self) {
        for &j in &self.touched[..self.len] {
            self.acc[j as usize] = 0;
        }
        self.len = 0;
    }
}

impl<'a> Snn<'a> {
    fn new(knn: &'a Neighbours, k: usize, n: usize) -> Self {
        let mut rev_at = vec![0u32; n + 1];
        for j in 0..n {
            for &m in knn.row(j, k) {
                rev_at[m as usize + 1] += 1;
            }
        }
        for m in 0..n {
            rev_at[m + 1] += rev_at[m];
        }
        let mut fill = rev_at[..n].to_vec();
        let mut rev = vec![(0, 0); n * k];
        for j in 0..n {
            for (p, &m) in knn.row(j, k).iter().enumerate() {
                rev[fill[m as usize] as usize] = (j as u32, (k + 1 - p) as u32);
                fill[m as usize] += 1;
            }
        }
        Snn { knn, k, rev_at, rev, max: 1.0, knn_sim: Vec::new(), alpha: 0.0, distances: Vec::new(), keyed: false }
    }

    /// The points that list m, ascending, with m's weight in their lists.
    #[inline]
    fn rev(&self, m: usize) -> &[(u32, u32)] {
        &self.rev[self.rev_at[m] as usize..self.rev_at[m + 1] as usize]
    }

    /// Sets the largest S (0 when every S is 0) and tabulates the distances.
    fn set_max(&mut self, max: u64, alpha: f64) {
        self.max = if max > 0 { max as f64 } else { 1.0 };
        self.alpha = alpha;
        self.distances.clear();
        if max <= TABLE_MAX {
            self.distances = (0..=max).map(|s| self.distance_of(s)).collect();
        }
        // HDBSCAN on keys (`hdbscan_keys`) gives the distances' labels when the key order is the
        // distances' order over every S present (0..=max) and each distance is below f64::MAX.
        // Keys S0 − S fall as S grows, so the premise is: the distances fall strictly with S (no
        // two values of S round to one distance) and the largest, 1/α, is below f64::MAX (a tiny
        // α overflows to +∞). Checked on the table, which also bounds S by TABLE_MAX (the u32
        // keys cannot wrap); without one, the distances are used.
        self.keyed = !self.distances.is_empty()
            && self.distances[0] < f64::MAX
            && self.distances.windows(2).all(|w| w[0] > w[1]);
    }

    fn distance_of(&self, s: u64) -> f64 {
        1.0 / (s as f64 / self.max + self.alpha)
    }

    /// `1/(S/max + α)` for an S of this graph.
    #[inline]
    fn distance(&self, s: u64) -> f64 {
        match self.distances.get(s as usize) {
            Some(&d) => d,
            None => self.distance_of(s),
        }
    }

    /// Row i of S over the points j >= `from` only (the reverse lists are ascending in j).
    fn row_from(&self, i: usize, row: &mut Row, from: usize) {
        row.clear();
        let (acc, touched, mut len) = (&mut row.acc[..], &mut row.touched[..], row.len);
        for (p, &m) in self.knn.row(i, self.k).iter().enumerate() {
            let wi = (self.k + 1 - p) as u64;
            let list = self.rev(m as usize);
            let start = if from == 0 { 0 } else { list.partition_point(|&(j, _)| (j as usize) < from) };
            for &(j, wj) in &list[start..] {
                let a = &mut acc[j as usize];
                touched[len] = j;
                len += usize::from(*a == 0);
                *a += wi * wj as u64;
            }
        }
        row.len = len;
    }
}

/// What the blocks of rows of the setup pass folded into one state find, and its scratch rows.
struct BlockSetup {
    rows: [Row; 2],
    /// (S_X, smallest S_Y, largest S_Y) per S_X met (see [`Frontier`]).
    frontier: Frontier,
    /// The largest S of each graph among the blocks' pairs.
    max: [u64; 2],
}

impl BlockSetup {
    fn new(n: usize, bound: u64) -> Self {
        BlockSetup { rows: [Row::new(n), Row::new(n)], frontier: Frontier::new(bound), max: [0; 2] }
    }
}

/// One pass over the pairs (each once, from its smaller point, both graphs together): the
/// largest S of each graph, the kNN similarities, and the extremes of
/// 1/(S_X/max_X + α) − 1/(S_Y/max_Y + α) over the pairs where either S is non-zero (0 included).
fn prepare<'a>(raw: &mut Snn<'a>, emb: &mut Snn<'a>, n: usize, alpha: f64, block: usize) -> (f64, f64) {
    let block = block.max(1);
    let blocks = n.div_ceil(block);
    let k = raw.k;
    // S(a, b) <= Σ w² over the weights 2..=k + 1 (rearrangement), in both graphs.
    let k1 = k as u128 + 1;
    let bound = u64::try_from(k1 * (k1 + 1) * (2 * k1 + 1) / 6 - 1).unwrap_or(u64::MAX);
    // S(i, p-th neighbour of i) of each graph, n×k, each stored once (by the block of the pair's
    // smaller point), so the order of the stores does not matter.
    let knn: [Vec<AtomicU64>; 2] = std::array::from_fn(|_| (0..n * k).map(|_| AtomicU64::new(0)).collect());
    let knn = &knn;
    let (r, e): (&Snn, &Snn) = (raw, emb);
    // Each rayon job folds its blocks into one state (rows, frontier), and the states are
    // merged: nothing here depends on which blocks a job took.
    let setup = (0..blocks)
        .into_par_iter()
        .fold(
            || BlockSetup::new(n, bound),
            |mut out, b| {
                let BlockSetup { rows: [rr, er], frontier, max } = &mut out;
                // Block b takes rows b, b + blocks, ...: a row's half costs ∝ n − i, so strided
                // blocks cost alike and the jobs rayon splits them into stay balanced.
                for i in (b..n).step_by(blocks) {
                    r.row_from(i, rr, i + 1);
                    e.row_from(i, er, i + 1);
                    for (t, (g, row)) in [(r, &*rr), (e, &*er)].into_iter().enumerate() {
                        max[t] = row.touched().iter().map(|&j| row.acc[j as usize]).fold(max[t], u64::max);
                        // i's later neighbours, and the later points that list i (at k + 1 − w).
                        for (p, &j) in g.knn.row(i, k).iter().enumerate().filter(|&(_, &j)| j as usize > i) {
                            knn[t][i * k + p].store(row.acc[j as usize], Relaxed);
                        }
                        let list = g.rev(i);
                        for &(j, w) in &list[list.partition_point(|&(j, _)| j as usize <= i)..] {
                            knn[t][j as usize * k + k + 1 - w as usize].store(row.acc[j as usize], Relaxed);
                        }
                    }
                    for &j in rr.touched().iter().chain(er.touched().iter().filter(|&&j| rr.acc[j as usize] == 0)) {
                        frontier.note(rr.acc[j as usize], er.acc[j as usize]);
                    }
                }
                out
            },
        )
        .reduce_with(|mut a, mut b| {
            a.frontier.absorb(&mut b.frontier);
            a.max = [a.max[0].max(b.max[0]), a.max[1].max(b.max[1])];
            a
        });
    let mut setup = setup.unwrap_or_else(|| BlockSetup::new(n, bound));
    raw.set_max(setup.max[0], alpha);
    emb.set_max(setup.max[1], alpha);
    for (t, g) in [&mut *raw, &mut *emb].into_iter().enumerate() {
        g.knn_sim = knn[t].iter().map(|s| s.load(Relaxed) as f64 / g.max).collect();
    }
    let (r, e): (&Snn, &Snn) = (raw, emb);
    let mut kept = Vec::new();
    setup.frontier.drain(&mut kept);
    extremes(&kept, |s| r.distance(s), |s| e.distance(s))
}

/// ZADU's `clustering_strategy`: HDBSCAN (`dbscan`), or scikit-learn's KMeans with ⌊√m⌋ (at
/// least 2) clusters for m drawn points (`kmeans`) or with k (`'<k>-means'`), at most m.
#[derive(Clone, Copy, PartialEq)]
enum Clustering {
    Hdbscan,
    KMeans(Option<usize>),
}

impl Clustering {
    fn of(r: &Resolved) -> Self {
        match param_str(r, "clustering_strategy") {
            "dbscan" => Clustering::Hdbscan,
            "kmeans" => Clustering::KMeans(None),
            s => Clustering::KMeans(Some(
                custom_kmeans(s).and_then(|k| k.ok()).expect("the registry accepts '<k>-means' only with k >= 1"),
            )),
        }
    }

    /// KMeans's `n_clusters` for m points.
    fn clusters(k: Option<usize>, m: usize) -> usize {
        k.unwrap_or_else(|| ((m as f64).sqrt() as usize).max(2)).min(m)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Steadiness,
    Cohesiveness,
}

/// What an iteration runs on: the extracted points in ZADU's order, and k-means's seed.
struct Draw {
    mode: Mode,
    points: Vec<u32>,
    kmeans_seed: u32,
}

/// `_extract_cluster`: a breadth-first random walk from `seed` over the walk space's kNN.
fn extract(g: &Snn, seed: u32, walk_num: usize, rng: &mut Mt19937) -> PySet {
    let mut members = PySet::new();
    members.add(seed);
    let mut queue = VecDeque::from([seed]);
    let mut visits = 0;
    while visits < walk_num {
        let Some(i) = queue.pop_front() else { break };
        let i = i as usize;
        for (p, &j) in g.knn.row(i, g.k).iter().enumerate() {
            let probability = 1.0 - g.knn_sim[i * g.k + p];
            if rng.random_sample() > probability {
                queue.push_back(j);
                members.add(j);
                visits += 1;
            }
        }
    }
    members
}

/// `_prepare_iteration`: seeds until one can expand and yields a multi-point cluster.
fn draw(g: &Snn, n: usize, walk_num: usize, kmeans: bool, mode: Mode, rng: &mut Mt19937) -> Result<Draw> {
    for _ in 0..(n * 10).max(100) {
        let seed = rng.randint(n as u64) as u32;
        let row = &g.knn_sim[seed as usize * g.k..(seed as usize + 1) * g.k];
        if !row.iter().any(|&s| s > 0.0) {
            continue;
        }
        for _ in 0..1000 {
            let members = extract(g, seed, walk_num, rng);
            if members.len() > 1 {
                let kmeans_seed = if kmeans { rng.randint(i32::MAX as u64) as u32 } else { 0 };
                return Ok(Draw { mode, points: members.to_vec(), kmeans_seed });
            }
        }
    }
    Err(undefined("no multi-point cluster could be extracted (as ZADU: increase k or walk_num_ratio)"))
}

/// The pieces of one iteration that the score and the local values need.
struct IterationResult {
    distortion: f64,
    weight: f64,
    clusters: Vec<Vec<u32>>,
    /// (i, j, distortion) for the cluster pairs that count, in ZADU's order (with local values only).
    events: Vec<(u32, u32, f64)>,
}

/// The two spaces and the settings an iteration reads.
struct Setup<'a> {
    raw: Snn<'a>,
    emb: Snn<'a>,
    high: &'a Points,
    low: &'a Points,
    alpha: f64,
    clustering: Clustering,
    /// Whether local values are asked for (the rounds then keep their events and clusters).
    local: bool,
    /// (min, max) distortion of steadiness, then of cohesiveness.
    ranges: [(f64, f64); 2],
}

/// Scratch of one worker: the reverse kNN lists restricted to a cluster, as compressed rows
/// over the cluster's distinct neighbours (`local` maps a point to its row), and one row of S.
struct Scratch {
    local: Vec<u32>,
    neighbours: Vec<u32>,
    offsets: Vec<u32>,
    entries: Vec<(u32, u32)>,
    lists: Vec<Vec<(u32, u64)>>,
    /// HDBSCAN's m×m input as keys (see [`Setup::hdbscan`]): `keys32` where the graph is keyed.
    keys32: Vec<u32>,
    keys64: Vec<u64>,
    /// The cluster-pair sums of S in each space, reused across iterations.
    sums: [Vec<u64>; 2],
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            local: vec![u32::MAX; n],
            neighbours: Vec::new(),
            offsets: Vec::new(),
            entries: Vec::new(),
            lists: Vec::new(),
            keys32: Vec::new(),
            keys64: Vec::new(),
            sums: [Vec::new(), Vec::new()],
        }
    }
}

impl Scratch {
    /// The kNN lists of `points` inverted: for each distinct neighbour l of theirs
    /// (`neighbours[l]`, `local` maps it to l until [`Scratch::release`]), the points listing it
    /// as (index into `points`, weight), in the order of `points`:
    /// `entries[offsets[l]..offsets[l + 1]]`.
    fn invert(&mut self, g: &Snn, points: &[u32]) {
        self.neighbours.clear();
        self.offsets.clear();
        for &j in points {
            for &nb in g.knn.row(j as usize, g.k) {
                let l = &mut self.local[nb as usize];
                if *l == u32::MAX {
                    *l = self.neighbours.len() as u32;
                    self.neighbours.push(nb);
                    self.offsets.push(0);
                }
                self.offsets[*l as usize] += 1;
            }
        }
        let mut total = 0u32;
        for o in self.offsets.iter_mut() {
            let c = *o;
            *o = total;
            total += c;
        }
        self.offsets.push(total);
        self.entries.clear();
        self.entries.resize(total as usize, (0, 0));
        let mut fill = self.offsets.clone();
        for (b, &j) in points.iter().enumerate() {
            for (p, &nb) in g.knn.row(j as usize, g.k).iter().enumerate() {
                let l = self.local[nb as usize] as usize;
                self.entries[fill[l] as usize] = (b as u32, (g.k + 1 - p) as u32);
                fill[l] += 1;
            }
        }
    }

    /// Forgets the neighbours' local ids of the last [`Scratch::invert`].
    fn release(&mut self) {
        for &nb in &self.neighbours {
            self.local[nb as usize] = u32::MAX;
        }
    }
}

impl Setup<'_> {
    /// HDBSCAN's input among `points` (m×m, in their order) for one space, as keys
    /// `T::S0 − S` (the diagonal 0, nearer than any pair), in `keys`, and each member's core
    /// distance's key in `core`: each member's row of S summed over the members that share its
    /// neighbours only (exact integers). S is symmetric, so each row sums only the members after
    /// it (a neighbour's list holds its members in order, and row a meets its own entry first in
    /// every list it reads) and is mirrored into the lower triangle, which completes row a once
    /// it is summed. The key of a core distance is its row's entry at index min_samples sorted
    /// ascending (`np.partition`): keys fall as S grows and distances do not rise (correctly
    /// rounded division and addition are monotone), so it is the key of the core distance.
    #[inline(never)]
    fn cluster_keys<T: SKey>(&self, g: &Snn, points: &[u32], s: &mut Scratch, keys: &mut Vec<T>, core: &mut Vec<T>) {
        let m = points.len();
        s.invert(g, points);
        // `fill` walks each list: its next entry is the next member to read it.
        let mut fill = s.offsets.clone();
        let (local, entries, offsets): (&[u32], &[(u32, u32)], &[u32]) = (&s.local, &s.entries, &s.offsets);
        let min_points = MIN_CLUSTER_SIZE.min(m - 1);
        keys.clear();
        keys.resize(m * m, T::S0);
        core.clear();
        // A slice, so that the loops need not reload the vector's pointer after each store.
        let keys = &mut keys[..];
        for a in 0..m {
            let row = &mut keys[a * m..(a + 1) * m];
            for (p, &nb) in g.knn.row(points[a] as usize, g.k).iter().enumerate() {
                let wa = (g.k + 1 - p) as u64;
                let l = local[nb as usize] as usize;
                let own = fill[l] as usize;
                debug_assert_eq!(entries[own].0 as usize, a);
                fill[l] += 1;
                for &(b, wb) in &entries[own + 1..offsets[l + 1] as usize] {
                    row[b as usize] = row[b as usize].minus(wa * u64::from(wb));
                }
            }
            row[a] = T::NEAR;
            for b in a + 1..m {
                keys[b * m + a] = keys[a * m + b];
            }
        }
        T::core(keys, m, min_points, core);
        s.release();
    }

    /// HDBSCAN's labels for a cluster of this space: on `u32` keys `S0 − S` when they order the
    /// distances ([`Snn::keyed`]), else on the distances `1/(S/max + α)` themselves (from `u64`
    /// keys, which hold any S). The keys stay in `s.keys32` / `s.keys64` for [`pair_sums`].
    fn hdbscan(&self, g: &Snn, points: &[u32], s: &mut Scratch) -> Vec<i64> {
        if g.keyed {
            let mut keys = std::mem::take(&mut s.keys32);
            let labels = self.hdbscan_on(g, points, s, &mut keys);
            s.keys32 = keys;
            labels
        } else {
            let mut keys = std::mem::take(&mut s.keys64);
            let labels = self.hdbscan_on(g, points, s, &mut keys);
            s.keys64 = keys;
            labels
        }
    }

    fn hdbscan_on<T: SKey>(&self, g: &Snn, points: &[u32], s: &mut Scratch, keys: &mut Vec<T>) -> Vec<i64> {
        let m = points.len();
        let mut core = Vec::new();
        self.cluster_keys(g, points, s, keys, &mut core);
        // The package's input: the m×m distances (0 on the diagonal) and the core distances.
        let distances = |keys: &[T]| -> Vec<f64> {
            let diagonal = |i: usize| i.is_multiple_of(m + 1);
            keys.iter().enumerate().map(|(i, &key)| if diagonal(i) { 0.0 } else { g.distance(key.s()) }).collect()
        };
        let core_distances_of_keys = || -> Vec<f64> { core.iter().map(|&key| g.distance(key.s())).collect() };
        let labels = if g.keyed {
            let distance = |key: T| if key == T::FAR { f64::MAX } else { g.distance(key.s()) };
            hdbscan_keys(keys, m, &core, distance, true)
        } else {
            hdbscan_precomputed_with_core(&distances(keys), m, &core_distances_of_keys(), true)
        };
        // The package's path on the matrix: the same core distances and, on keys, the same labels.
        #[cfg(debug_assertions)]
        {
            let dist = distances(keys);
            let core = core_distances(&dist, m, MIN_CLUSTER_SIZE);
            assert!(
                core.iter().zip(&core_distances_of_keys()).all(|(a, b)| a.to_bits() == b.to_bits()),
                "core distances"
            );
            assert_eq!(labels, hdbscan_precomputed_with_core(&dist, m, &core, true), "HDBSCAN on the matrix");
        }
        labels
    }

    /// Σ S(a, b) over a ∈ A, b ∈ B for every pair of clusters A > B (C×C, lower triangle), as
    /// exact integers: Σ_m U_A(m) U_B(m) with U_A(m) the summed weights of m in A's lists.
    /// `sums` is a reused buffer.
    fn cluster_sums(&self, g: &Snn, clusters: &[Vec<u32>], s: &mut Scratch, mut sums: Vec<u64>) -> Vec<u64> {
        let c = clusters.len();
        s.neighbours.clear();
        for (ci, members) in clusters.iter().enumerate() {
            for &i in members {
                for (p, &nb) in g.knn.row(i as usize, g.k).iter().enumerate() {
                    let w = (g.k + 1 - p) as u64;
                    let l = &mut s.local[nb as usize];
                    if *l == u32::MAX {
                        *l = s.neighbours.len() as u32;
                        s.neighbours.push(nb);
                        if s.lists.len() < s.neighbours.len() {
                            s.lists.push(Vec::new());
                        }
                    }
                    // Clusters are visited one after another, so a cluster's entry is the last.
                    let list = &mut s.lists[*l as usize];
                    match list.last_mut() {
                        Some((cj, u)) if *cj as usize == ci => *u += w,
                        _ => list.push((ci as u32, w)),
                    }
                }
            }
        }
        sums.clear();
        sums.resize(c * c, 0);
        for (l, &nb) in s.neighbours.iter().enumerate() {
            let list = &mut s.lists[l];
            for x in 1..list.len() {
                let (cx, ux) = list[x];
                for &(cy, uy) in &list[..x] {
                    sums[cx as usize * c + cy as usize] += ux * uy;
                }
            }
            list.clear();
            s.local[nb as usize] = u32::MAX;
        }
        sums
    }

    /// `_measure_single_iter`.
    fn run(&self, d: &Draw, s: &mut Scratch) -> IterationResult {
        let (lo, hi) = self.ranges[(d.mode == Mode::Cohesiveness) as usize];
        let scale = hi - lo;
        let empty = IterationResult { distortion: 0.0, weight: 0.0, clusters: Vec::new(), events: Vec::new() };
        if scale <= 0.0 {
            return empty;
        }
        let (pts, m) = (&d.points, d.points.len());
        // Steadiness clusters in the original space, cohesiveness in the projection.
        let (g, data) = match d.mode {
            Mode::Steadiness => (&self.raw, self.high),
            Mode::Cohesiveness => (&self.emb, self.low),
        };
        let labels: Vec<i64> = if let Clustering::KMeans(k) = self.clustering {
            let dim = data.dim();
            let rows = pts.iter().flat_map(|&i| data.row(i as usize).iter().copied()).collect();
            let sub = Points::from_vec("snc cluster", m, dim, rows).expect("a non-empty subset of valid points");
            kmeans(&sub, Clustering::clusters(k, m), d.kmeans_seed).into_iter().map(i64::from).collect()
        } else {
            self.hdbscan(g, pts, s)
        };
        // `_separate_cluster_labels`: clusters by label, then each noise point alone.
        let count = labels.iter().copied().max().map_or(0, |l| (l + 1).max(0) as usize);
        let mut clusters: Vec<Vec<u32>> = vec![Vec::new(); count];
        for (&i, &l) in pts.iter().zip(&labels) {
            if l >= 0 {
                clusters[l as usize].push(i);
            } else {
                clusters.push(vec![i]);
            }
        }
        // `_cluster_distance_matrices`: 1/(mean S between two clusters + α) in each space.
        let c = clusters.len();
        let (raw_sums, emb_sums) = (std::mem::take(&mut s.sums[0]), std::mem::take(&mut s.sums[1]));
        // HDBSCAN's space has its member pairs' S at hand; the other space sums its lists.
        let clustered = if self.clustering == Clustering::Hdbscan { Some(d.mode) } else { None };
        let raw_sums = match clustered {
            Some(Mode::Steadiness) => s.pair_sums(g, &labels, count, c, raw_sums),
            _ => self.cluster_sums(&self.raw, &clusters, s, raw_sums),
        };
        let emb_sums = match clustered {
            Some(Mode::Cohesiveness) => s.pair_sums(g, &labels, count, c, emb_sums),
            _ => self.cluster_sums(&self.emb, &clusters, s, emb_sums),
        };
        let distance = |sums: &[u64], g: &Snn, i: usize, j: usize| {
            1.0 / (sums[i * c + j] as f64 / g.max / (clusters[i].len() * clusters[j].len()) as f64 + self.alpha)
        };
        let (mut distortion, mut weight) = (0.0f64, 0.0f64);
        let mut events = Vec::new();
        for i in 0..c {
            for j in 0..i {
                // No shared neighbour in either space: both distances are 1/α, no distortion.
                if raw_sums[i * c + j] == 0 && emb_sums[i * c + j] == 0 {
                    continue;
                }
                let (r, e) = (distance(&raw_sums, &self.raw, i, j), distance(&emb_sums, &self.emb, i, j));
                let distance = if d.mode == Mode::Steadiness { r - e } else { e - r };
                if distance <= 0.0 {
                    continue;
                }
                let dist = (distance - lo) / scale;
                let w = (clusters[i].len() * clusters[j].len()) as f64;
                distortion += dist * w;
                weight += w;
                if self.local {
                    events.push((i as u32, j as u32, dist));
                }
            }
        }
        s.sums = [raw_sums, emb_sums];
        IterationResult { distortion, weight, clusters, events }
    }
}

impl Scratch {
    /// [`Setup::cluster_sums`] from the S of the last HDBSCAN matrix (exact integers, so the
    /// same sums), built on `g`: the cluster of member a is its label, or `count` + its rank
    /// among the noise.
    fn pair_sums(&self, g: &Snn, labels: &[i64], count: usize, c: usize, sums: Vec<u64>) -> Vec<u64> {
        if g.keyed {
            pair_sums(&self.keys32, labels, count, c, sums)
        } else {
            pair_sums(&self.keys64, labels, count, c, sums)
        }
    }
}

fn pair_sums<T: SKey>(keys: &[T], labels: &[i64], count: usize, c: usize, mut sums: Vec<u64>) -> Vec<u64> {
    let m = labels.len();
    let mut noise = count;
    let of: Vec<usize> = labels
        .iter()
        .map(|&l| {
            if l >= 0 {
                l as usize
            } else {
                noise += 1;
                noise - 1
            }
        })
        .collect();
    sums.clear();
    sums.resize(c * c, 0);
    for a in 0..m {
        let x = of[a];
        for (&key, &y) in keys[a * m + a + 1..(a + 1) * m].iter().zip(&of[a + 1..]) {
            if x != y {
                sums[x.max(y) * c + x.min(y)] += key.s();
            }
        }
    }
    sums
}

/// A deterministic hasher for pair keys (the logs are filled serially, so their iteration
/// order never matters; this keeps runs reproducible and fast).
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// ZADU's per-point logs: for every pair ever split between two clusters, the summed
/// distortion·weight and the count (a pair's two entries always receive the same updates, so
/// one is kept), and each point's partners in the order its dict first saw them.
struct Log {
    index: HashMap<u64, u32, BuildHasherDefault<PairHasher>>,
    sums: Vec<(f64, u32)>,
    order: Vec<Vec<u32>>,
}

impl Log {
    fn new(n: usize) -> Self {
        Log { index: HashMap::default(), sums: Vec::new(), order: vec![Vec::new(); n] }
    }

    /// `_record_log` of one event.
    fn record(&mut self, a: &[u32], b: &[u32], dval: f64) {
        for &i in a {
            for &j in b {
                let key = (u64::from(i.min(j)) << 32) | u64::from(i.max(j));
                let next = self.sums.len() as u32;
                let idx = *self.index.entry(key).or_insert(next);
                if idx == next {
                    self.sums.push((dval, 1));
                    self.order[i as usize].push(idx);
                    self.order[j as usize].push(idx);
                } else {
                    let s = &mut self.sums[idx as usize];
                    s.0 += dval;
                    s.1 += 1;
                }
            }
        }
    }

    /// `_finalize_logs` + `_vertices_info`: each point's sum of mean distortions, over the max.
    fn vertices(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .order
            .iter()
            .map(|o| o.iter().fold(0.0, |acc, &idx| acc + self.sums[idx as usize].0 / self.sums[idx as usize].1 as f64))
            .collect();
        let max = v.iter().copied().fold(0.0f64, f64::max);
        if max > 0.0 {
            v.iter_mut().for_each(|x| *x /= max);
        }
        v
    }
}

/// ZADU's parameter checks that the registry's types do not cover.
fn check(r: &Resolved, name: &str, ok: bool, reason: &str) -> Result<()> {
    if ok {
        return Ok(());
    }
    let value = r.params.iter().find(|(p, _)| p == name).map_or(String::new(), |(_, v)| v.to_string());
    Err(Error::BadParam { id: "snc".into(), param: name.into(), value, reason: reason.into() })
}

pub(super) fn compute(ctx: &Ctx, r: &Resolved) -> Result<Output> {
    let (n, k) = (ctx.n(), r.k);
    let iterations = param_int(r, "iteration");
    check(r, "iteration", iterations >= 1, "must be at least 1")?;
    let ratio = r.float("walk_num_ratio");
    check(r, "walk_num_ratio", ratio <= MAX_WALK_RATIO, "must be at most 100 (walks of ratio·n steps)")?;
    let alpha = r.float("alpha");
    // 1/α is the distance of pairs without a shared neighbour; +∞ (α < 1/f64::MAX) would break
    // HDBSCAN's lambdas (1/d = 0 for every such merge), as it breaks ZADU's.
    check(r, "alpha", (1.0 / alpha).is_finite(), "must be at least 5.6e-309 (1/alpha must be finite)")?;
    let clustering = Clustering::of(r);
    // ZADU draws k-means's random_state after each cluster, for every strategy but HDBSCAN.
    let kmeans = clustering != Clustering::Hdbscan;
    let seed = param_int(r, "random_state") as u32;
    let walk_num = ((n as f64 * ratio) as usize).max(1);

    let mut raw = Snn::new(ctx.knn_high(), k, n);
    let mut emb = Snn::new(ctx.knn_low(), k, n);
    let (lo, hi) = prepare(&mut raw, &mut emb, n, alpha, ctx.block_rows);
    let (max_compress, min_compress) = (hi.max(0.0), lo.max(0.0));
    let (max_stretch, min_stretch) = (if lo < 0.0 { -lo } else { 0.0 }, if hi < 0.0 { -hi } else { 0.0 });
    let setup = Setup {
        raw,
        emb,
        high: ctx.high,
        low: ctx.low,
        alpha,
        clustering,
        local: ctx.local,
        ranges: [(min_compress, max_compress), (min_stretch, max_stretch)],
    };

    // The draws are made serially, in ZADU's order (steadiness's iterations walk the
    // projection, then cohesiveness's walk the original space), and each round is handed to
    // the pool as soon as it is drawn, so rounds run while later ones are drawn; the results
    // are folded in iteration order. Draws never depend on results, so a batch may span both
    // modes: with local values it holds ITERATIONS_PER_BATCH rounds (bounding the events held),
    // for scores only up to DRAWN_POINTS_PER_POINT·n drawn points (one batch at ZADU's
    // defaults, so both CPUs stay busy to the end).
    let mut rng = Mt19937::new(seed);
    let mut sums = [(0.0f64, 0.0f64); 2];
    let mut logs = [Log::new(n), Log::new(n)];
    let mut order = [Mode::Steadiness, Mode::Cohesiveness]
        .into_iter()
        .flat_map(|mode| std::iter::repeat_n(mode, iterations as usize));
    // One scratch per pool thread (a round's result does not depend on which it gets).
    let scratch: Vec<Mutex<Scratch>> = (0..rayon::current_num_threads()).map(|_| Mutex::new(Scratch::new(n))).collect();
    let (setup, scratch) = (&setup, &scratch);
    loop {
        let (tx, rx) = mpsc::channel::<(usize, Mode, IterationResult)>();
        let mut held = 0usize;
        let drawn = rayon::scope(|pool| -> Result<usize> {
            let mut count = 0;
            while count < if ctx.local { ITERATIONS_PER_BATCH } else { usize::MAX } && held < DRAWN_POINTS_PER_POINT * n
            {
                let Some(mode) = order.next() else { break };
                // Steadiness walks the projection's graph, cohesiveness the original space's.
                let g = if mode == Mode::Steadiness { &setup.emb } else { &setup.raw };
                let d = draw(g, n, walk_num, kmeans, mode, &mut rng)?;
                held += d.points.len();
                let (tx, at) = (tx.clone(), count);
                pool.spawn(move |_| {
                    let slot = rayon::current_thread_index().unwrap_or(0) % scratch.len();
                    let mut s = scratch[slot].lock().unwrap_or_else(|e| e.into_inner());
                    // The receiver outlives the scope, so the send cannot fail.
                    let _ = tx.send((at, d.mode, setup.run(&d, &mut s)));
                });
                count += 1;
            }
            Ok(count)
        })?;
        drop(tx);
        if drawn == 0 {
            break;
        }
        let mut results: Vec<(usize, Mode, IterationResult)> = rx.into_iter().collect();
        results.sort_unstable_by_key(|r| r.0);
        for (_, mode, res) in results {
            let m = mode as usize;
            sums[m].0 += res.distortion;
            sums[m].1 += res.weight;
            // Without local values ZADU's per-pair logs are not needed.
            for &(i, j, dist) in &res.events {
                let (a, b) = (&res.clusters[i as usize], &res.clusters[j as usize]);
                logs[m].record(a, b, dist * (a.len() * b.len()) as f64);
            }
        }
    }
    let score = |(distortion, weight): (f64, f64)| if weight == 0.0 { 1.0 } else { 1.0 - distortion / weight };
    let (steadiness, cohesiveness) = (score(sums[0]), score(sums[1]));
    let stead_ratio = ((1.0 - steadiness) * 2.0).max(1.0);
    let cohev_ratio = ((1.0 - cohesiveness) * 2.0).max(1.0);
    let local = |log: &Log, ratio: f64| -> Vec<f64> {
        if !ctx.local {
            return Vec::new();
        }
        log.vertices().into_iter().map(|v| 1.0 - v * ratio).collect()
    };
    let (local_steadiness, local_cohesiveness) = (local(&logs[0], cohev_ratio), local(&logs[1], stead_ratio));
    Ok(Output::new()
        .value("steadiness", steadiness)
        .value("cohesiveness", cohesiveness)
        .local("local_steadiness", local_steadiness)
        .local("local_cohesiveness", local_cohesiveness))
}
