// End-to-end test of the npm package faithful-dr (run by scripts/test_npm.sh, which packs it with
// scripts/npm_pack.sh and builds the native CLI):
//
//   FAITHFUL_NPM_TARBALL  the packed faithful-dr-<version>.tgz
//   FAITHFUL_CLI          the native CLI (target/release/faithful)
//   CHROMIUM              the browser (default /usr/bin/chromium, flags.mjs); CI=true turns a missing
//                         WebGPU adapter into a failure instead of a skip.
//
// The tarball is installed into a throw-away app in a temp folder (plain ES modules, an import
// map, no copy step; and the same app built by Vite), served on a loopback port and driven in headless Chromium on WebGPU
// (SwiftShader) and on the wasm CPU: a Session's first and second measure (a different
// projection each) equal `faithful measure --local --json` bit for bit, neighbours equal
// `faithful knn`, an aborted measure rejects with an AbortError and leaves the session usable;
// the worker client does the same and survives a trap; Node runs the CPU entry. The worker pool
// (Session.create({ workers: N })): N = 1, 2, 3, 4, 7 give byte-identical results to one worker
// and to the native CLI, on the bundled example and on tie-heavy data, in Chromium (wasm CPU,
// shared memory and not; SwiftShader WebGPU) and in Node (worker_threads); a worker killed or
// trapped mid-call rejects the call with a WorkerCrashedError and the next call succeeds.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './flags.mjs';
import { POOL_SPECS, tieHeavy } from './npm_app/data.js';
import { serveStatic } from './static_server.mjs';

const TARBALL = process.env.FAITHFUL_NPM_TARBALL;
const CLI = process.env.FAITHFUL_CLI;
const CI = ['true', '1'].includes(String(process.env.CI).toLowerCase());
const HERE = path.dirname(fileURLToPath(import.meta.url));

let app; // the throw-away app folder
let server;
let base;
let browser;
let native; // the CLI's result on the bundled example

const cli = (args) => JSON.parse(execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 1 << 28 }));

/** Typed arrays came back as {typed, values}: checks the type and returns the plain values. */
function untyped(v, where, wanted) {
  if (Array.isArray(v)) return v.map((x, i) => untyped(x, `${where}[${i}]`, wanted));
  if (v && typeof v === 'object') {
    if ('typed' in v && 'values' in v) {
      if (wanted) assert.equal(v.typed, wanted, `${where}: ${v.typed}, not ${wanted}`);
      return v.values;
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, untyped(x, `${where}.${k}`, wanted)]));
  }
  return v;
}

/** Every score, parameter and local value equal to the CLI's (deepStrictEqual: Object.is on numbers). */
function sameProjection(got, want, label) {
  const locals = got.scores.filter((s) => s.local).length;
  assert.ok(locals >= 3, `${label}: only ${locals} measures returned local values`);
  assert.deepStrictEqual(untyped(got, label, 'Float64Array'), want, `${label}: differs from faithful measure --local --json`);
}

before(async () => {
  assert.ok(TARBALL && CLI, 'FAITHFUL_NPM_TARBALL and FAITHFUL_CLI must be set (run scripts/test_npm.sh)');
  native = cli(['measure', '--local', '--json', '--backend', 'cpu']);
  app = mkdtempSync(path.join(os.tmpdir(), 'faithful-npm-app-'));
  cpSync(path.join(HERE, 'npm_app'), app, { recursive: true });
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'throwaway-app', private: true, type: 'module', dependencies: { 'faithful-dr': `file:${TARBALL}` } }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
  // The same app built by Vite (no copy step, no plugin): dist/ beside the plain one.
  writeFileSync(path.join(app, 'vite.config.mjs'), "export default { base: './', logLevel: 'warn', worker: { format: 'es' }, build: { outDir: 'dist', target: 'esnext' } };\n");
  execFileSync('node', [path.join(HERE, 'node_modules', 'vite', 'bin', 'vite.js'), 'build'], { cwd: app, stdio: 'inherit' });
  server = await serveStatic(app);
  base = server.base;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.close();
  if (app) rmSync(app, { recursive: true, force: true });
});

async function page(at = 'index.html') {
  const p = await browser.newPage();
  const log = [];
  p.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
  p.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
  await p.goto(`${base}/${at}`);
  try {
    await p.waitForFunction(() => document.body.dataset.status === 'ready', null, { timeout: 120_000 });
  } catch (e) {
    throw new Error(`the app did not load the package: ${e.message}\n${log.join('\n')}`);
  }
  return { p, log };
}

async function hasWebGpu(t) {
  const { p } = await page();
  const ok = await p.evaluate(async () => !!(navigator.gpu && (await navigator.gpu.requestAdapter())));
  await p.close();
  if (!ok) {
    const msg = 'headless Chromium has no WebGPU adapter';
    if (CI) assert.fail(`${msg}; under CI=true this is a failure`);
    console.warn(`# SKIP (loud): ${msg}`);
    t.skip(msg);
  }
  return ok;
}

test('the package: ES module, exports, the crate version, types without any', () => {
  const dir = path.join(app, 'node_modules', 'faithful-dr');
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'faithful-dr');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.version, native.run.faithful_version);
  assert.deepEqual(Object.keys(pkg.exports), ['.', './worker', './faithful_bg.wasm', './package.json']);
  assert.equal(pkg.exports['.'].types, './index.d.ts');
  assert.equal(pkg.exports['.'].import, './index.js');
  const dts = ['index.d.ts', 'faithful.d.ts', 'worker.d.ts'].map((f) => readFileSync(path.join(dir, f), 'utf8')).join('\n');
  assert.doesNotMatch(dts, /\bany\b/, 'the types say `any` somewhere');
  assert.match(dts, /static create\(options: SessionOptions\): Promise<Session>/);
  assert.match(dts, /workers\?: Workers/);
  assert.match(dts, /export declare class WorkerCrashedError/);
  assert.match(dts, /measure\(request: MeasureRequest\): Promise<Evaluation>/);
  assert.match(dts, /neighbours\(request: NeighboursRequest\): Promise<Neighbours>/);
  assert.match(dts, /export type Neighbours = Int32Array & \{ numerics: "exact" \| "fast"/);
  assert.match(dts, /export function evaluate\(request: EvaluateRequest\): Promise<Evaluation>/);
  assert.match(readFileSync(path.join(dir, 'faithful.js'), 'utf8'), /new URL\('faithful_bg\.wasm', import\.meta\.url\)/);
});

for (const backend of ['webgpu', 'cpu']) {
  test(`${backend}: Session measure ×2, neighbours and abort equal the native CLI`, async (t) => {
    if (backend === 'webgpu' && !(await hasWebGpu(t))) return;
    const { p, log } = await page();
    let r;
    try {
      r = await p.evaluate((b) => window.checks(b), backend);
    } catch (e) {
      throw new Error(`${e.message}\n${log.join('\n')}`);
    }
    await p.close();
    const served = backend === 'webgpu' ? 'gpu' : 'cpu';
    assert.equal(r.info.backend, served, `served by ${r.info.backend}: ${r.info.fallbackReason}`);
    for (const [name, res] of [['first', r.first], ['second', r.second], ['third', r.third]]) {
      assert.equal(res.run.backend, served, `${name}: ${res.run.fallback_reason}`);
      assert.equal(res.run.fallback_reason, null);
      assert.equal(res.run.backend_requested, backend);
    }
    sameProjection(r.first.projections[0], native.projections[0], `${backend} first measure (pca)`);
    sameProjection(r.second.projections[0], native.projections[1], `${backend} second measure (random_projection)`);
    sameProjection(r.third.projections[0], native.projections[0], `${backend} measure after the abort (pca)`);
    // The resident session built the original space's kNN once.
    assert.equal(r.first.run.plan.knn_high_reused, false);
    assert.equal(r.second.run.plan.knn_high_reused, true);
    assert.equal(r.aborted?.name, 'AbortError', `the aborted measure: ${JSON.stringify(r.aborted)}`);
    // One-shot evaluate returns the same object.
    r.once.projections.forEach((proj, i) => sameProjection(proj, native.projections[i], `${backend} evaluate ${proj.name}`));
    assert.ok(r.measureIds.includes('tnc'));
    assert.equal(r.version, native.run.faithful_version);

    // neighbours equals `faithful knn` on the same points (written as CSV: shortest round-trip numbers).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'faithful-npm-knn-'));
    try {
      for (const [space, m, got] of [['high', r.high, r.knnHigh], ['low', r.pca, r.knnLow]]) {
        const values = untyped(m.data);
        const rows = Array.from({ length: m.rows }, (_, i) => values.slice(i * m.cols, (i + 1) * m.cols).join(','));
        const file = path.join(dir, `${space}.csv`);
        writeFileSync(file, rows.join('\n') + '\n');
        const want = cli(['knn', '--data', file, '--k', '10', '--json', '--backend', 'cpu']).indices.flat();
        assert.equal(got.typed, 'Int32Array');
        assert.equal(got.values.length, m.rows * 10);
        assert.deepStrictEqual(got.values, want, `${backend}: neighbours of ${space} differ from faithful knn`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    console.log(`# ${backend}: two measures, the abort, evaluate and both neighbour graphs equal the native CLI`);
  });
}

/** n points of an integer lattice in 4 dimensions with 1e-9 jitter (ties at f32 resolution), or uniform. */
function numericsData(kind, n, seed) {
  let state = seed;
  const rand = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const matrix = (d, f) => ({ rows: n, cols: d, data: Array.from({ length: n * d }, (_, t) => f(Math.floor(t / d), t % d)) });
  if (kind === 'inside') return { name: kind, high: matrix(6, () => rand()), low: matrix(2, () => rand()) };
  return {
    name: kind,
    high: matrix(4, (i, c) => ((i >> (2 * c)) & 3) + 1e-9 * (rand() - 0.5)),
    low: matrix(2, (i, c) => ((i * (c + 1)) % 5) + 1e-9 * (rand() - 0.5)),
  };
}

for (const backend of ['webgpu', 'cpu']) {
  test(`${backend}: Fast then Exact on one Session: whatever is labelled exact equals the native CPU reference`, async (t) => {
    if (backend === 'webgpu' && !(await hasWebGpu(t))) return;
    const sets = [numericsData('inside', 300, 7), numericsData('lattice_jitter_1e-9', 300, 3)];
    const specs = ['tnc:k=10', 'mrre:k=10', 'lcmc:k=10'];
    const { p, log } = await page();
    let got;
    try {
      got = await p.evaluate(({ b, s, sp }) => window.numericsChecks(b, s, sp), { b: backend, s: sets, sp: specs });
    } catch (e) {
      throw new Error(`${e.message}\n${log.join('\n')}`);
    }
    await p.close();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'faithful-npm-numerics-'));
    try {
      for (const [i, d] of sets.entries()) {
        const r = got[i];
        const csv = (m, name) => {
          const file = path.join(dir, `${d.name}-${name}.csv`);
          writeFileSync(file, Array.from({ length: m.rows }, (_, j) => m.data.slice(j * m.cols, (j + 1) * m.cols).join(',')).join('\n') + '\n');
          return file;
        };
        const [high, low] = [csv(d.high, 'high'), csv(d.low, 'low')];
        const want = cli(['measure', '--json', '--backend', 'cpu', '--high', high, '--low', low, ...specs.flatMap((s) => ['--spec', s])]);
        const wantKnn = cli(['knn', '--data', high, '--k', '10', '--json', '--backend', 'cpu']).indices.flat();
        const values = (e) => e.projections[0].scores.map((s) => [s.id, s.values]);
        for (const [label, e] of [['fast', r.fast], ['exact', r.exact]]) {
          const fastOutputs = e.run.served.filter((s) => s.numerics === 'fast').map((s) => s.output);
          assert.equal(e.run.numerics === 'fast', fastOutputs.length > 0, `${d.name} ${label}: run and outputs disagree`);
          if (e.run.numerics === 'exact') assert.deepStrictEqual(values(e), values(want), `${d.name} ${label} measure: labelled exact, differs from the CPU reference`);
        }
        assert.equal(r.exact.run.numerics, 'exact', `${d.name}: the Exact call reused a Fast list`);
        for (const [label, k] of [['fast', r.fastKnn], ['exact', r.exactKnn]]) {
          assert.ok(k.isInt32, `${label}: not an Int32Array`);
          assert.equal(k.numerics, k.runNumerics);
          if (k.numerics === 'exact') assert.deepStrictEqual(k.values, wantKnn, `${d.name} ${label} neighbours: labelled exact, differ from faithful knn`);
        }
        assert.equal(r.exactKnn.numerics, 'exact');
        if (backend === 'cpu') assert.equal(r.fastKnn.numerics, 'exact', 'the wasm CPU is always exact');
        t.diagnostic(`${backend} ${d.name}: fast kNN ${r.fastKnn.numerics} (${r.fastKnn.backend}), fast measure ${r.fast.run.numerics}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('the worker client: measure, abort, neighbours, and a trap restarts the worker', async (t) => {
  // The wasm CPU: the client's logic does not depend on the backend, and SwiftShader is slow.
  const backend = 'cpu';
  const { p, log } = await page();
  let r;
  try {
    r = await p.evaluate((b) => window.workerChecks(b), backend);
  } catch (e) {
    throw new Error(`${e.message}\n${log.join('\n')}`);
  }
  await p.close();
  sameProjection(r.first.projections[0], native.projections[0], `worker (${backend}) first measure`);
  sameProjection(r.second.projections[0], native.projections[1], `worker (${backend}) second measure`);
  sameProjection(r.afterCrash.projections[0], native.projections[0], `worker (${backend}) measure after the restart`);
  assert.equal(r.aborted?.name, 'AbortError', JSON.stringify(r.aborted));
  assert.equal(r.crash?.name, 'WorkerCrashedError', JSON.stringify(r.crash));
  // A real trap: the test build's testTrap() executes `unreachable` in the wasm.
  assert.match(r.crash.message, /the wasm module trapped: .*unreachable/, JSON.stringify(r.crash));
  assert.equal(r.knnHigh.typed, 'Int32Array');
  assert.ok(r.knnIsInt32 && r.localIsF64, 'results lost their typed arrays on the way back');
  t.diagnostic(`worker client on ${backend}`);
});

test('Vite: the bundled app (wasm asset and worker emitted by Vite) equals the native CLI', async () => {
  const { p, log } = await page('dist/index.html');
  let r;
  let w;
  try {
    r = await p.evaluate(() => window.checks('cpu'));
    w = await p.evaluate(() => window.workerChecks('cpu'));
  } catch (e) {
    throw new Error(`${e.message}\n${log.join('\n')}`);
  }
  await p.close();
  assert.ok(!log.some((l) => l.includes('node_modules')), `the built app still loads from node_modules:\n${log.join('\n')}`);
  sameProjection(r.first.projections[0], native.projections[0], 'vite first measure');
  sameProjection(r.second.projections[0], native.projections[1], 'vite second measure');
  assert.equal(r.aborted?.name, 'AbortError');
  sameProjection(w.first.projections[0], native.projections[0], 'vite worker measure');
  assert.equal(w.crash?.name, 'WorkerCrashedError');
});

/** The native CLI's result on the tie-heavy data of npm_app/data.js (written as CSV: exact integers). */
function nativeTies(n) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'faithful-npm-ties-'));
  try {
    const csv = (m) => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)).join(',')).join('\n') + '\n';
    const t = tieHeavy(n);
    const u = tieHeavy(n, 7);
    const file = (name, text) => {
      writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const args = ['measure', '--local', '--json', '--backend', 'cpu', '--high', file('high.csv', csv(t.high)), '--labels', file('labels.csv', Array.from(t.labels).join('\n') + '\n')];
    for (const spec of POOL_SPECS) args.push('--spec', spec);
    return [t.low, u.low].map((low, p) => cli([...args, '--low', file(`low${p}.csv`, csv(low))]).projections[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Scores equal to the CLI's (the projection's name aside: the CLI names it after its file). */
function sameScores(got, want, label) {
  assert.deepStrictEqual(untyped(got.scores, label, 'Float64Array'), want.scores, `${label}: differs from faithful measure --local --json`);
}

/** The pool checks' result (window.poolChecks or the Node twin) against the CLI's projections. */
function checkPool(r, want, label) {
  assert.deepEqual(r.runs.map((x) => x.asked), [1, 2, 3, 4, 7]);
  for (const run of r.runs) {
    const tag = `${label}, ${run.asked} workers`;
    sameScores(run.first.projections[0], want[0], `${tag}, first projection`);
    sameScores(run.second.projections[0], want[1], `${tag}, second projection`);
    assert.equal(run.first.run.workers, run.workers, tag);
    if (run.asked > 1) {
      assert.ok(run.workers > 1 && run.workers <= run.asked, `${tag}: ${run.workers} served`);
      assert.equal(run.first.run.pool.workers, run.workers, tag);
    }
  }
  assert.equal(r.killed?.name, 'WorkerCrashedError', `${label}: the killed worker's call: ${JSON.stringify(r.killed)}`);
  assert.equal(r.trapped?.name, 'WorkerCrashedError', `${label}: the trapped worker's call: ${JSON.stringify(r.trapped)}`);
  assert.match(r.trapped.message, /trapped: .*unreachable/, JSON.stringify(r.trapped));
  sameScores(r.afterKill.projections[0], want[1], `${label}: the call after the kill`);
  sameScores(r.afterTrap.projections[0], want[0], `${label}: the call after the trap`);
  assert.ok(r.afterTrap.run.pool.restarts >= 2, `${label}: restarts ${r.afterTrap.run.pool.restarts}`);
  r.once.projections.forEach((p, i) => sameScores(p, want[i], `${label}: evaluate with 2 workers, projection ${i}`));
}

for (const [backend, which, n, isolated] of [
  ['cpu', 'example', 0, true],
  ['cpu', 'ties', 600, false],
  ['webgpu', 'ties', 300, true],
]) {
  test(`the worker pool (${backend}, ${which}${isolated ? ', cross-origin isolated' : ''}): any worker count gives the native CLI's bits`, async (t) => {
    if (backend === 'webgpu' && !(await hasWebGpu(t))) return;
    const { p, log } = await page(isolated ? 'isolated/index.html' : 'index.html');
    let r;
    try {
      r = await p.evaluate(([b, w, k]) => window.poolChecks(b, w, k), [backend, which, n]);
    } catch (e) {
      throw new Error(`${e.message}\n${log.join('\n')}`);
    }
    await p.close();
    assert.equal(r.shared, isolated, 'crossOriginIsolated');
    assert.equal(r.runs[1].first.run.pool.shared_memory, isolated);
    const want = which === 'example' ? native.projections : nativeTies(n);
    checkPool(r, want, `${backend} ${which}`);
    const served = backend === 'webgpu' ? 'gpu' : 'cpu';
    assert.equal(r.runs[3].first.run.backend, served, r.runs[3].first.run.fallback_reason);
  });
}

test('Node: the worker pool (worker_threads) gives the native CLI bits for any worker count', () => {
  const code = `
    import init, { Session, WorkerCrashedError, evaluate, exampleData } from 'faithful-dr';
    import { POOL_SPECS, tieHeavy } from ${JSON.stringify(path.join(HERE, 'npm_app', 'data.js'))};
    await init();
    const plain = (v) => JSON.stringify(v, (_, x) => (ArrayBuffer.isView(x) ? { typed: x.constructor.name, values: Array.from(x) } : x));
    const rejection = (p) => p.then(() => null, (e) => ({ name: e.name, message: e.message }));
    const out = {};
    for (const which of ['example', 'ties']) {
      const ex = exampleData();
      const t = tieHeavy(600), u = tieHeavy(600, 7);
      const [high, labels, lows, specs] = which === 'example' ? [ex.high, ex.labels, ex.lows, undefined] : [t.high, t.labels, [t.low, u.low], POOL_SPECS];
      const runs = [];
      for (const workers of [1, 2, 3, 4, 7]) {
        const s = await Session.create({ high, labels, workers });
        const first = await s.measure({ low: lows[0], specs, local: true });
        const second = await s.measure({ low: lows[1], specs, local: true });
        runs.push({ asked: workers, workers: s.workers, first, second });
        s.free();
      }
      const s = await Session.create({ high, labels, workers: 3 });
      await s.measure({ low: lows[0], specs, local: true });
      // Killed mid-call: the worker thread is terminated while the call waits on it.
      const pending = s.measure({ low: lows[1], specs, local: true });
      s._killWorker(1);
      const killed = await rejection(pending);
      const afterKill = await s.measure({ low: lows[1], specs, local: true });
      const trapped = await rejection(s.measure({ low: lows[0], specs, local: true, __trapWorker: 2 }));
      const afterTrap = await s.measure({ low: lows[0], specs, local: true });
      s.free();
      const once = await evaluate({ high, labels, lows, specs, local: true, workers: 2 });
      out[which] = { runs, killed, afterKill, trapped, afterTrap, once, typed: WorkerCrashedError.name };
    }
    process.stdout.write(plain(out));`;
  const out = JSON.parse(execFileSync('node', ['--input-type=module', '-e', code], { cwd: app, encoding: 'utf8', maxBuffer: 1 << 30 }));
  checkPool(out.example, native.projections, 'node example');
  checkPool(out.ties, nativeTies(600), 'node ties');
  assert.equal(out.ties.runs[1].first.run.pool.shared_memory, true);
});

test('Node: the worker pool carries the metric, a distance matrix and the neighbours\' labels', () => {
  const code = `
    import init, { Session } from 'faithful-dr';
    await init();
    const n = 240, d = 6;
    const data = new Float64Array(n * d).map((_, t) => ((t * 7919) % 101) / 10 + 0.5);
    const low = { data: new Float64Array(n * 2).map((_, t) => (t * 104729) % 97), rows: n, cols: 2 };
    const dist = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += Math.abs(data[i * d + c] - data[j * d + c]);
      dist[i * n + j] = dist[j * n + i] = s;
    }
    const specs = ['tnc:k=7', 'mrre:k=7', 'coranking:k_max=20', 'continuity:k=5'];
    const plain = (v) => JSON.stringify(v, (_, x) => (ArrayBuffer.isView(x) ? { typed: x.constructor.name, values: Array.from(x) } : x));
    const out = {};
    for (const [name, opts] of [
      ['cosine', { high: { data, rows: n, cols: d }, metric: 'cosine' }],
      ['matrix', { high: { distances: dist, rows: n } }],
    ]) {
      const got = [];
      for (const workers of [1, 3]) {
        const s = await Session.create({ ...opts, backend: 'cpu', workers });
        const r = await s.measure({ low, specs, local: true });
        const nn = await s.neighbours({ space: 'high', k: 4 });
        got.push({ workers: s.workers, scores: r.projections[0].scores, spaces: r.run.spaces, nn: Array.from(nn), numerics: nn.numerics, backend: nn.backend, run: typeof nn.run });
        s.free();
      }
      out[name] = got;
    }
    process.stdout.write(plain(out));`;
  const out = JSON.parse(execFileSync('node', ['--input-type=module', '-e', code], { cwd: app, encoding: 'utf8', maxBuffer: 1 << 28 }));
  for (const [name, input] of [['cosine', 'coordinates'], ['matrix', 'distance matrix']]) {
    const [one, pool] = out[name];
    assert.ok(pool.workers >= 2, `${name}: the pool ran on ${pool.workers} workers`);
    assert.deepStrictEqual(pool.scores, one.scores, `${name}: the pool's scores differ from one worker's`);
    assert.equal(pool.spaces.high.input, input, name);
    assert.deepStrictEqual(pool.spaces.high, one.spaces.high, `${name}: the pool's original space report`);
    assert.deepStrictEqual(pool.nn, one.nn, `${name}: neighbours`);
    for (const r of [one, pool]) assert.deepEqual([r.numerics, r.backend, r.run], ['exact', 'cpu', 'object'], name);
  }
  assert.notDeepStrictEqual(out.cosine[0].scores, out.matrix[0].scores, 'the two original spaces differ');
});

test('Node: the CPU entry equals the native CLI', () => {
  const code = `
    import init, { Session, exampleData } from 'faithful-dr';
    await init();
    const ex = exampleData();
    const s = await Session.create({ high: ex.high, labels: ex.labels });
    const r = await s.measure({ low: ex.lows[0], local: true });
    const nn = await s.neighbours({ space: 'high', k: 5 });
    const plain = (v) => JSON.stringify(v, (_, x) => (ArrayBuffer.isView(x) ? { typed: x.constructor.name, values: Array.from(x) } : x));
    process.stdout.write(plain({ r, nn, backend: s.backend, reason: s.fallbackReason }));`;
  const out = JSON.parse(execFileSync('node', ['--input-type=module', '-e', code], { cwd: app, encoding: 'utf8', maxBuffer: 1 << 28 }));
  assert.equal(out.backend, 'cpu');
  assert.match(out.reason, /no WebGPU/);
  assert.equal(out.r.run.backend, 'cpu');
  sameProjection(out.r.projections[0], native.projections[0], 'node (pca)');
  assert.equal(out.nn.typed, 'Int32Array');
  assert.equal(out.nn.values.length, native.run.n * 5);
});
