// Types of faithful-dr/worker; the request and result types are the package's own
// (faithful.d.ts, generated from src/wasm/types.rs).
import type { EvaluateRequest, Evaluation, MeasureRequest, NeighboursRequest, SessionOptions } from './faithful.js';

/** The worker trapped (a wasm runtime error) or failed to start; the call did not complete. */
export declare class WorkerCrashedError extends Error {
  readonly name: 'WorkerCrashedError';
}

/** The Session API in a module Worker. */
export declare class FaithfulWorker {
  constructor(url?: URL | string);
  version(): Promise<string>;
  evaluate(request: EvaluateRequest, transfer?: Transferable[]): Promise<Evaluation>;
  createSession(options: SessionOptions, transfer?: Transferable[]): Promise<WorkerSession>;
  terminate(): void;
}

/** A Session living in the worker; re-created from its options after a worker restart. */
export declare class WorkerSession {
  readonly rows: number;
  readonly backend: 'gpu' | 'cpu';
  readonly fallbackReason: string | null;
  measure(request: MeasureRequest, transfer?: Transferable[]): Promise<Evaluation>;
  neighbours(request: NeighboursRequest, transfer?: Transferable[]): Promise<Int32Array>;
  free(): void;
}
