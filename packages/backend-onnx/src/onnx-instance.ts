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
  }

  async execute(requests: readonly BackendRequest[]): Promise<ExecuteResult> {
    const results: Array<Record<string, Tensor> | Error> = new Array(requests.length);
    const live: number[] = [];
    requests.forEach((request, i) => {
      if (request.isCancelled) {
        results[i] = new InferenceError('CANCELLED', `request '${request.id}' was cancelled before it ran`);
        return;
      }
      try {
        for (const [name, tensor] of Object.entries(request.inputs)) checkStringInput(name, tensor);
        live.push(i);
      } catch (error) {
        results[i] = InferenceError.from(error, 'INVALID_ARG', `request '${request.id}'`);
      }
    });
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
    if (!this.batching) return indices.map((i) => [i]);
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

  /** Runs one compatible batch and returns each request's requested outputs. */
  private async run(batch: readonly BackendRequest[]): Promise<Array<Record<string, Tensor>>> {
    const { ort } = this.runtime;
    const feeds: Record<string, OrtTensor> = {};
    for (const name of this.controls) {
      if (!(name in batch[0]!.inputs)) {
        throw new InferenceError('INVALID_ARG', `request '${batch[0]!.id}' has no sequence control input '${name}' (the sequence batcher provides it)`);
      }
      const tensor = this.batching ? gatherBatchInput(batch, name) : batch[0]!.inputs[name]!;
      feeds[name] = toOrtTensor(ort, name, tensor);
    }
    for (const input of this.inputs) {
      if (!(input.name in batch[0]!.inputs)) {
        if (input.optional) continue;
        throw new InferenceError('INVALID_ARG', `request '${batch[0]!.id}' has no input '${input.name}'`);
      }
      const tensor = this.batching ? gatherBatchInput(batch, input.name) : batch[0]!.inputs[input.name]!;
      const shape = input.reshape ? reshapeItems(tensor.shape, this.batching, input.reshape.shape ?? [], `input '${input.name}'`) : tensor.shape;
      feeds[input.name] = toOrtTensor(ort, input.name, tensor, shape);
    }

    const wanted = new Set<string>();
    for (const request of batch) for (const name of request.requestedOutputs) wanted.add(name);
    const fetches = [...wanted].filter((name) => this.outputs.has(name));
    const results = await this.session.run(feeds, fetches);

    const outputs: Record<string, Tensor> = {};
    for (const name of fetches) {
      const value = results[name];
      if (!value) throw new InferenceError('INTERNAL', `onnxruntime returned no output '${name}'`);
      const config = this.outputs.get(name)!;
      const tensor = fromOrtTensor(name, value as OrtTensor, expectedType(config));
      if (config.reshape) tensor.shape = reshapeItems(tensor.shape, this.batching, config.dims ?? [], `output '${name}'`);
      outputs[name] = tensor;
    }
    const perRequest = this.batching ? scatterBatchOutputs(batch, outputs) : [outputs];
    return perRequest.map((all, k) => pick(all, batch[k]!.requestedOutputs));
  }
}

function expectedType(output: ConfigTensor): DataType | undefined {
  return output.data_type ? dataTypeFromConfig(output.data_type) : undefined;
}

function pick(outputs: Record<string, Tensor>, names: readonly string[]): Record<string, Tensor> {
  const picked: Record<string, Tensor> = {};
  for (const name of names) if (outputs[name]) picked[name] = outputs[name];
  return picked;
}
