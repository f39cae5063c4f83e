// faithful-dr against SickleJS (@saehrimnir/sickle) in the same Node, on SickleJS's own benchmark
// shape (its bench/bench.ts and bench/parallel.ts): the co-ranking pass with per-point values at
// k ∈ {10, 25}, the AUC of log R_NX and the full trustworthiness curve, N = 2000, 4000, 8000,
// D = 50, single-threaded and with W workers on both sides. The data are integer-valued (so the
// squared distances SickleJS ranks on and the distances faithful ranks on are exact and order
// alike: both libraries break ties by index), and every shared score is compared.
//
//   node benches/sickle_compare.mjs --sickle SICKLE_DIR --faithful PACKAGE_DIR
//        [--sizes 2000,4000,8000] [--dim 50] [--workers 2] [--repeat 3]
//
// SICKLE_DIR: a built checkout of github.com/saehm/SickleJS (dist/sickle.js); PACKAGE_DIR: an
// unpacked faithful-dr. benches/sickle_compare.sh builds both and runs this. Prints the receipt
// JSON (docs/bench/sickle_*.json).
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? dflt : args[i + 1];
};
const sickleDir = path.resolve(opt('sickle', '.'));
const faithfulDir = path.resolve(opt('faithful', '.'));
const sizes = opt('sizes', '2000,4000,8000').split(',').map(Number);
const dim = Number(opt('dim', '50'));
const workers = Number(opt('workers', '2'));
const repeat = Number(opt('repeat', '3'));
const LOCAL_K = [10, 25];

const sickle = await import(pathToFileURL(path.join(sickleDir, 'dist', 'sickle.js')).href);
const faithful = await import(pathToFileURL(path.join(faithfulDir, 'node.js')).href);
await faithful.default();
const sickleVersion = JSON.parse(readFileSync(path.join(sickleDir, 'package.json'), 'utf8')).version;

/** splitmix64 in [0, 1). */
function rng(seed) {
  let s = BigInt(seed);
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53;
  };
}

/** n × d integers in [0, levels). */
function integers(n, d, levels, seed) {
  const r = rng(seed);
  const data = new Float64Array(n * d);
  for (let i = 0; i < n * d; i++) data[i] = Math.floor(r() * levels);
  return data;
}

/** Best wall time of `repeat` runs, the CPU time (worker threads included) of that run, and its result. */
async function best(f) {
  let t = Infinity;
  let cpuS = Infinity;
  let out;
  for (let i = 0; i < repeat; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    out = await f();
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    if (wall < t) [t, cpuS] = [wall, (c.user + c.system) / 1e6];
  }
  return [t, out, cpuS];
}

const SPECS = ['coranking', ...LOCAL_K.flatMap((k) => [`tnc:k=${k}`, `mrre:k=${k}`])];

/** SickleJS: the pass and the read-outs its benchmark times (plus the locals read for comparison). */
async function runSickle(hd, ld, w) {
  const cr = w > 1
    ? await sickle.coRankingAsync(hd, ld, { localK: LOCAL_K, workers: w, parallelThreshold: 1 })
    : sickle.coRanking(hd, ld, { localK: LOCAL_K });
  return { cr, auc: sickle.aucLogRnx(cr), tcurve: sickle.trustworthinessCurve(cr) };
}

/** faithful: one evaluate() with the same outputs (coranking's curves and AUC, T, C and MRRE with per-point values at each k). */
function runFaithful(high, low, w) {
  return faithful.evaluate({ high, lows: [low], specs: SPECS, local: true, backend: 'cpu', workers: w });
}

/** The largest |Δ| between two sequences over their shared indices. */
function maxDelta(a, b) {
  let m = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function compare(n, s, f) {
  const score = (id, k) => f.projections[0].scores.find((x) => x.id === id && (k === undefined || x.params.k === k));
  const co = score('coranking');
  const { cr } = s;
  // Curves: faithful index K − 1, SickleJS index K; over the Ks both define.
  const curve = (key, fn, kmax) => {
    const ours = co.curves[key];
    const theirs = Array.from({ length: Math.min(ours.length, kmax) }, (_, t) => fn(cr, t + 1));
    return maxDelta(ours, theirs);
  };
  const d = {
    auc_log_rnx: Math.abs(co.values.auc_rnx - s.auc),
    trustworthiness_curve: maxDelta(co.curves.trustworthiness, Array.from(s.tcurve.values).slice(1)),
    continuity_curve: curve('continuity', sickle.continuity, Math.floor(n / 2)),
    qnx_curve: curve('qnx', sickle.qnx, n - 2),
    rnx_curve: curve('rnx', sickle.rnx, n - 2),
    lcmc_curve: curve('lcmc', sickle.lcmc, n - 2),
    mrre_false_curve: curve('mrre_false', sickle.mrreFalse, n - 2),
    mrre_missing_curve: curve('mrre_missing', sickle.mrreMissing, n - 2),
  };
  for (const k of LOCAL_K) {
    const t = score('tnc', k);
    const m = score('mrre', k);
    d[`trustworthiness@${k}`] = Math.abs(t.values.trustworthiness - sickle.trustworthiness(cr, k));
    d[`continuity@${k}`] = Math.abs(t.values.continuity - sickle.continuity(cr, k));
    d[`local_trustworthiness@${k}`] = maxDelta(t.local.local_trustworthiness, sickle.localTrustworthiness(cr, k));
    d[`local_continuity@${k}`] = maxDelta(t.local.local_continuity, sickle.localContinuity(cr, k));
    d[`local_mrre_false@${k}`] = maxDelta(m.local.local_mrre_false, sickle.localMrreFalse(cr, k));
    d[`local_mrre_missing@${k}`] = maxDelta(m.local.local_mrre_missing, sickle.localMrreMissing(cr, k));
  }
  return d;
}

const rows = [];
for (const n of sizes) {
  const hd = { data: integers(n, dim, 8, n), n, d: dim };
  const ld = { data: integers(n, 2, 100, n + 1), n, d: 2 };
  const high = { data: hd.data, rows: n, cols: dim };
  const low = { data: ld.data, rows: n, cols: 2, name: 'ld' };
  for (const w of [1, workers]) {
    const [sickleS, s, sickleCpu] = await best(() => runSickle(hd, ld, w));
    const [faithfulS, f, faithfulCpu] = await best(() => runFaithful(high, low, w));
    const deltas = compare(n, s, f);
    const worst = Math.max(...Object.values(deltas));
    rows.push({
      n, dim, workers: w, sickle_s: sickleS, faithful_s: faithfulS, ratio: sickleS / faithfulS,
      sickle_cpu_s: sickleCpu, faithful_cpu_s: faithfulCpu, cpu_ratio: sickleCpu / faithfulCpu,
      faithful_workers: f.run.workers, max_abs_delta: worst, within_1e12: worst <= 1e-12, deltas,
    });
    console.error(`n=${n} workers=${w}: SickleJS ${sickleS.toFixed(3)} s, faithful ${faithfulS.toFixed(3)} s (${(sickleS / faithfulS).toFixed(2)}×), max |Δ| ${worst.toExponential(2)}`);
  }
}

console.log(JSON.stringify({
  what: 'faithful-dr vs SickleJS: co-ranking with per-point values at k = 10, 25, AUC of log R_NX, full T curve; integer-valued data',
  sickle_version: sickleVersion,
  faithful_version: faithful.version(),
  faithful_specs: SPECS,
  runtime: `node ${process.version}`,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  load_average_1m_at_end: os.loadavg()[0],
  timing: `best of ${repeat} per side (wall; *_cpu_s: process.cpuUsage() of that run, worker threads included), data generated outside the clock; SickleJS: coRanking (or coRankingAsync with workers) + aucLogRnx + trustworthinessCurve; faithful: one evaluate() (workers: W for the pool)`,
  data: `high: ${dim} integer columns in [0, 8); low: 2 integer columns in [0, 100)`,
  rows,
}, null, 2));
process.exit(0);
