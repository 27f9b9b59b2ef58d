import { requestShape } from '../config/request-shape.js';
import { checkCallerTrace } from '../observability/caller-trace.js';
import type { NormalizedModelConfig } from '../config/schema.js';
import type { InferRequest } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import type { RequestParameters, ValidatedRequest } from '../scheduling/inference-request.js';
import { generatedRequestId } from './generated-request-id.js';
import { checkSequenceOptions, sequenceRequestCheck } from './sequence-request.js';
import { describeValue } from '../tensor/convert.js';
import { dataTypeFromConfig, type DataType } from '../tensor/datatype.js';
import { mapVariableDims, shapeMatches, shapeToString } from '../tensor/shape.js';
import type { Tensor, TensorInput } from '../tensor/tensor.js';
import { toTensor } from '../tensor/to-tensor.js';

interface InputSpec {
  readonly datatype: DataType;
  /** The shape a request must have: dims, after a -1 batch dimension for a batching model. */
  readonly expectedShape: readonly number[];
  readonly reshape: readonly number[] | undefined;
  readonly optional: boolean;
}

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
  /** A sequence batching model's own rules for requests; undefined for other models. */
  private readonly checkSequenceRequest: ReturnType<typeof sequenceRequestCheck> | undefined;

  constructor(private readonly config: NormalizedModelConfig) {
    this.maxBatchSize = config.max_batch_size ?? 0;
    this.checkSequenceRequest = config.sequence_batching ? sequenceRequestCheck(config) : undefined;
    for (const input of config.input ?? []) {
      this.inputs.set(input.name!, {
        datatype: dataTypeFromConfig(input.data_type!),
        expectedShape: requestShape(config, input),
        reshape: input.reshape ? (input.reshape.shape ?? []).map(Number) : undefined,
        optional: input.optional ?? false,
      });
    }
    this.requiredInputs = [...this.inputs].filter(([, spec]) => !spec.optional).map(([name]) => name);
    this.allOutputs = (config.output ?? []).map((output) => output.name!);
    this.outputs = new Set(this.allOutputs);
  }

  /** The request as schedulers and backends get it; INVALID_ARG naming the model (and request id) otherwise. */
  validate(request: InferRequest): ValidatedRequest {
    try {
      return this.check(request);
    } catch (error) {
      // The checks below throw bare INVALID_ARGs; anything else is a bug and stays as it is.
      if (!(error instanceof InferenceError) || error.code !== 'INVALID_ARG') throw error;
      throw refusal(this.config.name!, request, error.message);
    }
  }

  private check(request: InferRequest): ValidatedRequest {
    if (!isPlainObject(request) || !isPlainObject(request.inputs)) {
      throw invalid('a request needs an `inputs` object mapping input names to tensors');
    }
    if (request.id !== undefined && typeof request.id !== 'string') throw invalid(`\`id\` must be a string, got ${describeValue(request.id)}`);
    const inputs: Record<string, Tensor> = {};
    let batchSize = -1;
    let required = 0;
    for (const name in request.inputs) {
      const spec = this.inputs.get(name);
      if (!spec) throw invalid(`unexpected input '${name}' (the model's inputs are ${quoteList([...this.inputs.keys()])})`);
      const tensor = toTensor(name, request.inputs[name] as TensorInput);
      if (tensor.datatype !== spec.datatype) {
        throw invalid(`input '${name}' has data type ${tensor.datatype}, the model expects ${spec.datatype}`);
      }
      const inputBatch = this.checkShape(name, tensor.shape, spec);
      if (batchSize !== -1 && inputBatch !== batchSize) {
        throw invalid(`input '${name}' has batch size ${inputBatch}, other inputs have ${batchSize}`);
      }
      batchSize = inputBatch;
      inputs[name] = spec.reshape ? reshaped(tensor, spec, this.maxBatchSize > 0) : tensor;
      if (!spec.optional) required++;
    }
    if (required < this.requiredInputs.length) throw invalid(this.missingInputs(Object.keys(inputs)));
    const sequence = checkSequenceOptions(request.sequence);
    this.checkSequenceRequest?.(sequence, batchSize === -1 ? 1 : batchSize);
    return {
      id: request.id ?? generatedRequestId(),
      inputs,
      // As in Triton, no requested outputs (absent or empty) means all of them.
      requestedOutputs: request.outputs?.length ? this.checkOutputs(request.outputs) : this.allOutputs,
      batchSize: batchSize === -1 ? 1 : batchSize,
      parameters: request.parameters ?? NO_PARAMETERS,
      priority: nonNegativeInteger('priority', request.priority) ?? 0,
      timeoutMicroseconds: nonNegativeInteger('timeoutMicroseconds', request.timeoutMicroseconds) ?? 0,
      signal: request.signal,
      trace: checkCallerTrace(request.trace),
      sequence,
    };
  }

  /** Triton's text (core's infer_request.cc ValidateRequestInputs), clients match on it. */
  private missingInputs(given: readonly string[]): string {
    const total = this.inputs.size;
    const required = this.requiredInputs.length;
    const expected = total === required ? `expected ${total} inputs` : `expected number of inputs between ${required} and ${total}`;
    const missing = this.requiredInputs.filter((name) => !given.includes(name));
    const list = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(',')}]`;
    return `${expected} but got ${given.length} inputs for model '${this.config.name}'. Got input(s) ${list(given)}, but missing required input(s) ${list(missing)}. Please provide all required input(s).`;
  }

  /** Returns the input's batch size (1 for a model without batching). */
  private checkShape(name: string, shape: readonly number[], spec: InputSpec): number {
    if (!shapeMatches(shape, spec.expectedShape)) {
      throw invalid(`input '${name}' has shape ${shapeToString(shape)}, the model expects ${shapeToString(spec.expectedShape)}`);
    }
    if (this.maxBatchSize === 0) return 1;
    const batch = shape[0]!;
    if (batch < 1 || batch > this.maxBatchSize) {
      throw invalid(`input '${name}' has batch size ${batch}, the model accepts 1 to ${this.maxBatchSize}`);
    }
    return batch;
  }

  private checkOutputs(requested: readonly string[]): readonly string[] {
    if (!Array.isArray(requested)) throw invalid('`outputs` must be an array of output names');
    for (let i = 0; i < requested.length; i++) {
      const name = requested[i]!;
      if (!this.outputs.has(name)) {
        throw invalid(`unknown output '${name}' requested (the model's outputs are ${quoteList(this.allOutputs)})`);
      }
      // Triton's text. A request names a few outputs: a scan, not a Set made for every request.
      if (requested.indexOf(name) !== i) throw invalid(`output '${name}' already exists in request`);
    }
    return requested;
  }
}

/**
 * The version a request asks for, checked before the version is looked up: a version
 * that is not a non-negative integer (the string '2', say) is the caller's mistake
 * (INVALID_ARG), not a version that is missing (NOT_FOUND).
 */
export function requestedVersion(modelName: string, request: InferRequest): number | undefined {
  try {
    return nonNegativeInteger('modelVersion', (request as Partial<InferRequest> | undefined)?.modelVersion);
  } catch (error) {
    throw refusal(modelName, request, (error as Error).message);
  }
}

/** `model 'm': ...`, or `model 'm' request 'r1': ...` when the caller gave the request an id. */
function refusal(modelName: string, request: InferRequest, detail: string): InferenceError {
  const id = (request as Partial<InferRequest> | undefined)?.id;
  const named = typeof id === 'string' ? ` request '${id}'` : '';
  return new InferenceError('INVALID_ARG', `model '${modelName}'${named}: ${detail}`);
}

function invalid(detail: string): InferenceError {
  return new InferenceError('INVALID_ARG', detail);
}

/** Triton's priority, timeout and version are unsigned integers; undefined stays undefined. */
function nonNegativeInteger(field: string, value: unknown): number | undefined {
  if (value === undefined || isNonNegativeInteger(value)) return value;
  throw invalid(`\`${field}\` must be a non-negative integer, got ${describeValue(value)}`);
}

function isNonNegativeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
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
