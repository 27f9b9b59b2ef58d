import type { ModelConfig, NormalizedModelConfig } from '../config/schema.js';
import type { Tensor } from '../tensor/tensor.js';
import type { SequenceOptions } from './inference.js';
import type { Logger } from './logger.js';
import type { ModelServer } from './model-server.js';

/**
 * Triton's backend API in three levels: a Backend (one per kind, e.g. onnxruntime)
 * creates a BackendModel per loaded model version, which creates a BackendInstance per
 * instance_group member. Each level has its own initialize/finalize.
 */
export interface Backend {
  /** The name a config's `backend` field uses, e.g. "onnxruntime". */
  readonly name: string;
  /** Legacy `platform` values this backend serves, e.g. ["onnxruntime_onnx"]. */
  readonly platforms?: readonly string[];
  /** The model file looked for in a version directory when the config names none. */
  readonly defaultModelFilename?: string;
  initialize?(): Promise<void>;
  finalize?(): Promise<void>;
  /**
   * Fills in what a missing or partial config leaves out, from the model file
   * (Triton's auto-complete). Receives the config as written (maybe only a name)
   * and returns the completed one; it is normalized and validated afterwards.
   */
  autoCompleteConfig?(config: ModelConfig, context: ModelFiles): Promise<ModelConfig>;
  createModel(context: ModelContext): Promise<BackendModel>;
  /**
   * For a backend that runs instances on GPUs: how many it finds. A KIND_GPU group
   * without `gpus` gets instances on each. It may throw an InferenceError saying why there
   * are none. Absent: the backend runs on the CPU only, and KIND_GPU groups are UNAVAILABLE.
   */
  gpuCount?(): number;
  /** Metrics the backend's models define themselves (a Python model's pb_utils.MetricFamily), read at each scrape. */
  customMetrics?(): Iterable<CustomMetricFamily>;
}

/** A metric family a model defines, with its current values, for server.metrics() to export. */
export interface CustomMetricFamily {
  readonly name: string;
  readonly description: string;
  /** A histogram is exported when each of its metrics carries its `histogram`; otherwise it stays with the backend. */
  readonly kind: 'counter' | 'gauge' | 'histogram';
  readonly metrics: Iterable<CustomMetric>;
}

/** One label set's value; for a histogram, its buckets too. */
export interface CustomMetric {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly histogram?: CustomHistogramValue;
}

/** A histogram's state: the count of observations at or below each upper bound (cumulative), their sum and count. */
export interface CustomHistogramValue {
  readonly upperBounds: readonly number[];
  readonly cumulativeCounts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/** Where a model version's files are. */
export interface ModelFiles {
  /** The model directory inside the repository (holds config.pbtxt and version dirs). */
  readonly modelDirectory: string;
  /** The version directory, e.g. `<model>/1`. */
  readonly versionDirectory: string;
  /** `versionDirectory/<default_model_filename or the backend's default>`. */
  readonly modelPath: string;
  readonly version: number;
}

export interface ModelContext extends ModelFiles {
  readonly name: string;
  /** The normalized, validated config: every field Triton defaults is filled. */
  readonly config: NormalizedModelConfig;
  /** The server that loads the model, for models that call other models (Triton's BLS) or load and unload them. */
  readonly server: ModelServer;
  /** The server's logger, for what a model reports (Triton's model logging). */
  readonly logger: Logger;
  /**
   * How many of this version's requests the server holds now: accepted and not yet
   * answered, whether queued, being looked up in the response cache, or executing. For a
   * backend that places work by the load (the ONNX backend lets a long run hold the event
   * loop only when its execution serves every request in flight).
   */
  requestsInFlight(): number;
}

export interface BackendModel {
  /** A line shown in the model's state, e.g. which runtime serves it. */
  readonly description?: string;
  createInstance(context: InstanceContext): Promise<BackendInstance>;
  finalize?(): Promise<void>;
}

export interface InstanceContext {
  /** Triton's instance name: `<group>_<index>` (the first instance of group `m_0` is `m_0_0`). */
  readonly name: string;
  readonly kind: string;
  /** The device id for GPU instances; undefined on CPU. */
  readonly deviceId?: number;
  /** Where the instance tells the server it cannot run for now, or for good (see InstanceHealth). */
  readonly health: InstanceHealth;
}

/**
 * An instance's report of its own health. The server gives work only to healthy
 * instances: one that is recovering (a worker thread or process that died and is
 * being replaced) waits out of the pool; when every instance has failed for good, the
 * model's waiting requests fail with the reason instead of waiting forever.
 */
export interface InstanceHealth {
  /** The instance cannot run now; it is being replaced or restarted. */
  recovering(reason: string): void;
  /** It can run again. */
  restored(): void;
  /** It will never run again. */
  failed(reason: string): void;
}

/** One output map per request; an Error in a slot fails that request alone. */
export type ExecuteResult = ReadonlyArray<Readonly<Record<string, Tensor>> | Error>;

/**
 * What a backend may tell of one execution, as Triton's backends report their compute
 * times: when the batch's inputs were ready for the framework (Triton's COMPUTE_INPUT_END)
 * and when its outputs began to come back (COMPUTE_OUTPUT_START). The server splits the
 * execution into compute_input, compute_infer and compute_output from them (statistics,
 * traces). Times are `performance.now()` milliseconds of the server's thread; now when
 * left out. Called again, the later call counts. A backend that tells neither has its
 * whole execution counted as compute_infer.
 */
export interface ExecutionReport {
  inputsReady(time?: number): void;
  outputsStarted(time?: number): void;
}

export interface BackendInstance {
  /**
   * Runs a batch of requests. A model that answers once per request returns one
   * output map per request, in order. A decoupled model answers through each
   * request's `response` sender instead and returns nothing. Throwing fails every
   * request of the batch. `report` (absent for warmup) hears the execution's compute
   * times, for a backend that can tell them. A backend whose run ended within the call
   * may return its results directly rather than a promise of them: the server then
   * answers without waiting for a microtask.
   */
  execute(requests: readonly BackendRequest[], report?: ExecutionReport): ExecuteResult | void | Promise<ExecuteResult | void>;
  /** Whether the instance can serve now (a model's own readiness check); the model is ready only while every instance says so. */
  isReady?(): Promise<boolean>;
  finalize?(): Promise<void>;
}

/** A request as a backend sees it: already validated against the config. */
export interface BackendRequest {
  readonly id: string;
  readonly modelName: string;
  readonly modelVersion: number;
  readonly inputs: Readonly<Record<string, Tensor>>;
  /** The outputs the caller asked for; all of the config's outputs when it named none. */
  readonly requestedOutputs: readonly string[];
  readonly parameters: Readonly<Record<string, string | number | boolean>>;
  /** The request's batch size (first dimension) for batching models, otherwise 1. */
  readonly batchSize: number;
  /** The caller's priority (0: the model's default level). */
  readonly priority: number;
  /** The caller's timeout in microseconds (0: none). */
  readonly timeoutMicroseconds: number;
  /**
   * The sequence (Triton's correlation id and start/end flags) of a request to a stateful
   * model; undefined for an empty slot, which the direct strategy pads a batch with.
   */
  readonly sequence: SequenceOptions | undefined;
  /** True once the caller aborted; a backend may stop work early. */
  readonly isCancelled: boolean;
  /**
   * Calls `listener` once when the request is cancelled (at once if it already is), so
   * a backend can pass the cancellation on instead of polling. Returns the function
   * that stops listening.
   */
  onCancel(listener: () => void): () => void;
  readonly response: ResponseSender;
}

/** Sends the responses of one request (Triton's response factory / sender). */
export interface ResponseSender {
  /** Sends a response; `final` ends the stream. */
  send(outputs: Readonly<Record<string, Tensor>>, options?: { final?: boolean }): void;
  /** Ends the stream without another response (Triton's FINAL flag alone). */
  close(): void;
  /** Ends the stream with an error. */
  fail(error: unknown): void;
}
