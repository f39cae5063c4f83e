// What tests/browser/npm.test.mjs runs in the page: window.checks(backend) uses the package the
// way an app would and returns plain JSON (typed arrays as arrays) for the test to compare with
// the native CLI.
import init, { Session, WorkerCrashedError as PoolCrashed, evaluate, exampleData, measures, version } from 'faithful-dr';
import { FaithfulWorker, WorkerCrashedError } from 'faithful-dr/worker';
import { POOL_SPECS, tieHeavy } from './data.js';

const plain = (v) => JSON.parse(JSON.stringify(v, (_, x) => (ArrayBuffer.isView(x) ? { typed: x.constructor.name, values: Array.from(x) } : x)));

async function rejection(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return { name: e.name, message: e.message };
  }
}

window.checks = async (backend) => {
  const ex = exampleData();
  const [pca, random] = ex.lows;
  const s = await Session.create({ high: ex.high, labels: ex.labels, backend });
  const first = await s.measure({ low: pca, local: true });
  // A second, different projection on the same resident session: the kNN of high is reused.
  const second = await s.measure({ low: random, local: true });
  const knnHigh = await s.neighbours({ space: 'high', k: 10 });
  const knnLow = await s.neighbours({ space: 'low', k: 10, low: pca });
  // Aborted right after the call: rejects with an AbortError; the session stays usable.
  const controller = new AbortController();
  const pending = s.measure({ low: random, local: true, signal: controller.signal });
  controller.abort();
  const aborted = await rejection(pending);
  const third = await s.measure({ low: pca, local: true });
  const info = { rows: s.rows, backend: s.backend, fallbackReason: s.fallbackReason ?? null };
  s.free();
  const once = await evaluate({ ...ex, local: true, backend });
  return plain({ version: version(), measureIds: measures().map((m) => m.id), info, first, second, third, aborted, knnHigh, knnLow, once, high: ex.high, pca });
};

// Issue 24: one Session runs Fast and then Exact (the request's `numerics`) on each data set;
// the test compares whatever is labelled exact with the native CLI's CPU reference.
window.numericsChecks = async (backend, sets, specs) => {
  const out = [];
  for (const d of sets) {
    const s = await Session.create({ high: d.high, backend, numerics: 'fast' });
    const knn = async (numerics) => {
      const nn = await s.neighbours({ space: 'high', k: 10, numerics });
      return { numerics: nn.numerics, backend: nn.backend, runNumerics: nn.run.numerics, isInt32: nn instanceof Int32Array, values: Array.from(nn) };
    };
    const fastKnn = await knn(undefined);
    const fast = await s.measure({ low: d.low, specs });
    const exact = await s.measure({ low: d.low, specs, numerics: 'exact' });
    const exactKnn = await knn('exact');
    out.push({ name: d.name, backend: s.backend, fastKnn, exactKnn, fast, exact });
    s.free();
  }
  return plain(out);
};

window.workerChecks = async (backend) => {
  const ex = exampleData();
  const w = new FaithfulWorker();
  const s = await w.createSession({ high: ex.high, labels: ex.labels, backend });
  const progress = [];
  const first = await s.measure({ low: ex.lows[0], local: true, onProgress: (p) => progress.push(p) });
  const controller = new AbortController();
  const pending = s.measure({ low: ex.lows[1], local: true, signal: controller.signal });
  controller.abort();
  const aborted = await rejection(pending);
  const second = await s.measure({ low: ex.lows[1], local: true });
  const knnHigh = await s.neighbours({ space: 'high', k: 10 });
  // A trap restarts the worker and rejects the pending call with a typed error; the session
  // re-creates itself in the fresh worker.
  const crash = await rejection(w.call({ op: '__trap' }));
  const afterCrash = await s.measure({ low: ex.lows[0], local: true });
  s.free();
  w.terminate();
  return plain({ first, second, aborted, knnHigh, crash, crashTyped: WorkerCrashedError.name, afterCrash, knnIsInt32: knnHigh instanceof Int32Array, localIsF64: first.projections[0].scores[0].local.local_trustworthiness instanceof Float64Array });
};

/** The worker pool: N = 1, 2, 3, 4, 7 workers on `which` data ('example' or 'ties', n), two
 * projections each (the second call from the workers' resident rows); then a worker killed and
 * one trapped mid-call, each rejecting the call with the typed error, and the next call. */
window.poolChecks = async (backend, which, n) => {
  let high, labels, lows, specs;
  if (which === 'example') {
    const ex = exampleData();
    ({ high, labels, lows, specs } = { high: ex.high, labels: ex.labels, lows: ex.lows, specs: undefined });
  } else {
    const t = tieHeavy(n);
    const u = tieHeavy(n, 7);
    ({ high, labels, lows, specs } = { high: t.high, labels: t.labels, lows: [t.low, u.low], specs: POOL_SPECS });
  }
  const runs = [];
  for (const workers of [1, 2, 3, 4, 7]) {
    const s = await Session.create({ high, labels, backend, workers });
    const first = await s.measure({ low: lows[0], specs, local: true });
    const second = await s.measure({ low: lows[1], specs, local: true });
    runs.push({ asked: workers, workers: s.workers, first, second });
    s.free();
  }
  const s = await Session.create({ high, labels, backend, workers: 3 });
  await s.measure({ low: lows[0], specs, local: true });
  const pending = s.measure({ low: lows[1], specs, local: true });
  s._killWorker(1);
  const killed = await rejection(pending);
  const afterKill = await s.measure({ low: lows[1], specs, local: true });
  const trapped = await rejection(s.measure({ low: lows[0], specs, local: true, __trapWorker: 2 }));
  const afterTrap = await s.measure({ low: lows[0], specs, local: true });
  s.free();
  const once = await evaluate({ high, labels, lows, specs, local: true, backend, workers: 2 });
  return plain({ runs, killed, afterKill, trapped, afterTrap, once, typed: PoolCrashed.name, shared: globalThis.crossOriginIsolated === true });
};

await init();
document.body.dataset.status = 'ready';
