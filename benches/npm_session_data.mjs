// The data of the faithful-dr Session benchmarks (benches/npm_session.mjs in Node,
// benches/npm_session_browser.mjs in the page): one module, so both score the same bits.
// Data: blobs in 50 dimensions; projections: the first two coordinates plus uniform noise of
// width 4, a new one every call (as an optimiser moves points). Spec: T&C at k = 20.
export const SPEC = ['tnc:k=20'];

/** splitmix64 in [0, 1): the same sequence in Node and in every browser. */
export function rng(seed) {
  let s = BigInt(seed);
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53;
  };
}

export function blobs(n, d, seed) {
  const r = rng(seed);
  const centres = Array.from({ length: 10 }, () => Array.from({ length: d }, () => r() * 20));
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) data[i * d + j] = centres[i % 10][j] + r() - 0.5;
  return { data, rows: n, cols: d };
}

export function projection(high, seed) {
  const r = rng(seed);
  const n = high.rows;
  const data = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) for (let j = 0; j < 2; j++) data[i * 2 + j] = high.data[i * high.cols + j] + r() * 4;
  return { data, rows: n, cols: 2 };
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Seconds that `f` took (performance.now(): Node and the page). */
export async function time(f) {
  const t0 = performance.now();
  await f();
  return (performance.now() - t0) / 1000;
}
