// Types of faithful-dr's entry (index.js): the wasm API (faithful.d.ts, generated from
// src/wasm/types.rs) with a Session and evaluate that take `workers`.
export * from './faithful.js';
import type { EvaluateRequest, Evaluation, InitInput, InitOutput, MeasureRequest, NeighboursRequest, SessionOptions } from './faithful.js';

/** A worker of the pool trapped (a wasm runtime error), died or failed to start; the call did not complete (the worker restarts). */
export declare class WorkerCrashedError extends Error {
  readonly name: 'WorkerCrashedError';
}

/** A resident original space, scored on `options.workers` workers (1: the calling thread). */
export declare class Session {
  private constructor();
  static create(options: SessionOptions): Promise<Session>;
  /** Points in the original space. */
  readonly rows: number;
  /** The backend that serves: "gpu" (WebGPU) or "cpu" (the wasm CPU reference). */
  readonly backend: 'gpu' | 'cpu';
  /** Why the wasm CPU serves although WebGPU was asked for, if it does. */
  readonly fallbackReason: string | undefined;
  /** Workers serving (fewer than asked when n has fewer blocks of the shard plan). */
  readonly workers: number;
  measure(request: MeasureRequest): Promise<Evaluation>;
  neighbours(request: NeighboursRequest): Promise<Int32Array>;
  free(): void;
}

/** One-shot evaluation of several projections (no resident state), on `request.workers` workers. */
export declare function evaluate(request: EvaluateRequest): Promise<Evaluation>;

/** Loads the wasm module (default: the package's faithful_bg.wasm, found through import.meta.url). */
export default function init(input?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>): Promise<InitOutput>;
