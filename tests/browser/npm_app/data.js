// Tie-heavy data for the worker-pool checks (tests/browser/npm.test.mjs): small integers, so
// exact ties everywhere, generated the same way in the page, in Node and for the native CLI
// (whose CSV holds the same integers exactly).
export function tieHeavy(n, seed = 1) {
  let s = seed >>> 0;
  const next = (m) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 16) % m;
  };
  const high = { rows: n, cols: 6, data: Float64Array.from({ length: n * 6 }, () => next(3)), name: 'high' };
  const low = { rows: n, cols: 2, data: Float64Array.from({ length: n * 2 }, () => next(4)), name: 'low' };
  const labels = Int32Array.from({ length: n }, (_, i) => i % 3);
  return { high, low, labels };
}

/** The specs the pool checks score: every foldable kind, and one that runs on worker 0. */
export const POOL_SPECS = ['tnc:k=10', 'mrre:k=10', 'lcmc:k=10', 'nh:k=10', 'ca_tnc:k=10', 'coranking:k_max=40', 'stress'];
