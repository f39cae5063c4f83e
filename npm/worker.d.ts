// Types of faithful-dr/worker; the request and result types are the package's own
// (faithful.d.ts, generated from src/wasm/types.rs).
import type { BenchRequest, EvaluateRequest, Evaluation, ExampleData, MeasureInfo, MeasureRequest, Neighbours, NeighboursRequest, SessionOptions, Views, ViewsRequest } from './faithful.js';

/** The worker trapped (a wasm runtime error) or failed to start; the call did not complete. */
export declare class WorkerCrashedError extends Error {
  readonly name: 'WorkerCrashedError';
}

/** The Session API in a module Worker. */
export declare class FaithfulWorker {
  constructor(url?: URL | string);
  version(): Promise<string>;
  evaluate(request: EvaluateRequest, transfer?: Transferable[]): Promise<Evaluation>;
  /** `evaluate`, returning the CLI's JSON text. */
  evaluateJson(request: EvaluateRequest, transfer?: Transferable[]): Promise<string>;
  measures(): Promise<MeasureInfo[]>;
  /** The distortion views' data (`views`): scores with per-point values, kNN lists, cross ranks, Shepard and co-ranking tallies. */
  views(request: ViewsRequest, transfer?: Transferable[]): Promise<Views>;
  exampleData(): Promise<ExampleData>;
  /** The kernel benchmark: the receipt's JSON text (`progress` is replaced by `onProgress`). */
  bench(request: Omit<BenchRequest, 'progress'>, options?: { onProgress?: (p: { done: number; total: number; what: string }) => void; signal?: AbortSignal }): Promise<string>;
  createSession(options: SessionOptions, transfer?: Transferable[]): Promise<WorkerSession>;
  terminate(): void;
}

/** A Session living in the worker; re-created from its options after a worker restart. */
export declare class WorkerSession {
  readonly rows: number;
  readonly backend: 'gpu' | 'cpu';
  readonly fallbackReason: string | null;
  measure(request: MeasureRequest, transfer?: Transferable[]): Promise<Evaluation>;
  neighbours(request: NeighboursRequest, transfer?: Transferable[]): Promise<Neighbours>;
  free(): void;
}
