import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import type { RequestParameters, ValidatedRequest } from '../scheduling/inference-request.js';
import { dataTypeFromConfig, type DataType } from '../tensor/datatype.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import { toTensor, type Tensor, type TensorInput } from '../tensor/tensor.js';
import type { InferRequest } from '../types.js';

interface InputSpec {
  readonly datatype: DataType;
  /** Dims without the batch dimension; -1 matches any size. */
  readonly dims: readonly number[];
  readonly reshape: readonly number[] | undefined;
  readonly optional: boolean;
}

let nextRequestId = 0;
const NO_PARAMETERS: RequestParameters = Object.freeze({});

/**
 * The one check at the door: a request is compared with its model's config once,
 * and what passes is trusted by everything behind (schedulers, backends).
 */
export class RequestValidator {
  private readonly inputs = new Map<string, InputSpec>();
  private readonly requiredInputs: string[];
  private readonly outputs: ReadonlySet<string>;
  private readonly allOutputs: readonly string[];
  private readonly maxBatchSize: number;

  constructor(private readonly config: ModelConfig) {
    this.maxBatchSize = config.max_batch_size ?? 0;
    for (const input of config.input ?? []) {
      this.inputs.set(input.name!, {
        datatype: dataTypeFromConfig(input.data_type!),
        dims: (input.dims ?? []).map(Number),
        reshape: input.reshape ? (input.reshape.shape ?? []).map(Number) : undefined,
        optional: input.optional ?? false,
      });
    }
    this.requiredInputs = [...this.inputs].filter(([, spec]) => !spec.optional).map(([name]) => name);
    this.allOutputs = (config.output ?? []).map((output) => output.name!);
    this.outputs = new Set(this.allOutputs);
  }

  validate(request: InferRequest): ValidatedRequest {
    if (request === null || typeof request !== 'object' || request.inputs === null || typeof request.inputs !== 'object') {
      throw this.invalid('a request needs an `inputs` object');
    }
    const inputs: Record<string, Tensor> = {};
    let batchSize = -1;
    let count = 0;
    for (const name in request.inputs) {
      const spec = this.inputs.get(name);
      if (!spec) throw this.invalid(`unexpected input '${name}' (the model's inputs are ${quoteList([...this.inputs.keys()])})`);
      const tensor = toTensor(name, request.inputs[name] as TensorInput);
      if (tensor.datatype !== spec.datatype) {
        throw this.invalid(`input '${name}' has data type ${tensor.datatype}, the model expects ${spec.datatype}`);
      }
      const inputBatch = this.checkShape(name, tensor.shape, spec);
      if (batchSize !== -1 && inputBatch !== batchSize) {
        throw this.invalid(`input '${name}' has batch size ${inputBatch}, other inputs have ${batchSize}`);
      }
      batchSize = inputBatch;
      inputs[name] = spec.reshape ? reshaped(tensor, spec.reshape, this.maxBatchSize > 0) : tensor;
      count++;
    }
    if (count < this.requiredInputs.length) {
      const missing = this.requiredInputs.filter((name) => !(name in inputs));
      if (missing.length) throw this.invalid(`missing input ${quoteList(missing)}`);
    }
    return {
      id: request.id ?? String(++nextRequestId),
      inputs,
      requestedOutputs: request.outputs ? this.checkOutputs(request.outputs) : this.allOutputs,
      batchSize: batchSize === -1 ? 1 : batchSize,
      parameters: request.parameters ?? NO_PARAMETERS,
      priority: nonNegative('priority', request.priority, this),
      timeoutMicroseconds: nonNegative('timeoutMicroseconds', request.timeoutMicroseconds, this),
      signal: request.signal,
      sequence: request.sequence,
    };
  }

  invalid(message: string): InferenceError {
    return new InferenceError('INVALID_ARG', `model '${this.config.name}': ${message}`);
  }

  /** Returns the input's batch size (1 for a model without batching). */
  private checkShape(name: string, shape: readonly number[], spec: InputSpec): number {
    const batching = this.maxBatchSize > 0;
    const offset = batching ? 1 : 0;
    let fits = shape.length === spec.dims.length + offset;
    for (let i = 0; fits && i < spec.dims.length; i++) {
      const dim = spec.dims[i]!;
      if (dim !== -1 && dim !== shape[i + offset]) fits = false;
    }
    if (!fits) {
      const expected = batching ? [-1, ...spec.dims] : spec.dims;
      throw this.invalid(`input '${name}' has shape ${shapeToString(shape)}, the model expects ${shapeToString(expected)}`);
    }
    if (!batching) return 1;
    const batch = shape[0]!;
    if (batch < 1 || batch > this.maxBatchSize) {
      throw this.invalid(`input '${name}' has batch size ${batch}, the model accepts 1 to ${this.maxBatchSize}`);
    }
    return batch;
  }

  private checkOutputs(requested: readonly string[]): readonly string[] {
    if (!Array.isArray(requested)) throw this.invalid('`outputs` must be an array of output names');
    for (const name of requested) {
      if (!this.outputs.has(name)) {
        throw this.invalid(`unknown output '${name}' requested (the model's outputs are ${quoteList(this.allOutputs)})`);
      }
    }
    return requested;
  }
}

/** Gives the backend the config's `reshape` shape, resolving its variable dimension from the element count. */
function reshaped(tensor: Tensor, reshape: readonly number[], batching: boolean): Tensor {
  const batch = batching ? [tensor.shape[0]!] : [];
  const known = elementCount(reshape.filter((d) => d !== -1)) * (batch[0] ?? 1);
  const total = elementCount(tensor.shape);
  const shape = [...batch, ...reshape.map((d) => (d === -1 ? (known === 0 ? 0 : total / known) : d))];
  return { ...tensor, shape };
}

function nonNegative(field: string, value: number | undefined, validator: RequestValidator): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !(value >= 0)) throw validator.invalid(`\`${field}\` must be a non-negative number, got ${String(value)}`);
  return value;
}

function quoteList(names: readonly string[]): string {
  return names.map((name) => `'${name}'`).join(', ');
}
