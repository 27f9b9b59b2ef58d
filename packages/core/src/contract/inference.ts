import type { CallerTrace } from '../observability/caller-trace.js';
import type { Tensor, TensorInput } from '../tensor/tensor.js';

export interface InferRequest {
  readonly inputs: Readonly<Record<string, TensorInput>>;
  /** Output names to return; all when omitted. */
  readonly outputs?: readonly string[];
  /** The version to use; the highest ready one when omitted. */
  readonly modelVersion?: number;
  /** Echoed in the response, and named by errors that refuse the request. */
  readonly id?: string;
  /** A non-negative integer, for schedulers that use priorities. */
  readonly priority?: number;
  /** Triton's queue timeout (a non-negative integer): the default scheduler ignores it, as Triton's does. */
  readonly timeoutMicroseconds?: number;
  /** Aborting fails the request with CANCELLED; `AbortSignal.timeout(ms)` firing fails it with DEADLINE_EXCEEDED. */
  readonly signal?: AbortSignal;
  readonly parameters?: Readonly<Record<string, string | number | boolean>>;
  readonly sequence?: SequenceOptions;
  /** What the caller adds to the request's trace: the W3C trace context it continues, its own activities (docs/trace.md). */
  readonly trace?: CallerTrace;
}

/** An inference under way (InferenceServer.startInference). */
export interface RunningInference {
  readonly response: Promise<InferResponse>;
  /** Fails the request with CANCELLED at once, as aborting its signal would; nothing once it has ended. */
  cancel(): void;
}

export interface InferResponse {
  readonly id: string;
  readonly modelName: string;
  readonly modelVersion: number;
  readonly outputs: Record<string, Tensor>;
  /**
   * inferStream() only: whether the model sent this response as its last (Triton's FINAL
   * flag given with a response). A stream the model ends without a response (the flag
   * alone) has no response marked final.
   */
  readonly final?: boolean;
}

/** A request's place in a sequence, for stateful models (Triton's sequence batcher). */
export interface SequenceOptions {
  /** Triton's correlation id: a non-negative integer (a bigint up to 2^64-1) or a non-empty string. */
  readonly id: number | bigint | string;
  readonly start?: boolean;
  readonly end?: boolean;
}
