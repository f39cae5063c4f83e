// faithful-dr/worker: the Session API through a module Worker, so scoring never blocks the page.
//
//   import { FaithfulWorker } from 'faithful-dr/worker';
//   const w = new FaithfulWorker();
//   const s = await w.createSession({ high: { data, rows, cols } });
//   const r = await s.measure({ low, specs: ['tnc:k=20'], local: true, signal, onProgress });
//
// Requests are copied to the worker (structured clone) unless their buffers are listed in the
// optional `transfer` argument; results come back with their buffers transferred (no copy).
// A wasm trap in the worker rejects the pending calls with a WorkerCrashedError and starts a
// fresh worker; a session then re-creates itself there from its options on its next call.

// One error type for the worker client and the worker pool (pool.js).
import { WorkerCrashedError } from './pool.js';

export { WorkerCrashedError };

function abortError(signal) {
  return signal.reason ?? new DOMException('the call was aborted', 'AbortError');
}

export class FaithfulWorker {
  /** `url`: another worker script (one that imports worker-host.js); default the package's own. */
  constructor(url) {
    this.url = url;
    this.generation = 0;
    this.pending = new Map();
    this.nextId = 1;
    this.start();
  }

  start() {
    this.generation += 1;
    // Written out in full so that bundlers (Vite, webpack) see the worker and bundle it.
    this.worker = this.url
      ? new Worker(this.url, { type: 'module' })
      : new Worker(new URL('./worker-host.js', import.meta.url), { type: 'module' });
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      this.crash(`the worker failed: ${e.message || 'it could not start'}`);
    };
  }

  /** Rejects every pending call and starts a fresh worker. */
  crash(message) {
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.worker.terminate();
    this.start();
    for (const p of pending) p.reject(new WorkerCrashedError(message));
  }

  receive(data) {
    const p = this.pending.get(data.id);
    if (!p) return;
    if (data.progress) {
      p.onProgress?.(data.progress);
      return;
    }
    this.pending.delete(data.id);
    if (data.ok) {
      p.resolve(data.value);
    } else if (data.fatal) {
      p.reject(new WorkerCrashedError(`the wasm module trapped: ${data.error.message}`));
      this.crash(`the worker restarted after a wasm trap (${data.error.message})`);
    } else {
      const e = new Error(data.error.message);
      e.name = data.error.name;
      p.reject(e);
    }
  }

  /** Posts one call; `signal` aborts it (the promise rejects with an AbortError at once). */
  call(message, { transfer = [], signal, onProgress } = {}) {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const settle = (f) => (v) => {
        signal?.removeEventListener('abort', onAbort);
        f(v);
      };
      const onAbort = () => {
        this.pending.delete(id);
        this.worker.postMessage({ op: 'abort', target: id });
        reject(abortError(signal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject), onProgress });
      this.worker.postMessage({ ...message, id }, transfer);
    });
  }

  version() {
    return this.call({ op: 'version' });
  }

  evaluate(request, transfer) {
    return this.call({ op: 'evaluate', request }, { transfer });
  }

  /** `evaluate`, returning the CLI's JSON text (exact decimal floats, for display or files). */
  evaluateJson(request, transfer) {
    return this.call({ op: 'evaluate', request, json: true }, { transfer });
  }

  measures() {
    return this.call({ op: 'measures' });
  }

  /** The distortion views' data (the package's `views`): scores, kNN lists, cross ranks, tallies. */
  views(request, transfer) {
    return this.call({ op: 'views', request }, { transfer });
  }

  /** The bundled example (its buffers are transferred). */
  exampleData() {
    return this.call({ op: 'exampleData' });
  }

  /** The kernel benchmark (`bench`): the receipt's JSON text; `onProgress({done, total, what})`. */
  bench(request, { onProgress, signal } = {}) {
    const { progress, ...rest } = request;
    return this.call({ op: 'bench', request: rest }, { onProgress, signal });
  }

  /** A Session in the worker (see Session.create). */
  async createSession(options, transfer) {
    const s = new WorkerSession(this, options);
    await s.open(transfer);
    return s;
  }

  /** Ends the worker (pending calls reject with a WorkerCrashedError); its sessions go with it. */
  terminate() {
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.worker.terminate();
    for (const p of pending) p.reject(new WorkerCrashedError('the worker was terminated'));
  }
}

export class WorkerSession {
  constructor(client, options) {
    this.client = client;
    this.options = options;
    this.handle = null;
    this.generation = -1;
  }

  async open(transfer) {
    const generation = this.client.generation;
    const info = await this.client.call({ op: 'create', options: this.options }, { transfer });
    Object.assign(this, { handle: info.session, generation, rows: info.rows, backend: info.backend, fallbackReason: info.fallbackReason });
  }

  /** Re-creates the session in a restarted worker. */
  async ready() {
    if (this.handle === null) throw new Error('the session was freed');
    if (this.generation !== this.client.generation) await this.open();
  }

  async measure(request, transfer) {
    await this.ready();
    const { signal, onProgress, ...rest } = request;
    return this.client.call({ op: 'measure', session: this.handle, request: { ...rest, progress: !!onProgress } }, { transfer, signal, onProgress });
  }

  async neighbours(request, transfer) {
    await this.ready();
    const { indices, numerics, backend, run } = await this.client.call({ op: 'neighbours', session: this.handle, request }, { transfer });
    return Object.assign(indices, { numerics, backend, run });
  }

  free() {
    if (this.handle !== null && this.generation === this.client.generation) {
      this.client.call({ op: 'free', session: this.handle }).catch(() => {});
    }
    this.handle = null;
  }
}
