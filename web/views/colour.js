// The views' colour scales, written once (the Python plots in python/faithful_dr/plot.py use
// the same numbers). Every scale maps to [r, g, b] integers 0–255.

import { viridis } from '../plots.js';

/**
 * CheckViz's two-dimensional scale (after Lespinats & Aupetit 2011): a cell's colour mixes
 * four corners by how far its local trustworthiness t and local continuity c fall below 1,
 * each measured on [lo, 1] (lo: the smallest local value of either, so both axes share one
 * scale). Kept neighbourhoods are near white; low t (false neighbours: the projection brings in
 * points that were far) turns orange; low c (missing neighbours: the projection tears a
 * neighbourhood apart) turns purple; both turn dark.
 */
export const CHECKVIZ_CORNERS = {
  kept: [247, 247, 247],
  falseNeighbours: [230, 97, 1],
  missingNeighbours: [94, 60, 153],
  both: [30, 30, 30],
};

/** The low end shared by both axes of the CheckViz scale: the smallest finite t or c (0 when none is below 1). */
export function checkvizLow(ts, cs) {
  let lo = 1;
  for (const a of [ts, cs]) for (const v of a) if (Number.isFinite(v) && v < lo) lo = v;
  return lo < 1 ? lo : 0;
}

/** The CheckViz colour of local trustworthiness t and continuity c on the scale [lo, 1]; null when either is missing. */
export function checkvizColour(t, c, lo) {
  if (!Number.isFinite(t) || !Number.isFinite(c)) return null;
  const span = 1 - lo;
  const u = Math.min(1, Math.max(0, (1 - t) / span));
  const v = Math.min(1, Math.max(0, (1 - c) / span));
  const k = CHECKVIZ_CORNERS;
  const out = [0, 0, 0];
  for (let ch = 0; ch < 3; ch++) {
    const x = k.kept[ch] * (1 - u) * (1 - v) + k.falseNeighbours[ch] * u * (1 - v) + k.missingNeighbours[ch] * (1 - u) * v + k.both[ch] * u * v;
    out[ch] = Math.floor(x + 0.5);
  }
  return out;
}

/** Stops of the reliability map's rank scale: light (a neighbour just past k) to dark red (torn far apart). */
export const RANK_STOPS = [
  [253, 212, 158],
  [252, 141, 89],
  [215, 48, 31],
  [127, 0, 0],
];

/** The colour of an original neighbour's projection rank r (kept when r <= k): t = log(r/k) / log((n−1)/k). */
export function rankT(r, k, n) {
  if (r <= k) return -1;
  return Math.min(1, Math.log(r / k) / Math.log(Math.max(n - 1, k + 1) / k));
}

/** The reliability scale at t in [0, 1] (piecewise linear over RANK_STOPS). */
export function rankColour(t) {
  const s = Math.min(1, Math.max(0, t)) * (RANK_STOPS.length - 1);
  const i = Math.min(RANK_STOPS.length - 2, Math.floor(s));
  const f = s - i;
  return RANK_STOPS[i].map((a, ch) => Math.floor(a + (RANK_STOPS[i + 1][ch] - a) * f + 0.5));
}

/** A kept edge (both ends within each other's k neighbours in the projection too). */
export const KEPT = [176, 184, 201];

/** The lens's marks: the chosen point, kept, missing and false neighbours. */
export const LENS = { point: '#111111', kept: '#1a9850', missing: '#5e3c99', false: '#e66101', other: '#c9ced9' };

/**
 * Heatmaps (Shepard, co-ranking): viridis of log(v / lo) / log(hi / lo) for v in [lo, hi]
 * (lo: the smallest positive value, one pair for counts); empty bins (v = 0) are white (null).
 */
export function heatColour(v, lo, hi) {
  if (!(v > 0)) return null;
  const t = hi > lo ? Math.log(v / lo) / Math.log(hi / lo) : 1;
  return viridis(Math.min(1, Math.max(0, t)));
}

export const rgb = (c) => `rgb(${c[0]},${c[1]},${c[2]})`;
