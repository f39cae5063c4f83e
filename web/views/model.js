// The views' model: the library's exact data (per-point values, kNN lists, cross ranks,
// Shepard and co-ranking tallies) arranged per projection, and what the views read off it.
// Nothing here recomputes a neighbour, a rank or a tally: lists and ranks are looked up, and
// the selection's T & C are the tnc formula over the library's integer ranks.

/** The tnc score at k on projection p of an evaluation (any tnc when none is at k), or null. */
function tncScore(proj, k) {
  const tncs = proj.scores.filter((s) => s.id === 'tnc');
  return tncs.find((s) => Number(s.params.k) === k) ?? tncs[0] ?? null;
}

const values = (a) => (a ? Float64Array.from(a, (v) => (v === null ? NaN : v)) : null);

/**
 * The model the views draw from.
 * evaluation: the CLI's JSON schema (local values as arrays); coords: per projection
 * {x, y} (the first two columns); lists: {k, knnHigh, projections: [{knnLow, rankLowOfHigh,
 * rankHighOfLow, shepard, coranking}]} as the library's views give them.
 */
export function buildModel({ title = '', evaluation, coords, lists, labels = null, leftOut = [], meta = {} }) {
  const n = evaluation.run.n;
  const k = lists.k;
  const projections = evaluation.projections.map((proj, p) => {
    const tnc = tncScore(proj, k);
    const locals = [];
    for (const s of proj.scores) {
      for (const [key, arr] of Object.entries(s.local ?? {})) {
        if (arr === null || arr === undefined) continue; // left out of a report
        locals.push({ key, id: s.id, kind: s.local_kinds?.[key] ?? 'mean', values: values(arr) });
      }
    }
    const value = (id, key) => proj.scores.find((s) => s.id === id)?.values?.[key] ?? null;
    const v = lists.projections[p] ?? {};
    return {
      name: proj.name,
      x: coords[p].x,
      y: coords[p].y,
      localT: values(tnc?.local?.local_trustworthiness),
      localC: values(tnc?.local?.local_continuity),
      tncK: tnc ? Number(tnc.params.k) : null,
      trustworthiness: tnc?.values?.trustworthiness ?? null,
      continuity: tnc?.values?.continuity ?? null,
      locals,
      knnLow: v.knnLow ?? null,
      rankLowOfHigh: v.rankLowOfHigh ?? null,
      rankHighOfLow: v.rankHighOfLow ?? null,
      shepard: v.shepard ?? null,
      coranking: v.coranking ?? null,
      stress: value('stress', 'stress'),
      srho: value('srho', 'spearman_rho'),
    };
  });
  return { title, n, k, labels, knnHigh: lists.knnHigh ?? null, evaluation, projections, leftOut, meta };
}

/** The point the lens opens on: the smallest local T + C (the worst kept neighbourhood; the lowest index on ties). */
export function defaultPoint(model, p) {
  const pr = model.projections[p];
  if (!pr.localT || !pr.localC) return 0;
  let best = 0;
  let bestV = Infinity;
  for (let i = 0; i < model.n; i++) {
    const v = pr.localT[i] + pr.localC[i];
    if (v < bestV) {
      bestV = v;
      best = i;
    }
  }
  return best;
}

/** Whether projection p has what its lens reads: the original kNN lists, its own, and the cross ranks both ways (a large report may leave them out). */
export function lensReady(model, p) {
  const pr = model.projections[p];
  return Boolean(model.knnHigh && pr.knnLow && pr.rankLowOfHigh && pr.rankHighOfLow);
}

/**
 * The lens of point i on projection p: its k original neighbours with their projection ranks
 * (missing: rank > k) and its k projection neighbours with their original ranks (false: rank > k).
 */
export function lensOf(model, p, i) {
  const { k } = model;
  const pr = model.projections[p];
  const row = (a) => Array.from(a.subarray(i * k, (i + 1) * k));
  const high = row(model.knnHigh);
  const highRanks = row(pr.rankLowOfHigh);
  const low = row(pr.knnLow);
  const lowRanks = row(pr.rankHighOfLow);
  const missing = [];
  const missingRanks = [];
  high.forEach((j, s) => {
    if (highRanks[s] > k) {
      missing.push(j);
      missingRanks.push(highRanks[s]);
    }
  });
  const falseN = [];
  const falseRanks = [];
  low.forEach((j, s) => {
    if (lowRanks[s] > k) {
      falseN.push(j);
      falseRanks.push(lowRanks[s]);
    }
  });
  return { point: i, k, high, high_ranks_in_projection: highRanks, low, low_ranks_in_original: lowRanks, missing, missing_ranks: missingRanks, false: falseN, false_ranks: falseRanks };
}

/** tnc's factor 2 / (k (2n − 3k − 1)) (ZADU's). */
export function tncFactor(n, k) {
  return 2 / (k * (2 * n - 3 * k - 1));
}

/**
 * A selection's measures on projection p: its size, the mean of every per-point value over it,
 * and T & C of its rows: 1 − f · Σ_{i∈S} Σ_j (r − k)⁺ / |S|, the excess ranks summed exactly
 * as integers (the library's cross ranks), f = tnc's factor.
 */
export function selectionStats(model, p, idx) {
  const pr = model.projections[p];
  const { k, n } = model;
  const out = { projection: pr.name, count: idx.length, mean_local: {} };
  if (!idx.length) return out;
  for (const l of pr.locals) {
    let s = 0;
    let c = 0;
    for (const i of idx) {
      const v = l.values[i];
      if (Number.isFinite(v)) {
        s += v;
        c++;
      }
    }
    out.mean_local[`${l.id}.${l.key}`] = c ? s / c : null;
  }
  if (pr.rankHighOfLow && pr.rankLowOfHigh && k > 0 && 2 * k < n) {
    let et = 0;
    let ec = 0;
    for (const i of idx) {
      for (let s = i * k; s < (i + 1) * k; s++) {
        if (pr.rankHighOfLow[s] > k) et += pr.rankHighOfLow[s] - k;
        if (pr.rankLowOfHigh[s] > k) ec += pr.rankLowOfHigh[s] - k;
      }
    }
    const f = tncFactor(n, k);
    out.k = k;
    out.trustworthiness = 1 - (et * f) / idx.length;
    out.continuity = 1 - (ec * f) / idx.length;
  }
  return out;
}

/** The original kNN edges (i, j, projection rank r) of projection p, worst last; with q, only the worst q % (at least one). */
export function reliabilityEdges(model, p, q = 100) {
  const { k, n } = model;
  const pr = model.projections[p];
  const m = n * k;
  const ranks = pr.rankLowOfHigh;
  // A counting sort by rank (ranks are 1 … n − 1), stable: ties stay in edge order. O(n·k).
  const start = new Uint32Array(n + 1);
  for (let e = 0; e < m; e++) start[ranks[e]]++;
  for (let r = 0, at = 0; r <= n; r++) {
    const c = start[r];
    start[r] = at;
    at += c;
  }
  const order = new Uint32Array(m);
  for (let e = 0; e < m; e++) order[start[ranks[e]]++] = e;
  const keep = q >= 100 ? m : Math.max(1, Math.ceil((m * q) / 100));
  return { order: order.subarray(m - keep), total: m, shown: keep };
}
