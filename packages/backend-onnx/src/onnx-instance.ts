import { InferenceError, dataTypeFromConfig, gatherBatchInput, scatterBatchOutputs } from '@tritium/core';
import type { BackendInstance, BackendRequest, DataType, ExecuteResult, Tensor } from '@tritium/core';
import type { ConfigTensor, ConfigView } from './config.js';
import { controlInputNames } from './config.js';
import { reshapeItems } from './reshape.js';
import type { OrtRuntime, OrtSession, OrtTensor } from './runtime.js';
import { releaseSession } from './session.js';
import { checkStringInput, fromOrtTensor, toOrtTensor } from './tensors.js';

/**
 * One model instance: runs batches of requests on an onnxruntime session (its own,
 * or one it shares with the model's other instances). Requests whose inputs can be
 * stacked are gathered into one run and the outputs scattered back; requests with
 * other shapes run in a group of their own.
 */
export class OnnxInstance implements BackendInstance {
  private readonly batching: boolean;
  private readonly inputs: readonly ConfigTensor[];
  private readonly controls: readonly string[];
  private readonly outputs: ReadonlyMap<string, ConfigTensor>;
  /** BYTES inputs, checked per request so that one bad string fails its own request alone. */
  private readonly stringInputs: readonly string[];

  constructor(
    config: ConfigView,
    private readonly runtime: OrtRuntime,
    private readonly session: OrtSession,
    /** Whether this instance owns the session (and releases it), or shares the model's. */
    private readonly ownsSession: boolean,
  ) {
    this.batching = (config.max_batch_size ?? 0) > 0;
    this.inputs = config.input ?? [];
    this.controls = controlInputNames(config);
    this.outputs = new Map((config.output ?? []).map((o) => [o.name, o]));
    this.stringInputs = this.inputs.filter((i) => i.data_type === 'TYPE_STRING').map((i) => i.name);
  }

  async execute(requests: readonly BackendRequest[]): Promise<ExecuteResult> {
    const results: Array<Record<string, Tensor> | Error> = new Array(requests.length);
    const live: number[] = [];
    for (let i = 0; i < requests.length; i++) {
      const request = requests[i]!;
      if (request.isCancelled) {
        results[i] = new InferenceError('CANCELLED', `request '${request.id}' was cancelled before it ran`);
        continue;
      }
      try {
        for (const name of this.stringInputs) {
          const tensor = request.inputs[name];
          if (tensor) checkStringInput(name, tensor);
        }
        live.push(i);
      } catch (error) {
        results[i] = InferenceError.from(error, 'INVALID_ARG', `request '${request.id}'`);
      }
    }
    for (const group of this.groups(requests, live)) {
      const batch = group.map((i) => requests[i]!);
      try {
        const outputs = await this.run(batch);
        group.forEach((index, k) => (results[index] = outputs[k]!));
      } catch (error) {
        const failure = InferenceError.from(error, 'INTERNAL', `model '${batch[0]!.modelName}'`);
        for (const index of group) results[index] = failure;
      }
    }
    return results;
  }

  async finalize(): Promise<void> {
    if (this.ownsSession) await releaseSession(this.session);
  }

  /** Splits request indices into groups that can run as one batch: same item shapes and datatypes. */
  private groups(requests: readonly BackendRequest[], indices: readonly number[]): number[][] {
    if (!this.batching || indices.length <= 1) return indices.map((i) => [i]);
    const byKey = new Map<string, number[]>();
    for (const i of indices) {
      const request = requests[i]!;
      const key = Object.keys(request.inputs)
        .sort()
        .map((name) => {
          const t = request.inputs[name]!;
          return `${name}:${t.datatype}:${t.shape.slice(1).join(',')}`;
        })
        .join(';');
      const group = byKey.get(key);
      if (group) group.push(i);
      else byKey.set(key, [i]);
    }
    return [...byKey.values()];
  }

  /**
   * Runs one compatible batch and returns each request's outputs. Inputs arrive in
   * the config's `reshape` shape already (the server applies it at the door); outputs
   * are given the config's `dims` here. The server keeps only the outputs each request
   * asked for.
   */
  private async run(batch: readonly BackendRequest[]): Promise<Array<Record<string, Tensor>>> {
    const { ort } = this.runtime;
    const first = batch[0]!;
    const feeds: Record<string, OrtTensor> = {};
    for (const name of this.controls) {
      if (!(name in first.inputs)) {
        throw new InferenceError('INVALID_ARG', `request '${first.id}' has no sequence control input '${name}' (the sequence batcher provides it)`);
      }
      feeds[name] = toOrtTensor(ort, name, gatherBatchInput(batch, name));
    }
    for (const input of this.inputs) {
      if (!(input.name in first.inputs)) {
        if (input.optional) continue;
        throw new InferenceError('INVALID_ARG', `request '${first.id}' has no input '${input.name}'`);
      }
      feeds[input.name] = toOrtTensor(ort, input.name, gatherBatchInput(batch, input.name));
    }

    const results = await this.session.run(feeds, fetchesOf(batch));
    const outputs: Record<string, Tensor> = {};
    for (const name in results) {
      const config = this.outputs.get(name)!;
      const tensor = fromOrtTensor(name, results[name] as OrtTensor, expectedType(config));
      if (config.reshape) tensor.shape = reshapeItems(tensor.shape, this.batching, config.dims ?? [], `output '${name}'`);
      outputs[name] = tensor;
    }
    return batch.length === 1 ? [outputs] : scatterBatchOutputs(batch, outputs);
  }
}

/** The outputs a batch asked for (already checked against the config by the server). */
function fetchesOf(batch: readonly BackendRequest[]): readonly string[] {
  if (batch.length === 1) return batch[0]!.requestedOutputs;
  const wanted = new Set<string>();
  for (const request of batch) for (const name of request.requestedOutputs) wanted.add(name);
  return [...wanted];
}

function expectedType(output: ConfigTensor): DataType | undefined {
  return output.data_type ? dataTypeFromConfig(output.data_type) : undefined;
}
