import { isDataType, type DataType, type ModelStatistics, type Tensor } from '@tritium/core';
import type { SharedMemoryInputs, SharedMemoryPlacement } from './shared-memory-inputs.js';

/** An input as the model's metadata describes it; the batch dimension is not in `dims`. */
export interface InputDescription {
  readonly name: string;
  readonly datatype: DataType;
  readonly dims: readonly number[];
}

/** What the inputs are made from: the model's inputs and whether it batches. */
export interface ModelDescription {
  readonly maxBatchSize: number;
  /** A sequence-batched model: its requests go in sequences, with a correlation id. */
  readonly sequence: boolean;
  /** A decoupled model: zero or more responses per request, so it is driven over a stream. */
  readonly decoupled: boolean;
  readonly inputs: readonly InputDescription[];
}

/** The client's side of one request's time, in microseconds, beside the wait for the answer. */
export interface ClientTimes {
  /** Encoding the request (and sending it, where the transport lets that be seen apart). */
  readonly sendUs: number;
  /** Decoding the response. */
  readonly recvUs: number;
}

/** For a client that sees no time of its own apart from the wait: in-process (no encoding), gRPC (grpc-js marshals inside the call). */
export const NO_CLIENT_TIME: ClientTimes = { sendUs: 0, recvUs: 0 };

/** A request's place in its sequence, for a sequence model. */
export interface SequenceStep {
  readonly id: number;
  readonly start: boolean;
  readonly end: boolean;
}

/** One request's inputs, as each client prepares it once before the load starts. */
export type RequestInputs = Readonly<Record<string, Tensor>>;

/**
 * How `tritium perf` reaches a server: in-process, HTTP or gRPC. `prepare` turns inputs
 * into the client's own form once, so the loop measures sending, not encoding the data.
 */
export interface PerfClient<Prepared = unknown> {
  /** Service Kind, as the report's settings name it. */
  readonly kind: string;
  describe(model: string, version?: string): Promise<ModelDescription>;
  /** With `placement`, the inputs are named as spans of a registered shared-memory region, not sent. */
  prepare(model: string, version: string | undefined, inputs: RequestInputs, placement?: SharedMemoryPlacement): Prepared;
  /** --shared-memory system: registers the region with the server, and unregisters it. Absent in-process. */
  registerSharedMemory?(shm: SharedMemoryInputs): Promise<void>;
  unregisterSharedMemory?(shm: SharedMemoryInputs): Promise<void>;
  infer(prepared: Prepared, sequence?: SequenceStep): Promise<ClientTimes>;
  /** The model version's statistics, in Triton's shape, with plain numbers. */
  statistics(model: string, version?: string): Promise<ModelStatistics>;
  close(): Promise<void>;
}

type Stats = ModelStatistics['inference_stats'];
const DURATIONS = ['success', 'fail', 'queue', 'compute_input', 'compute_infer', 'compute_output', 'cache_hit', 'cache_miss'] as const;

/**
 * The statistics of every version listed, added up, with plain numbers (gRPC and JSON
 * carry 64-bit values as strings): what a model answered, whichever version served it.
 */
export function totalStatistics(list: readonly ModelStatistics[]): ModelStatistics {
  const zero = () => Object.fromEntries(DURATIONS.map((d) => [d, { count: 0, ns: 0 }])) as unknown as Stats;
  const total: ModelStatistics = { name: list[0]?.name ?? '', version: list[0]?.version ?? '', last_inference: 0, inference_count: 0, execution_count: 0, inference_stats: zero(), batch_stats: [] };
  for (const stats of list) {
    total.inference_count += Number(stats.inference_count);
    total.execution_count += Number(stats.execution_count);
    for (const d of DURATIONS) {
      total.inference_stats[d].count += Number(stats.inference_stats[d].count);
      total.inference_stats[d].ns += Number(stats.inference_stats[d].ns);
    }
  }
  return total;
}

/** The description from the model's metadata (whose shapes lead with -1 when it batches), its max_batch_size and whether it is sequence-batched. */
export function modelDescription(
  inputs: ReadonlyArray<{ name: string; datatype: string; shape: readonly (number | string)[] }>,
  maxBatchSize: number,
  { sequence, decoupled }: { sequence: boolean; decoupled: boolean },
): ModelDescription {
  return {
    maxBatchSize,
    sequence,
    decoupled,
    inputs: inputs.map((input) => {
      if (!isDataType(input.datatype)) throw new Error(`input ${input.name} has datatype ${input.datatype}, which tritium perf cannot make`);
      const shape = input.shape.map(Number);
      return { name: input.name, datatype: input.datatype, dims: maxBatchSize > 0 ? shape.slice(1) : shape };
    }),
  };
}
