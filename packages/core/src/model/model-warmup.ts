import { randomFillSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackendInstance, BackendRequest, ExecuteResult, ModelContext, ResponseSender } from '../contract/backend.js';
import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { deserializeBytesTensor } from '../tensor/bytes.js';
import { createTensorData } from '../tensor/data.js';
import { dataTypeFromConfig, type TypedTensorData } from '../tensor/datatype.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import { pathInside } from './path-inside.js';

/** Where `input_data_file` names its files: `<model>/warmup/`, as in Triton. */
const WARMUP_DIRECTORY = 'warmup';

/** One `model_warmup` entry, its inputs built: run `count` times as `batchSize` requests of batch 1. */
export interface WarmupSample {
  readonly name: string;
  readonly batchSize: number;
  readonly count: number;
  readonly inputs: Readonly<Record<string, Tensor>>;
}

/**
 * Builds the config's warmup samples (Triton's model_warmup), reading data files from
 * `<model>/warmup/`. A sample of batch size 0 is skipped, as Triton skips it; a count of
 * 0 runs once. An input with a variable dimension, no data kind, or a file too short is
 * INVALID_ARG naming the sample and the input.
 */
export async function warmupSamples(context: ModelContext): Promise<WarmupSample[]> {
  const { config } = context;
  const samples: WarmupSample[] = [];
  for (const warmup of config.model_warmup) {
    if (!warmup.batch_size) continue;
    const inputs: Record<string, Tensor> = {};
    for (const [name, input] of Object.entries(warmup.inputs)) {
      inputs[name] = await warmupTensor(context, config, `warmup sample '${warmup.name}' input '${name}'`, name, input);
    }
    samples.push({ name: warmup.name ?? '', batchSize: Number(warmup.batch_size), count: Math.max(1, Number(warmup.count ?? 0)), inputs });
  }
  return samples;
}

type WarmupInput = NormalizedModelConfig['model_warmup'][number]['inputs'][string];

async function warmupTensor(context: ModelContext, config: NormalizedModelConfig, where: string, name: string, input: WarmupInput): Promise<Tensor> {
  const fail = (detail: string) => new InferenceError('INVALID_ARG', `model '${context.name}': ${where}: ${detail}`);
  const dims = (input.dims ?? []).map(Number);
  if (dims.some((d) => d < 0)) throw fail(`all dimensions must be given, got ${shapeToString(dims)}`);
  const datatype = dataTypeFromConfig(input.data_type ?? 'TYPE_INVALID');
  // A batching model's own inputs get the batch dimension; control inputs are taken as written.
  const batched = Number(config.max_batch_size ?? 0) > 0 && (config.input ?? []).some((i) => i.name === name);
  const shape = batched ? [1, ...dims] : dims;
  const count = elementCount(shape);
  const data = createTensorData(datatype, count);
  if (input.zero_data) return { datatype, shape, data };
  if (input.random_data) {
    // BYTES has no random form that is valid: Triton sends it as zeros (empty elements) too.
    if (datatype !== 'BYTES') randomFillSync(data as TypedTensorData);
    return { datatype, shape, data };
  }
  if (!input.input_data_file) throw fail('has no data: set zero_data, random_data or input_data_file');
  const path = await pathInside(join(context.modelDirectory, WARMUP_DIRECTORY), input.input_data_file, `model '${context.name}': ${where}: input_data_file`);
  const bytes = await readFile(path).catch((error: Error) => {
    throw fail(`cannot read ${path}: ${error.message}`);
  });
  if (datatype === 'BYTES') return { datatype, shape, data: deserializeBytesTensor(bytes, count, name) };
  const typed = data as TypedTensorData;
  if (bytes.byteLength < typed.byteLength) throw fail(`expects ${typed.byteLength} bytes, but ${path} has only ${bytes.byteLength}`);
  new Uint8Array(typed.buffer).set(bytes.subarray(0, typed.byteLength));
  return { datatype, shape, data };
}

/**
 * Runs every sample on one instance before it serves, as Triton warms each instance:
 * straight through the instance (no scheduler, no statistics). A failing response, a
 * failed execute, or a decoupled stream ending in an error fails the warmup.
 */
export async function warmUp(context: ModelContext, instanceName: string, instance: BackendInstance, samples: readonly WarmupSample[]): Promise<void> {
  const outputs = (context.config.output ?? []).map((output) => output.name!);
  for (const sample of samples) {
    for (let iteration = 1; iteration <= sample.count; iteration++) {
      const where = `model '${context.name}' instance ${instanceName}: warmup sample '${sample.name}' (iteration ${iteration})`;
      const requests = Array.from({ length: sample.batchSize }, (_, i) => new WarmupRequest(context, `${sample.name}/${iteration}/${i}`, sample.inputs, outputs));
      let result: ExecuteResult | void;
      try {
        result = await instance.execute(requests);
      } catch (error) {
        throw InferenceError.from(error, 'UNAVAILABLE', where);
      }
      // Results of an ordinary model; a decoupled one answers through each request's sender.
      if (result) {
        if (result.length !== requests.length) throw new InferenceError('UNAVAILABLE', `${where}: the backend returned ${result.length} responses for ${requests.length} requests`);
        result.forEach((slot, i) => (slot instanceof Error ? requests[i]!.fail(slot) : requests[i]!.close()));
      } else if (!context.config.model_transaction_policy.decoupled) {
        throw new InferenceError('UNAVAILABLE', `${where}: the backend returned no responses`);
      }
      const failure = (await Promise.all(requests.map((request) => request.done))).find((error) => error !== undefined);
      if (failure) throw InferenceError.from(failure, 'UNAVAILABLE', where);
    }
  }
}

/** A warmup request: the sample's inputs, answered into a promise that says whether it failed. */
class WarmupRequest implements BackendRequest, ResponseSender {
  readonly modelName: string;
  readonly modelVersion: number;
  readonly parameters = {};
  readonly batchSize = 1;
  readonly priority = 0;
  readonly timeoutMicroseconds = 0;
  readonly sequence = undefined;
  readonly isCancelled = false;
  readonly response: ResponseSender = this;
  readonly done: Promise<unknown>;
  private settle: (error?: unknown) => void = () => {};

  constructor(
    context: ModelContext,
    readonly id: string,
    readonly inputs: Readonly<Record<string, Tensor>>,
    readonly requestedOutputs: readonly string[],
  ) {
    this.modelName = context.name;
    this.modelVersion = context.version;
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  onCancel(): () => void {
    return () => {};
  }

  send(_outputs: Readonly<Record<string, Tensor>>, options?: { final?: boolean }): void {
    if (options?.final) this.settle();
  }

  close(): void {
    this.settle();
  }

  fail(error: unknown): void {
    this.settle(error ?? new Error('failed'));
  }
}
