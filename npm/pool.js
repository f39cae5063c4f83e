// faithful-dr's worker pool: `Session.create({ ..., workers: N })` (index.js) scores on N workers
// (module Workers in a browser, worker_threads in Node), each a wasm instance of its own.
//
// Each worker gets the original space once (shared through a SharedArrayBuffer where the page
// is cross-origin isolated, and always in Node; else a copy each) and owns one span of
// consecutive blocks of the shard plan (`shardSpans`). A call sends the projection to every
// worker; each scores the foldable measures (`shardableMeasures`: tnc, mrre, lcmc, nh, ca_tnc,
// coranking) on its span (`Session.mapBlocks`: one partial per block, keeping the original
// space's kNN and rank-table rows of its span only), and the page folds the partials with the
// library's exact fold (`foldPartials`): the same bits for every worker count. Other measures
// run on worker 0 (`run.pool.one_worker`). A worker that traps or dies fails the pending call
// with a WorkerCrashedError and is restarted (it gets the original space again).

import * as wasm from './faithful.js';

/** A worker trapped (a wasm runtime error), died or failed to start; the call did not complete. */
export class WorkerCrashedError extends Error {
  constructor(message) {
    super(message);
    this.name = 'WorkerCrashedError';
  }
}

/** The most workers `"auto"` starts, and the most a call may ask for. */
export const MAX_AUTO_WORKERS = 8;
export const MAX_WORKERS = 64;

const isNode = typeof process === 'object' && process.versions?.node != null && typeof window === 'undefined' && typeof self === 'undefined';

/** The worker count a `workers` option asks for: undefined → 1, "auto" → cores − 1 (1 to 8). */
export async function workerCount(workers) {
  if (workers === undefined || workers === null) return 1;
  if (workers === 'auto') {
    let cores = globalThis.navigator?.hardwareConcurrency;
    if (!cores && isNode) cores = (await import('node:os')).availableParallelism();
    return Math.max(1, Math.min(MAX_AUTO_WORKERS, (cores ?? 1) - 1));
  }
  if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new RangeError(`workers: expected "auto" or a whole number from 1 to ${MAX_WORKERS}, got ${workers}`);
  }
  return workers;
}

function abortError(signal) {
  return signal.reason ?? new DOMException('the call was aborted', 'AbortError');
}

/** `data` as a Float64Array in shared memory (numbers widened exactly). */
function sharedFloat64(data) {
  const out = new Float64Array(new SharedArrayBuffer(8 * data.length));
  for (let i = 0; i < data.length; i++) out[i] = data[i];
  return out;
}

let nodeThreads = null;

/** Starts one worker thread running pool-host.js; `onMessage(data)`, `onCrash(reason)`. */
async function spawn(onMessage, onCrash) {
  const url = new URL('./pool-host.js', import.meta.url);
  if (isNode) {
    nodeThreads ??= await import('node:worker_threads');
    // The parent's flags for its own entry (`node --input-type=module -e ...`) do not apply to
    // the worker's module file.
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type') && a !== '-e' && a !== '--eval');
    const w = new nodeThreads.Worker(url, { execArgv });
    let stopping = false;
    w.on('message', onMessage);
    w.on('error', (e) => onCrash(`the worker failed: ${e?.message ?? e}`));
    w.on('exit', (code) => stopping || onCrash(`the worker exited (code ${code})`));
    return {
      post: (m, t) => w.postMessage(m, t),
      terminate: () => {
        stopping = true;
        w.terminate();
      },
      kill: () => w.terminate(),
    };
  }
  const w = new Worker(url, { type: 'module' });
  w.onmessage = ({ data }) => onMessage(data);
  w.onerror = (e) => {
    e.preventDefault?.();
    onCrash(`the worker failed: ${e.message || 'it could not start'}`);
  };
  return { post: (m, t) => w.postMessage(m, t), terminate: () => w.terminate(), kill: null };
}

/** One worker of a pool: its calls, and its restart after a crash. */
class PoolWorker {
  constructor(pool, index) {
    this.pool = pool;
    this.index = index;
    this.pending = new Map();
    this.nextId = 1;
    this.generation = 0;
    this.stopped = false;
    this.restarts = 0;
  }

  /** Starts (or restarts) the thread and opens the session there; `ready` settles when open. */
  start() {
    const generation = ++this.generation;
    this.opened = false;
    this.ready = (async () => {
      this.thread = await spawn(
        (data) => generation === this.generation && this.receive(data),
        (reason) => generation === this.generation && this.crash(`worker ${this.index}: ${reason}`),
      );
      const info = await this.call({ op: 'open', module: this.pool.module, options: this.pool.workerOptions() });
      this.opened = true;
      return info;
    })();
    // A failed start rejects the calls that wait for it, not an unhandled rejection.
    this.ready.catch(() => {});
    return this.ready;
  }

  /** `call` once the thread is open; a crash while waiting fails it too. */
  async request(message, options) {
    const generation = this.generation;
    await this.ready;
    if (generation !== this.generation) throw new WorkerCrashedError(`worker ${this.index} crashed before the call reached it`);
    return this.call(message, options);
  }

  call(message, { transfer = [], onProgress } = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.thread.post({ ...message, id }, transfer);
    });
  }

  receive(data) {
    const p = this.pending.get(data.id);
    if (!p) return;
    if (data.progress) {
      p.onProgress?.(data.progress);
      return;
    }
    this.pending.delete(data.id);
    if (data.ok) p.resolve(data.value);
    else if (data.fatal) {
      p.reject(new WorkerCrashedError(`worker ${this.index} trapped: ${data.error.message}`));
      this.crash(`worker ${this.index} restarted after a wasm trap (${data.error.message})`);
    } else {
      const e = new Error(data.error.message);
      e.name = data.error.name;
      p.reject(e);
    }
  }

  /** Rejects every pending call with a WorkerCrashedError and starts a fresh thread (unless
   * this one never started: then the pool fails instead of restarting without end). */
  crash(reason) {
    if (this.stopped) return;
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.thread?.terminate();
    this.thread = null;
    if (this.opened) {
      this.restarts += 1;
      this.start();
    } else {
      this.stopped = true;
    }
    for (const p of pending) p.reject(new WorkerCrashedError(reason));
  }

  stop() {
    this.stopped = true;
    this.thread?.terminate();
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new WorkerCrashedError('the session was freed'));
  }
}

/** A Session on a pool of workers (see the module docs); made by index.js's Session.create. */
export class PoolSession {
  /** `options`: Session.create's; `count` ≥ 2 workers; `module`: the compiled wasm, if known. */
  static async open(options, count, module) {
    const high = options?.high;
    if (!high || typeof high !== 'object') {
      throw new Error('high: expected a matrix { data, rows, cols } or a distance matrix { distances, rows }');
    }
    const s = new PoolSession();
    const rows = Number(high.rows);
    // Checked here too: the plan below needs the row count before any worker reads the data.
    if (!Number.isInteger(rows) || rows < 0) throw new Error(`high: rows must be a whole number, got ${high.rows}`);
    const shared = isNode || globalThis.crossOriginIsolated === true;
    s.shared = shared && typeof SharedArrayBuffer === 'function';
    // One copy in shared memory that every worker reads; else each worker gets its own copy.
    // A distance matrix (`high.distances`) travels as the coordinates do; the metric with it.
    const given = high.distances !== undefined;
    const values = given ? high.distances : high.data;
    const share = s.shared && values && typeof values.length === 'number';
    const data = share ? sharedFloat64(values) : values;
    s.high = given ? { distances: data, rows: high.rows, name: high.name } : { data, rows: high.rows, cols: high.cols, name: high.name };
    s.metric = options.metric;
    s.labels = options.labels == null ? undefined : Array.from(options.labels);
    s.backend_ = options.backend;
    s.numerics = options.numerics;
    s.residentRanks = options.residentRanks;
    s.module = module;
    s.spans = rows >= 2 ? wasm.shardSpans(rows, count) : [[[0, rows]]];
    s.shardable = new Set(wasm.shardableMeasures());
    s.workers = s.spans.map((_, w) => new PoolWorker(s, w));
    try {
      const infos = await Promise.all(s.workers.map((w) => w.start()));
      s.info = infos[0];
    } catch (e) {
      s.free();
      throw e;
    }
    return s;
  }

  /** The session options each worker opens (the original space shared or copied). */
  workerOptions() {
    return {
      high: this.high,
      metric: this.metric,
      labels: this.labels,
      backend: this.backend_,
      numerics: this.numerics,
      residentRanks: this.residentRanks,
    };
  }

  get rows() {
    return this.info.rows;
  }
  get backend() {
    return this.info.backend;
  }
  get fallbackReason() {
    return this.info.fallbackReason;
  }
  /** Workers serving (fewer than asked when n has fewer blocks of the shard plan). */
  get count() {
    return this.workers.length;
  }

  /** Test hook: ends worker `w` as a crash would (its pending call rejects; it restarts). */
  kill(w) {
    const worker = this.workers[w];
    if (worker.thread.kill) worker.thread.kill(); // Node: its 'exit' event reports the crash
    else worker.crash(`worker ${w} was killed`);
  }

  async measure(request) {
    const { low, specs, local = false, signal, onProgress, numerics } = request ?? {};
    if (signal?.aborted) throw abortError(signal);
    if (this.workers === null) throw new Error('the session was freed');
    const list = Array.isArray(specs) && specs.length > 0 ? specs.map(String) : defaultSpecs(this.labels !== undefined);
    const folded = [];
    const alone = [];
    list.forEach((s, i) => (this.shardable.has(s.split(':')[0].trim()) ? folded : alone).push(i));
    const t0 = performance.now();
    const lowMsg = low && typeof low === 'object' ? { data: low.data, rows: low.rows, cols: low.cols, name: low.name } : low;
    const calls = [];
    if (folded.length > 0) {
      const fspecs = folded.map((i) => list[i]);
      this.workers.forEach((w, t) => {
        // Test hook: `__trapWorker: t` makes worker t trap (a real wasm trap) instead of mapping.
        const op = request.__trapWorker === t ? '__trap' : 'map';
        calls.push(w.request({ op, low: lowMsg, specs: fspecs, blocks: this.spans[t] }));
      });
    }
    const one = alone.length > 0
      ? this.workers[0].request({ op: 'measure', request: { low: lowMsg, specs: alone.map((i) => list[i]), local, numerics, progress: !!onProgress } }, { onProgress })
      : null;
    let onAbort;
    const aborted = signal
      ? new Promise((_, reject) => {
          onAbort = () => reject(abortError(signal));
          signal.addEventListener('abort', onAbort, { once: true });
        })
      : null;
    const work = Promise.all([Promise.all(calls), one]);
    // Every call settles (no unhandled rejection) whichever way this one ends.
    work.catch(() => {});
    let parts, alone_;
    try {
      [parts, alone_] = await (aborted ? Promise.race([work, aborted]) : work);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    const fold = folded.length > 0 ? wasm.foldPartials(parts.flat(), local) : null;
    const result = fold ?? alone_;
    const scores = new Array(list.length);
    folded.forEach((i, t) => (scores[i] = fold.projections[0].scores[t]));
    alone.forEach((i, t) => (scores[i] = alone_.projections[0].scores[t]));
    result.projections[0].scores = scores;
    const run = result.run;
    if (fold) {
      run.backend_requested = alone_?.run.backend_requested ?? this.backend_ ?? 'webgpu';
      run.fallback_reason = alone_?.run.fallback_reason ?? this.info.fallbackReason ?? null;
    }
    run.workers = this.count;
    run.pool = {
      workers: this.count,
      spans: this.spans.map((blocks) => [blocks[0][0], blocks[blocks.length - 1][1]]),
      folded: folded.map((i) => list[i]),
      one_worker: alone.map((i) => list[i]),
      shared_memory: this.shared,
      restarts: this.workers.reduce((a, w) => a + w.restarts, 0),
      call_s: (performance.now() - t0) / 1000,
    };
    return result;
  }

  async neighbours(request) {
    if (this.workers === null) throw new Error('the session was freed');
    // The worker sends the Int32Array and its labels apart (a clone drops a typed array's
    // own properties): put back as the one-thread Session returns them.
    const { values, numerics, backend, run } = await this.workers[0].request({ op: 'neighbours', request });
    return Object.assign(values, { numerics, backend, run });
  }

  free() {
    for (const w of this.workers ?? []) w.stop();
    this.workers = null;
  }
}

function defaultSpecs(withLabels) {
  return withLabels ? ['tnc', 'mrre', 'lcmc', 'nh'] : ['tnc', 'mrre', 'lcmc'];
}

