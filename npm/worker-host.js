// The worker side of faithful-dr/worker (worker.js starts it as a module worker). Messages:
//   {id, op: 'create', options}            → {id, ok, value: {session, rows, backend, fallbackReason}}
//   {id, op: 'measure'|'neighbours', session, request} → {id, ok, value} (buffers transferred;
//                                            neighbours: {indices, numerics, backend, run})
//   {id, op: 'evaluate', request, json}    → {id, ok, value} (json: the CLI's JSON text)
//   {id, op: 'measures'|'exampleData'}     → {id, ok, value}
//   {id, op: 'views', request}             → {id, ok, value} (the views' data, buffers transferred)
//   {id, op: 'bench', request}             → {id, ok, value: the receipt's JSON text}, with
//                                            {id, progress: {done, total, what}} while it runs
//   {id, op: 'free', session}              → {id, ok}
//   {op: 'abort', target}                  aborts call `target`
// while a measure runs: {id, progress}. Failures: {id, ok: false, error: {name, message}, fatal}
// where fatal = a wasm trap (the module is unusable: the client starts a fresh worker).
import init, * as wasm from './faithful.js';

const { Session, bench, evaluate, evaluateJson, exampleData, measures, version, views } = wasm;

const ready = init();
const sessions = new Map();
const aborts = new Map();
let nextSession = 1;

/** Every ArrayBuffer under a result (its Float64Array and Int32Array values), to transfer. */
function buffers(value, out = []) {
  if (ArrayBuffer.isView(value)) out.push(value.buffer);
  else if (Array.isArray(value)) value.forEach((v) => buffers(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => buffers(v, out));
  return out;
}

function session(id) {
  const s = sessions.get(id);
  if (!s) throw new Error(`no session ${id} in this worker (freed, or lost when the worker restarted)`);
  return s;
}

async function handle({ id, op, session: sid, request, options, json }) {
  await ready;
  switch (op) {
    case 'version':
      return version();
    case 'create': {
      const s = await Session.create(options);
      const handle = nextSession++;
      sessions.set(handle, s);
      return { session: handle, rows: s.rows, backend: s.backend, fallbackReason: s.fallbackReason ?? null };
    }
    case 'measure': {
      const controller = new AbortController();
      aborts.set(id, controller);
      try {
        const onProgress = request.progress ? (progress) => self.postMessage({ id, progress }) : undefined;
        return await session(sid).measure({ ...request, progress: undefined, signal: controller.signal, onProgress });
      } finally {
        aborts.delete(id);
      }
    }
    case 'neighbours': {
      // What served travels beside the indices (a structured clone drops an array's own properties).
      const nn = await session(sid).neighbours(request);
      return { indices: nn, numerics: nn.numerics, backend: nn.backend, run: nn.run };
    }
    case 'evaluate':
      return json ? evaluateJson(request) : evaluate(request);
    case 'measures':
      return measures();
    case 'views':
      return views(request);
    case 'exampleData':
      return exampleData();
    case 'bench': {
      const progress = (done, total, what) => self.postMessage({ id, progress: { done, total, what } });
      return bench({ ...request, progress });
    }
    case 'free':
      session(sid).free();
      sessions.delete(sid);
      return null;
    case '__trap':
      // For the package's tests only: a real wasm trap, in a build with the test-trap feature
      // (scripts/test_browser.sh packs one); a release build has no such export.
      if (typeof wasm.testTrap !== 'function') throw new Error('__trap: this build has no test trap (build it with FAITHFUL_WASM_FEATURES=test-trap)');
      return wasm.testTrap();
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

self.onmessage = async ({ data }) => {
  if (data.op === 'abort') {
    aborts.get(data.target)?.abort();
    return;
  }
  try {
    const value = await handle(data);
    self.postMessage({ id: data.id, ok: true, value }, buffers(value));
  } catch (e) {
    const fatal = e instanceof WebAssembly.RuntimeError;
    const name = e?.name ?? 'Error';
    self.postMessage({ id: data.id, ok: false, fatal, error: { name, message: e?.message ?? String(e) } });
  }
};
