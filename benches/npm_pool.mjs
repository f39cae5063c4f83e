// The live receipt of faithful-dr's worker pool, in Node (the wasm CPU, worker_threads): T&C at
// k = 20 on a changing projection, as fast as a Session scores it, on 1 worker (the calling
// thread, `workers: 1`) and on W workers. Prints the receipt JSON (docs/bench/npm_pool_*.json).
//
//   node benches/npm_pool.mjs PACKAGE_DIR [--sizes 5000,20000] [--workers 1,2] [--evals 20]
//        [--projections noisy,pca] [--resident-ranks always] [--warmup 5]
//
// Data: blobs in 50 dimensions (benches/npm_session_data.mjs). Projections, a new one every
// call: "noisy" (the first two coordinates plus uniform noise of width 4, as in
// npm_session.mjs: almost no original neighbour survives, so nearly every rank is counted) and
// "pca" (the two principal axes plus jitter of 1 % of their spread: neighbourhoods kept, as an
// optimiser near convergence moves points a little). The first two calls of a session (the
// original space's kNN, then its rank table) are outside the loop.
import os from 'node:os';
import { nodePackage, opt } from './npm_session_args.mjs';
import { blobs, median, projection, rng } from './npm_session_data.mjs';

const sizes = opt('sizes', '5000,20000').split(',').map(Number);
const workerCounts = opt('workers', '1,2').split(',').map(Number);
const evals = Number(opt('evals', '20'));
const kinds = opt('projections', 'noisy,pca').split(',');
const residentRanks = opt('resident-ranks', 'always');
// Untimed calls after the first two, so that the timed loop sees V8's optimised wasm code (it
// compiles a module with its baseline compiler first and tiers hot functions up while they
// run) and steady-state buffers, as a live view does after its first second.
const warmup = Number(opt('warmup', '5'));
const SPEC = ['tnc:k=20'];

const pkg = await nodePackage();

/** The two principal axes of `high` (power iteration on the covariance, deflated once). */
function principalAxes(high) {
  const { data, rows: n, cols: d } = high;
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let c = 0; c < d; c++) mean[c] += data[i * d + c] / n;
  const cov = new Float64Array(d * d);
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < d; a++) {
      const xa = data[i * d + a] - mean[a];
      for (let b = 0; b < d; b++) cov[a * d + b] += (xa * (data[i * d + b] - mean[b])) / n;
    }
  }
  const axes = [];
  for (let t = 0; t < 2; t++) {
    let v = new Float64Array(d).fill(1);
    for (let it = 0; it < 200; it++) {
      const w = new Float64Array(d);
      for (let a = 0; a < d; a++) for (let b = 0; b < d; b++) w[a] += cov[a * d + b] * v[b];
      for (const u of axes) {
        const dot = w.reduce((s, x, c) => s + x * u[c], 0);
        for (let c = 0; c < d; c++) w[c] -= dot * u[c];
      }
      const norm = Math.hypot(...w);
      v = w.map((x) => x / norm);
    }
    axes.push(v);
  }
  return { mean, axes };
}

function pcaProjection(high, pca, seed) {
  const { data, rows: n, cols: d } = high;
  const r = rng(seed);
  const out = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < 2; t++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += (data[i * d + c] - pca.mean[c]) * pca.axes[t][c];
      out[i * 2 + t] = s;
    }
  }
  let lo = Infinity, hi = -Infinity;
  for (const x of out) (lo = Math.min(lo, x)), (hi = Math.max(hi, x));
  const jitter = 0.01 * (hi - lo);
  for (let i = 0; i < out.length; i++) out[i] += (r() - 0.5) * jitter;
  return { data: out, rows: n, cols: 2 };
}

const runs = [];
for (const n of sizes) {
  const high = blobs(n, 50, 7);
  const pca = kinds.includes('pca') ? principalAxes(high) : null;
  const make = (kind, seed) => (kind === 'pca' ? pcaProjection(high, pca, seed) : projection(high, seed));
  for (const kind of kinds) {
    for (const workers of workerCounts) {
      const t0 = performance.now();
      const s = await pkg.Session.create({ high, backend: 'cpu', workers, residentRanks });
      const createS = (performance.now() - t0) / 1000;
      const setup = [];
      for (let e = 0; e < 2; e++) {
        const t = performance.now();
        await s.measure({ low: make(kind, 1000 + e), specs: SPEC });
        setup.push((performance.now() - t) / 1000);
      }
      for (let e = 0; e < warmup; e++) await s.measure({ low: make(kind, 1500 + e), specs: SPEC });
      const lows = Array.from({ length: evals }, (_, e) => make(kind, 2000 + e));
      const calls = [];
      let last;
      const cpu0 = process.cpuUsage();
      const t1 = performance.now();
      for (const low of lows) {
        const t = performance.now();
        last = await s.measure({ low, specs: SPEC });
        calls.push((performance.now() - t) / 1000);
      }
      const seconds = (performance.now() - t1) / 1000;
      const cpu = process.cpuUsage(cpu0);
      s.free();
      const row = {
        n, projection: kind, workers_asked: workers, workers: last.run.workers,
        evaluations: evals, evaluations_per_s: evals / seconds, median_call_s: median(calls),
        // The process's CPU time over the loop, its worker threads included: the work an
        // evaluation costs whatever share of the cores the machine's load leaves to it.
        cpu_s_per_evaluation: (cpu.user + cpu.system) / 1e6 / evals,
        create_s: createS, first_two_calls_s: setup,
        trustworthiness_last: last.projections[0].scores[0].values.trustworthiness,
        work: last.run.work, pool: last.run.pool ?? null,
      };
      runs.push(row);
      console.error(`n=${n} ${kind} workers=${workers}: ${row.evaluations_per_s.toFixed(2)} evaluations/s (median call ${row.median_call_s.toFixed(3)} s)`);
    }
  }
}

console.log(JSON.stringify({
  what: 'faithful-dr Session.measure on a changing projection, T&C k=20, exact, 1 worker vs a worker pool',
  package_version: pkg.version(),
  runtime: `node ${process.version} (V8 wasm; the pool on worker_threads)`,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  load_average_1m_at_end: os.loadavg()[0],
  resident_ranks: residentRanks,
  warmup_calls: warmup,
  timing: 'performance.now() around each call of the loop; data generated before the loop; cpu_s_per_evaluation from process.cpuUsage() (worker threads included)',
  runs,
}, null, 2));
process.exit(0);
