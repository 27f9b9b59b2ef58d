import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import type { RequestParameters, ValidatedRequest } from '../scheduling/inference-request.js';
import { dataTypeFromConfig, type DataType } from '../tensor/datatype.js';
import { mapVariableDims, shapeMatches, shapeToString } from '../tensor/shape.js';
import { toTensor, type Tensor, type TensorInput } from '../tensor/tensor.js';
import type { InferRequest } from '../types.js';

interface InputSpec {
  readonly datatype: DataType;
  /** The shape a request must have: dims, after a -1 batch dimension for a batching model. */
  readonly expectedShape: readonly number[];
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
      const dims = (input.dims ?? []).map(Number);
      this.inputs.set(input.name!, {
        datatype: dataTypeFromConfig(input.data_type!),
        expectedShape: this.maxBatchSize > 0 ? [-1, ...dims] : dims,
        reshape: input.reshape ? (input.reshape.shape ?? []).map(Number) : undefined,
        optional: input.optional ?? false,
      });
    }
    this.requiredInputs = [...this.inputs].filter(([, spec]) => !spec.optional).map(([name]) => name);
    this.allOutputs = (config.output ?? []).map((output) => output.name!);
    this.outputs = new Set(this.allOutputs);
  }

  validate(request: InferRequest): ValidatedRequest {
    if (!isPlainObject(request) || !isPlainObject(request.inputs)) {
      throw this.invalid('a request needs an `inputs` object mapping input names to tensors');
    }
    const inputs: Record<string, Tensor> = {};
    let batchSize = -1;
    let required = 0;
    for (const name in request.inputs) {
      const spec = this.inputs.get(name);
      if (!spec) throw this.invalid(`unexpected input '${name}' (the model's inputs are ${quoteList([...this.inputs.keys()])})`);
      const tensor = this.tensor(name, request.inputs[name] as TensorInput);
      if (tensor.datatype !== spec.datatype) {
        throw this.invalid(`input '${name}' has data type ${tensor.datatype}, the model expects ${spec.datatype}`);
      }
      const inputBatch = this.checkShape(name, tensor.shape, spec);
      if (batchSize !== -1 && inputBatch !== batchSize) {
        throw this.invalid(`input '${name}' has batch size ${inputBatch}, other inputs have ${batchSize}`);
      }
      batchSize = inputBatch;
      inputs[name] = spec.reshape ? reshaped(tensor, spec, this.maxBatchSize > 0) : tensor;
      if (!spec.optional) required++;
    }
    if (required < this.requiredInputs.length) {
      throw this.invalid(`missing input ${quoteList(this.requiredInputs.filter((name) => !Object.hasOwn(inputs, name)))}`);
    }
    return {
      id: request.id ?? String(++nextRequestId),
      inputs,
      // As in Triton, no requested outputs (absent or empty) means all of them.
      requestedOutputs: request.outputs?.length ? this.checkOutputs(request.outputs) : this.allOutputs,
      batchSize: batchSize === -1 ? 1 : batchSize,
      parameters: request.parameters ?? NO_PARAMETERS,
      priority: this.nonNegative('priority', request.priority),
      timeoutMicroseconds: this.nonNegative('timeoutMicroseconds', request.timeoutMicroseconds),
      signal: request.signal,
      sequence: request.sequence,
    };
  }

  invalid(message: string): InferenceError {
    return new InferenceError('INVALID_ARG', `model '${this.config.name}': ${message}`);
  }

  /** Returns the input's batch size (1 for a model without batching). */
  private checkShape(name: string, shape: readonly number[], spec: InputSpec): number {
    if (!shapeMatches(shape, spec.expectedShape)) {
      throw this.invalid(`input '${name}' has shape ${shapeToString(shape)}, the model expects ${shapeToString(spec.expectedShape)}`);
    }
    if (this.maxBatchSize === 0) return 1;
    const batch = shape[0]!;
    if (batch < 1 || batch > this.maxBatchSize) {
      throw this.invalid(`input '${name}' has batch size ${batch}, the model accepts 1 to ${this.maxBatchSize}`);
    }
    return batch;
  }

  /** The tensor check of the tensor layer, its message prefixed with the model. */
  private tensor(name: string, input: TensorInput): Tensor {
    try {
      return toTensor(name, input);
    } catch (error) {
      throw this.invalid((error as Error).message);
    }
  }

  private nonNegative(field: string, value: number | undefined): number {
    if (value === undefined) return 0;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw this.invalid(`\`${field}\` must be a finite non-negative number, got ${String(value)}`);
    }
    return value;
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

/** Gives the backend the config's `reshape` shape, keeping the batch dimension. */
function reshaped(tensor: Tensor, spec: InputSpec, batching: boolean): Tensor {
  if (!batching) return { ...tensor, shape: mapVariableDims(tensor.shape, spec.expectedShape, spec.reshape!) };
  const items = mapVariableDims(tensor.shape.slice(1), spec.expectedShape.slice(1), spec.reshape!);
  return { ...tensor, shape: [tensor.shape[0]!, ...items] };
}

/** An object literal (or null-prototype object), not a Map, array or class instance. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function quoteList(names: readonly string[]): string {
  return names.map((name) => `'${name}'`).join(', ');
}
