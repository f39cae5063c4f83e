// One worker of faithful-dr's pool (pool.js starts it: a module Worker in a browser, a
// worker_threads Worker in Node). Messages:
//   {id, op: 'open', module, options}          → {rows, backend, fallbackReason} (a Session of the original space)
//   {id, op: 'map', low, specs, blocks}        → the partials, a Uint8Array each, transferred (Session.mapBlocks)
//   {id, op: 'measure', request}               → an Evaluation (the measures that do not fold), with
//                                                {id, progress} while it runs when request.progress
//   {id, op: 'neighbours', request}            → {values: Int32Array, numerics, backend, run}
//   {op: 'abort', target}                      aborts call `target` (a measure)
// Replies {id, ok: true, value} or {id, ok: false, fatal, error: {name, message}}; fatal = a wasm
// trap (the instance is unusable: the pool restarts this worker).
import initWasm, * as wasm from './faithful.js';

const isNode = typeof self === 'undefined';
const port = isNode ? (await import('node:worker_threads')).parentPort : self;
const send = (message, transfer = []) => port.postMessage(message, transfer);

let session = null;
const aborts = new Map();

/** The module compiled once by the page when given; else this worker loads the .wasm itself.
 * Instantiated synchronously (a worker may): the async init looks up the global `Request`,
 * which in Node loads its fetch implementation, ~25 ms of every worker's start. */
async function init(module) {
  if (module) return wasm.initSync({ module });
  if (isNode) {
    const { readFile } = await import('node:fs/promises');
    return wasm.initSync({ module: await readFile(new URL('./faithful_bg.wasm', import.meta.url)) });
  }
  return initWasm();
}

function buffers(value, out = []) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.push(value.buffer);
  } else if (Array.isArray(value)) value.forEach((v) => buffers(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => buffers(v, out));
  return out;
}

async function handle({ id, op, module, options, low, specs, blocks, request }) {
  switch (op) {
    case 'open':
      await init(module);
      session = await wasm.Session.create(options);
      return { rows: session.rows, backend: session.backend, fallbackReason: session.fallbackReason ?? null };
    case 'map':
      return session.mapBlocks({ low, specs, blocks });
    case 'measure': {
      const controller = new AbortController();
      aborts.set(id, controller);
      try {
        const onProgress = request.progress ? (progress) => send({ id, progress }) : undefined;
        return await session.measure({ ...request, progress: undefined, signal: controller.signal, onProgress });
      } finally {
        aborts.delete(id);
      }
    }
    case 'neighbours': {
      const values = await session.neighbours(request);
      return { values, numerics: values.numerics, backend: values.backend, run: values.run };
    }
    case '__trap':
      // Tests only: a real wasm trap, in a build with the test-trap feature.
      if (typeof wasm.testTrap !== 'function') throw new Error('__trap: this build has no test trap (build it with FAITHFUL_WASM_FEATURES=test-trap)');
      return wasm.testTrap();
    default:
      throw new Error(`unknown operation ${op}`);
  }
}

async function onMessage(data) {
  if (data.op === 'abort') {
    aborts.get(data.target)?.abort();
    return;
  }
  try {
    const value = await handle(data);
    send({ id: data.id, ok: true, value }, buffers(value));
  } catch (e) {
    const fatal = e instanceof WebAssembly.RuntimeError;
    send({ id: data.id, ok: false, fatal, error: { name: e?.name ?? 'Error', message: e?.message ?? String(e) } });
  }
}

if (isNode) port.on('message', onMessage);
else self.onmessage = ({ data }) => onMessage(data);
