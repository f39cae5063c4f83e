// Benchmark of the npm package's resident Session against a cold evaluate(), in Node (the wasm
// CPU reference, one thread). Prints the receipt JSON (docs/bench/npm_session_wasm_cpu_*.json);
// benches/npm_session_browser.mjs does the same in headless Chromium (SwiftShader, wasm CPU).
//
//   node benches/npm_session.mjs PACKAGE_DIR [--sizes 2000,5000] [--live-n 5000] [--live-evals 20]
//
// PACKAGE_DIR: an unpacked faithful-dr (e.g. `tar xzf faithful-dr-*.tgz`, its package/ folder).
// Data and spec: benches/npm_session_data.mjs (T&C at k = 20, exact, a new projection every
// call). Cold = evaluate() with nothing resident (it builds the original space's kNN); warm =
// Session.measure after the first.
import os from 'node:os';
import { nodePackage, opt } from './npm_session_args.mjs';
import { SPEC, blobs, median, projection, time } from './npm_session_data.mjs';

const sizes = opt('sizes', '2000,5000').split(',').map(Number);
const liveN = Number(opt('live-n', '5000'));
const liveEvals = Number(opt('live-evals', '20'));
const REPEAT = 5;

const pkg = await nodePackage();

const rows = [];
for (const n of sizes) {
  const high = blobs(n, 50, n);
  const cold = [];
  for (let i = 0; i < REPEAT; i++) {
    cold.push(await time(() => pkg.evaluate({ high, lows: [projection(high, 100 + i)], specs: SPEC, backend: 'cpu' })));
  }
  const s = await pkg.Session.create({ high, backend: 'cpu' });
  const first = await time(() => s.measure({ low: projection(high, 1), specs: SPEC }));
  const warm = [];
  let reused = true;
  for (let i = 0; i < REPEAT; i++) {
    let r;
    warm.push(await time(async () => (r = await s.measure({ low: projection(high, 200 + i), specs: SPEC }))));
    reused &&= r.run.plan.knn_high_reused;
  }
  s.free();
  rows.push({ n, dim: 50, spec: SPEC[0], backend: 'wasm-cpu', cold_evaluate_s: median(cold), session_first_s: first, session_warm_s: median(warm), knn_high_reused: reused, speedup: median(cold) / median(warm) });
}

// The live loop: a changing projection scored as fast as the session allows. The session's
// first measure counts the original space's ranks over recomputed rows, the second builds the
// resident rank table (resident_ranks = auto); the loop times the calls after those.
const high = blobs(liveN, 50, 7);
const s = await pkg.Session.create({ high, backend: 'cpu' });
const sourceOf = (r) => r.run.plan.high_ranks && `${r.run.plan.high_ranks.source}${r.run.plan.high_ranks.built_now ? ' (built now)' : ''}`;
let r0, r1;
const liveFirstS = await time(async () => (r0 = await s.measure({ low: projection(high, 0), specs: SPEC })));
const liveBuildS = await time(async () => (r1 = await s.measure({ low: projection(high, 1), specs: SPEC })));
const phases = { resources_s: [], measures_s: [], total_s: [], call_s: [] };
const sources = new Set();
let lastRun;
const t0 = performance.now();
for (let e = 2; e < 2 + liveEvals; e++) {
  const t = performance.now();
  const r = await s.measure({ low: projection(high, e), specs: SPEC });
  phases.call_s.push((performance.now() - t) / 1000);
  for (const k of ['resources_s', 'measures_s', 'total_s']) phases[k].push(r.run.timings[k]);
  sources.add(sourceOf(r));
  lastRun = r.run;
}
const liveS = (performance.now() - t0) / 1000;
s.free();

console.log(JSON.stringify({
  what: 'faithful-dr Session.measure (warm) vs evaluate (cold), T&C k=20, exact',
  package_version: pkg.version(),
  runtime: `node ${process.version} (V8 wasm, one thread)`,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  load_average_1m_at_end: os.loadavg()[0],
  timing: 'performance.now() around each call; median of 5; data generated outside the clock',
  rows,
  live: {
    n: liveN,
    evaluations: liveEvals,
    seconds: liveS,
    evaluations_per_s: liveEvals / liveS,
    target_per_s: 5,
    first_call: { seconds: liveFirstS, high_ranks: sourceOf(r0) },
    table_build_call: { seconds: liveBuildS, high_ranks: sourceOf(r1), table_bytes: r1.run.plan.high_ranks?.table_bytes },
    loop_high_ranks: [...sources],
    // Medians over the loop: the library's own phases (resources: the row pass; measures: the
    // scores) and the whole call as the page sees it (with the conversions to and from JS).
    median_phases_s: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, median(v)])),
    work: lastRun?.work,
  },
}, null, 2));
