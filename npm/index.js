// The entry of faithful-dr (browsers and bundlers; node.js is Node's): the wasm API of
// faithful.js, with `Session.create` and `evaluate` taking a `workers` option:
//
//   const s = await Session.create({ high, labels, workers: 4 });   // or "auto": cores − 1, at most 8
//   const r = await s.measure({ low, specs: ['tnc:k=20'], local: true });   // r.run.workers === 4
//
// `workers: 1` (the default) is the wasm Session on the calling thread, as before; N > 1 is a
// pool of N workers (pool.js) whose results are the same bits for every N.
import initWasm, * as wasm from './faithful.js';
import { adopt, compiledModule } from './module.js';
import { PoolSession, WorkerCrashedError, workerCount } from './pool.js';

export * from './faithful.js';
export { WorkerCrashedError };

/** Loads the wasm module (`input` as wasm-bindgen's init takes it; default: the package's .wasm). */
export default async function init(input) {
  if (input === undefined) {
    const url = new URL('./faithful_bg.wasm', import.meta.url);
    let compiled;
    try {
      compiled = await WebAssembly.compileStreaming(fetch(url));
    } catch {
      // A server that does not say application/wasm, or no compileStreaming.
      compiled = await WebAssembly.compile(await (await fetch(url)).arrayBuffer());
    }
    adopt(compiled);
    return initWasm({ module_or_path: compiled });
  }
  const given = input?.module_or_path ?? input;
  if (given instanceof WebAssembly.Module) adopt(given);
  return initWasm(input);
}

/** A resident original space (see faithful.d.ts's Session), on `options.workers` workers. */
export class Session {
  constructor(inner, pool) {
    this._inner = inner;
    this._pool = pool;
  }

  static async create(options) {
    const count = await workerCount(options?.workers);
    if (count <= 1) return new Session(await wasm.Session.create(options), null);
    return new Session(null, await PoolSession.open(options, count, compiledModule()));
  }

  #live() {
    const s = this._inner ?? this._pool;
    if (!s) throw new Error('the session was freed');
    return s;
  }

  get rows() {
    return this.#live().rows;
  }
  get backend() {
    return this.#live().backend;
  }
  get fallbackReason() {
    return this.#live().fallbackReason;
  }
  /** Workers serving: 1 for the calling thread's session. */
  get workers() {
    return this._pool ? this._pool.count : 1;
  }

  async measure(request) {
    const r = await this.#live().measure(request);
    if (this._inner) r.run.workers = 1;
    return r;
  }

  neighbours(request) {
    return this.#live().neighbours(request);
  }

  /** Test hook of a pool: ends worker `w` as a crash would (it restarts). */
  _killWorker(w) {
    this._pool?.kill(w);
  }

  free() {
    this._inner?.free();
    this._pool?.free();
    this._inner = this._pool = null;
  }
}

/** One-shot evaluation (see faithful.d.ts's evaluate), on `request.workers` workers. */
export async function evaluate(request) {
  const count = await workerCount(request?.workers);
  const lows = request?.lows;
  if (count <= 1 || !Array.isArray(lows) || lows.length === 0) {
    const r = await wasm.evaluate(request);
    r.run.workers = 1;
    return r;
  }
  const { high, labels, backend, numerics, specs, local } = request;
  const s = await Session.create({ high, labels, backend, numerics, workers: count });
  try {
    const results = [];
    for (const [p, low] of lows.entries()) {
      results.push(await s.measure({ low: { ...low, name: low?.name ?? `projection ${p}` }, specs, local }));
    }
    const r = results[0];
    r.projections = results.flatMap((x) => x.projections);
    r.run.dims_low = results.map((x) => x.run.dims_low[0]);
    return r;
  } finally {
    s.free();
  }
}
