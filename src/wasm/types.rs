//! The TypeScript types of the browser API, written once here: wasm-bindgen copies this section
//! into the package's `.d.ts`, and the extern types below make the exported functions' signatures
//! name them (no `any`). The result types follow the CLI's JSON schema (src/report.rs).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** Any JSON value (used for the run report's detailed, release-dependent parts). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** Numbers of a matrix, row-major. Float32 and Int32 values are widened to float64 exactly. */
export type Numbers = Float64Array | Float32Array | Int32Array | number[];
/** An n×D matrix, row-major: `data.length === rows * cols`. */
export interface Matrix { data: Numbers; rows: number; cols: number; name?: string; }
/** Where the kNN and ranks are built: the browser's WebGPU (default; falls back to the wasm CPU, and says why), the wasm CPU reference, or auto. */
export type BackendName = "webgpu" | "cpu" | "auto";
/** Exact (default): the CPU reference's bits on every backend. Fast: f32 GPU reductions where a measure allows. */
export type NumericsName = "exact" | "fast";
/** Class labels, one integer per point (within ±Number.MAX_SAFE_INTEGER). */
export type LabelValues = Int32Array | Float64Array | number[];
/** How far a long all-pairs phase has come. */
export interface Progress { phase: string; done: number; total: number; }
/** How many workers serve (the package's entry; the wasm `Session` itself is one): 1 (default) the calling thread, N > 1 a pool of N workers (the same bits for every N), "auto" the cores less one, at most 8. */
export type Workers = number | "auto";
/** Whether a session keeps the original space's rank table (its rows, on a pool: each worker its own): from the second call that needs it when it fits 256 MiB ("auto", default), from the first whatever its size within memory ("always"), or never. */
export type ResidentRanksName = "auto" | "always" | "never";
/** The original space as an n×n distance matrix, row-major: finite, non-negative, zero diagonal, exactly symmetric. */
export interface DistanceMatrix { distances: Numbers; rows: number; name?: string; }
/** The original space's metric, scipy's `cdist` names (default "euclidean"); "minkowski:p=3" sets Minkowski's p. Projections are Euclidean. */
export type MetricName = "euclidean" | "sqeuclidean" | "cosine" | "correlation" | "cityblock" | "chebyshev" | "minkowski" | `minkowski:p=${number}` | "precomputed";
/** `Session.create`: the original space stays resident with its kNN and the GPU device. `high`: coordinates (under `metric`) or a distance matrix. */
export interface SessionOptions { high: Matrix | DistanceMatrix; metric?: MetricName; labels?: LabelValues; backend?: BackendName; numerics?: NumericsName; workers?: Workers; residentRanks?: ResidentRanksName; }
/** `Session.measure`: one projection of the session's points. `specs` as the CLI's `--measure` (default tnc, mrre, lcmc, and nh with labels). */
export interface MeasureRequest {
  low: Matrix;
  specs?: string[];
  local?: boolean;
  /** Aborting rejects the call with an AbortError; the session stays usable. */
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** This call's numerics (default: the session's). A kNN list kept from a Fast call serves only Fast calls. */
  numerics?: NumericsName;
}
/** `Session.mapBlocks` (the worker pool's share of a call): the shardable `specs` on consecutive blocks `[start, end]` of the shard plan (`shardSpans`). */
export interface MapBlocksRequest { low: Matrix; specs: string[]; blocks: [number, number][]; }
/** `Session.neighbours`: the exact k nearest neighbours (ties by index, self excluded) of the original space or of a projection `low`. */
export interface NeighboursRequest { space: "high" | "low"; k: number; low?: Matrix; /** This call's numerics (default: the session's). */ numerics?: NumericsName; }
/** `Session.neighbours`' result: n×k indices, row-major, labelled with what served them ("fast": the GPU's f32 order, not certified exact). */
export type Neighbours = Int32Array & { numerics: "exact" | "fast"; backend: "cpu" | "gpu"; run: RunReport };
/** `evaluate`: one-shot evaluation of several projections (no resident state). */
export interface EvaluateRequest {
  high: Matrix;
  lows: Matrix[];
  labels?: LabelValues;
  specs?: string[];
  local?: boolean;
  backend?: BackendName;
  numerics?: NumericsName;
  workers?: Workers;
}
/** `exampleData()`: the bundled UCI digits with its PCA and random projections, labels and the default specs. */
export interface ExampleData { high: Matrix & { data: Float64Array; name: string }; lows: (Matrix & { data: Float64Array; name: string })[]; labels: Int32Array; specs: string[]; }
/**
 * What a measure's per-point values mean: `mean` (they average to the value), `sum` (they sum to
 * the value), `share` (they sum to 1), `partial_mean` (the points that have a value average to
 * the value; the others are `null`), `count` (whole numbers), `score` (a per-point score on the
 * value's scale that does not aggregate to it exactly), `log_ratio` (signed, 0 = alike in both
 * spaces; points without one are `null`).
 */
export type LocalKind = "mean" | "sum" | "share" | "partial_mean" | "count" | "score" | "log_ratio";
/**
 * A measure's scores on one projection: `values` in ZADU's key order, per-point `local` values
 * when asked (Float64Array; for `partial_mean` and `log_ratio`, an array with `null` for a point
 * without a value), and what each local key means in `local_kinds`.
 */
export interface Score {
  id: string;
  params: { [name: string]: number | string };
  values: { [key: string]: number };
  local?: { [key: string]: Float64Array | (number | null)[] };
  local_kinds?: { [key: string]: LocalKind };
  curves?: { [key: string]: number[] };
}
export interface ProjectionScores { name: string; scores: Score[]; }
/** Which backend served each output. */
export interface ServedOutput { output: string; backend: "cpu" | "gpu"; numerics: "exact" | "fast"; }
/** The resources a run needed (neighbour counts, all-pairs statistics). */
export interface Needs {
  knn_high: number; knn_low: number; cross: number; cross_low: number; /** The cross-rank pairs' distances too (the topographic product). */ cross_dists: boolean; pair_sums: boolean; density_sigmas: number[]; pair_ranks: boolean; pair_isotonic: boolean;
  /** The full-row all-pairs sweep: Sammon, CCA weightings, the average local error, NeRV neighbourhoods. */
  sammon: boolean; cca: { lambda: number; kernel: "exponential" | "step" }[]; ale: boolean[]; nerv: { perplexity: number; shared: boolean }[];
}
export interface BlockPlan { needs: Needs; knn_high_reused: boolean; block_rows: number; blocks: number; scratch_bytes_per_worker: number; resource_bytes: number; pairwise: { [key: string]: JsonValue } | null; high_ranks: HighRanksReport | null; low_index: LowIndexReport[]; }
/** How a projection's neighbours and ranks were found: its exact spatial index (a k-d tree, dimension ≤ 3) or its full distance rows, and why. */
export interface LowIndexReport { path: "kd_tree" | "rows"; reason: string; }
/** A worker pool's call: the workers, each one's span of rows, the measures folded over the spans and those run on worker 0. */
export interface PoolReport { workers: number; spans: [number, number][]; folded: string[]; one_worker: string[]; shared_memory: boolean; restarts: number; call_s: number; }
/** Where the original space's cross ranks came from: its resident rank table (lookups) or its rows recomputed in the call, and why. */
export interface HighRanksReport { source: "resident_table" | "recomputed"; reason: string; table_bytes: number; built_now: boolean; }
export interface Timings { validate_s: number; resources_s: number; measures_s: number; total_s: number; }
export interface AdapterReport {
  name: string; backend: string; device_type: string; driver: string; driver_info: string; vendor: number; device: number; hardware: boolean;
  max_storage_buffer_binding_size: number; max_buffer_size: number; max_compute_workgroup_storage_size: number;
  max_compute_invocations_per_workgroup: number; max_compute_workgroups_per_dimension: number; features: string[];
}
/** What ran and how (the CLI's `run` object). */
export interface RunReport {
  faithful_version: string;
  backend_requested: string;
  backend: "cpu" | "gpu";
  numerics: "exact" | "fast";
  fallback_reason: string | null;
  adapter: AdapterReport | null;
  gpu: { device_start_s: number; stats: { [key: string]: JsonValue } } | null;
  threads: number;
  n: number;
  dim_high: number;
  dims_low: number[];
  /** The original space's input and metric; the projections' metric (always "euclidean"). */
  spaces: { high: { input: "coordinates" | "distance matrix" | "kNN graph"; metric: string; graph?: { [key: string]: JsonValue } }; low: { metric: "euclidean" } };
  served: ServedOutput[];
  plan: BlockPlan;
  work: { [key: string]: JsonValue };
  timings: Timings;
  /** Workers that served (the package's Session and evaluate; 1 on the calling thread). */
  workers?: number;
  /** The worker pool's call, when more than one worker served. */
  pool?: PoolReport;
}
/** A result in the CLI's JSON schema (`faithful measure --json`), per-point values as Float64Array. */
export interface Evaluation { projections: ProjectionScores[]; run: RunReport; }
/** `bench`: the kernel suite of `faithful bench` on the wasm CPU and WebGPU (every key optional). */
export interface BenchRequest {
  sizes?: number[]; dims?: number[]; k?: number; repeat?: number; seed?: number;
  backends?: ("cpu" | "webgpu")[]; kernels?: string[]; adapterLabel?: string;
  progress?: (done: number, total: number, what: string) => void;
}
/**
 * A measure's parameter as `measures()` lists it. `required`: no default, a spec must give it
 * (`default` is then ""). `open`: a choice that also accepts other values (snc's
 * `clustering_strategy`: `"<k>-means"`).
 */
export interface MeasureParam { name: string; kind: "int" | "float" | "choice"; default: string; required: boolean; choices: string[]; open: boolean; }
/** A per-point output of a measure and what its values mean. */
export interface LocalOutput { key: string; kind: LocalKind; }
/** `views`: the distortion views' data (`evaluate`'s request with per-point values on, and what to compute; 0 leaves a part out). */
export interface ViewsRequest extends EvaluateRequest {
  /** Neighbours per point of the lens and the reliability map (default 10). */
  k?: number;
  /** Bins per axis of the Shepard diagram (default 64, at most 1024). */
  shepardBins?: number;
  /** Bins per octave of K in the co-ranking matrix (default 4, at most 16). */
  corankingPerOctave?: number;
  /** Specs scored after `specs` where they are defined (a caption's "srho"): a projection on which one is undefined goes without it and names it in `leftOut`; every other error fails the call. */
  optional?: string[];
}
/** One projection's kNN list at k and both spaces' cross ranks (1-based, ties by index), n×k row-major. */
export interface ViewNeighbourhoods {
  k: number;
  knnLow: Int32Array;
  /** The projection rank of each original neighbour: above k, a missing neighbour. */
  rankLowOfHigh: Int32Array;
  /** The original rank of each projection neighbour: above k, a false neighbour. */
  rankHighOfLow: Int32Array;
}
/** Every pair i < j counted in a bins×bins grid of (d^X, d^Y) (`counts[a * bins + b]`, a on the original axis, 0 … maxHigh); the counts sum to `pairs` = n(n−1)/2. */
export interface ViewShepard { bins: number; maxHigh: number; maxLow: number; pairs: number; counts: Float64Array; }
/** The co-ranking matrix in log bins (bin t: ranks edges[t] … edges[t+1] − 1; `counts[a * B + b]`, a the original rank's bin), with R_NX(K) (index K − 1) and its log-K AUC. */
export interface ViewCoRanking { edges: Int32Array; counts: Float64Array; rnx: Float64Array; aucRnx: number; }
/** An optional spec left out of one projection's scores: undefined there, and why. */
export interface LeftOut { id: string; reason: string; }
export interface ProjectionViews { name: string; neighbourhoods: ViewNeighbourhoods | null; shepard: ViewShepard | null; coranking: ViewCoRanking | null; leftOut: LeftOut[]; }
/** `views`' result: the scores (as `evaluate` returns them) and each projection's views; `knnHigh` is the original space's kNN at k, n×k. */
export interface Views { evaluation: Evaluation; k: number; knnHigh: Int32Array | null; projections: ProjectionViews[]; }
/** A measure as `measures()` (and `faithful measures --json`) lists it. */
export interface MeasureInfo { id: string; zadu_id: string; params: MeasureParam[]; keys: string[]; local: LocalOutput[]; labels: boolean; min_classes: number; description: string; }
"#;

#[wasm_bindgen]
extern "C" {
    /// `SessionOptions` in TypeScript.
    #[wasm_bindgen(typescript_type = "SessionOptions")]
    pub type SessionOptions;
    /// `MeasureRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "MeasureRequest")]
    pub type MeasureRequest;
    /// `NeighboursRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "NeighboursRequest")]
    pub type NeighboursRequest;
    /// `EvaluateRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "EvaluateRequest")]
    pub type EvaluateRequest;
    /// `ExampleData` in TypeScript.
    #[wasm_bindgen(typescript_type = "ExampleData")]
    pub type ExampleData;
    /// `BenchRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "BenchRequest")]
    pub type BenchRequest;
    /// `Promise<Evaluation>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<Evaluation>")]
    pub type PromiseEvaluation;
    /// `Promise<Neighbours>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<Neighbours>")]
    pub type PromiseNeighbours;
    /// `Evaluation` in TypeScript.
    #[wasm_bindgen(typescript_type = "Evaluation")]
    pub type EvaluationValue;
    /// `MapBlocksRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "MapBlocksRequest")]
    pub type MapBlocksRequest;
    /// `Promise<Uint8Array[]>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<Uint8Array[]>")]
    pub type PromisePartials;
    /// `ViewsRequest` in TypeScript.
    #[wasm_bindgen(typescript_type = "ViewsRequest")]
    pub type ViewsRequest;
    /// `Promise<Views>` in TypeScript.
    #[wasm_bindgen(typescript_type = "Promise<Views>")]
    pub type PromiseViews;
    /// `MeasureInfo[]` in TypeScript.
    #[wasm_bindgen(typescript_type = "MeasureInfo[]")]
    pub type MeasureList;
}
