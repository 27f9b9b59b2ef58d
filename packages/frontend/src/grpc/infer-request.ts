import { isDataType, tensorFromBytes, type CallerTrace, type DataType, type InferenceError, type InferRequest, type TensorInput } from '@tritium/core';
import { BytesElementBudget } from '../bytes-elements.js';
import { needsDelivery, outputRequest, type OutputRequest } from '../requested-outputs.js';
import { sharedMemoryInput } from '../shared-memory/shared-memory-tensors.js';
import type { RequestRegions } from '../shared-memory/request-regions.js';
import { modelVersion } from '../model-version.js';
import { asCount, invalid } from '../wire-values.js';
import { tensorFromContents, type EncodedTensorContents } from './tensor-contents.js';
import { requestParameters } from './triton-parameters.js';
import { parameterValues, type WireParameter } from './wire-parameters.js';

type WireParameterMap = Readonly<Record<string, WireParameter>>;

/** ModelInferRequest as proto-definitions decodes it (absent scalars are undefined; `contents` only when sent, still encoded). */
export interface InferRequestMessage {
  readonly model_name?: string;
  readonly model_version?: string;
  readonly id?: string;
  readonly parameters: WireParameterMap;
  readonly inputs: readonly {
    readonly name?: string;
    readonly datatype?: string;
    readonly shape: readonly string[];
    readonly parameters: WireParameterMap;
    readonly contents?: EncodedTensorContents;
  }[];
  readonly outputs: readonly { readonly name?: string; readonly parameters: WireParameterMap }[];
  readonly raw_input_contents: readonly Uint8Array[];
  /** Why the request was refused before it was decoded (see request-entries.ts); then only model_name, model_version and id are read. */
  readonly refusal?: InferenceError;
  /** performance.now() when its bytes were in and decoding began (GRPC_WAITREAD_START), set only while requests are traced. */
  readAt?: number;
}

/** A ModelInferRequest as the server takes it. */
export interface DecodedInferRequest {
  readonly model: string;
  /** The request's own id, '' when it gave none: every answer to the request carries it, as in Triton. */
  readonly id: string;
  readonly request: InferRequest;
  /** The requested outputs when one asks for classification or shared memory (for deliverOutputs); else undefined, and every output comes as the model gave it. */
  readonly outputs: OutputRequest[] | undefined;
  /** Triton's `triton_enable_empty_final_response`: a decoupled stream's end is reported by a response of its own. */
  readonly emptyFinalResponse: boolean;
  /** The shared-memory regions the request names, held until the caller releases them once it is answered. */
  readonly regions: RequestRegions;
}

/** `trace`: the request's CallerTrace while requests are traced (grpcTrace), carried to the server. */
export function decodeInferRequest(message: InferRequestMessage, regions: RequestRegions, trace: CallerTrace | undefined): DecodedInferRequest {
  if (message.refusal) throw message.refusal;
  const { options, emptyFinalResponse } = requestParameters(message.parameters);
  const outputs = message.outputs.length > 0 ? message.outputs.map((o) => outputRequest(o.name ?? '', parameterValues(o.parameters, `output '${o.name}'`), regions)) : undefined;
  return {
    model: message.model_name ?? '',
    id: message.id ?? '',
    request: {
      inputs: decodeInputs(message, regions),
      outputs: outputs?.map((output) => output.name),
      modelVersion: modelVersion(message.model_version),
      id: message.id,
      trace,
      ...options,
    },
    outputs: needsDelivery(outputs) ? outputs : undefined,
    emptyFinalResponse,
    regions,
  };
}

/**
 * Each input's data, from the first source it names: a shared-memory region, typed
 * `contents`, or the next entry of `raw_input_contents` (kept as a view of the received
 * message). Raw entries must match the inputs that read them one for one, as in Triton.
 * Every input's name, datatype and shape is checked before any input's data is read.
 */
function decodeInputs(message: InferRequestMessage, regions: RequestRegions): Record<string, TensorInput> {
  const model = message.model_name ?? '';
  const raw = message.raw_input_contents;
  const inputs: Record<string, TensorInput> = Object.create(null);
  const specs = inputSpecs(message);
  let nextRaw = 0;
  for (const { input, name, datatype, shape } of specs) {
    const shared = sharedMemoryInput(regions, name, datatype, shape, parameterValues(input.parameters, `input '${name}'`));
    if (shared) {
      if (input.contents) throw invalid(`input '${name}': 'contents' cannot be given with shared memory`);
      inputs[name] = shared;
    } else if (input.contents) {
      if (raw.length > 0) throw invalid(`contents field must not be specified when using raw_input_contents for '${name}' for model '${model}'`);
      inputs[name] = tensorFromContents(model, name, datatype, shape, input.contents);
    } else {
      const bytes = raw[nextRaw++];
      if (!bytes) throw invalid(`input '${name}': no data (no contents, no shared memory, and no raw_input_contents entry left for it)`);
      inputs[name] = tensorFromBytes(name, datatype, shape, bytes, 'view');
    }
  }
  if (nextRaw < raw.length) {
    throw invalid(`raw_input_contents holds ${raw.length} entries, but only ${nextRaw} of the request's inputs read raw data`);
  }
  return inputs;
}

/** Each input with its name (once each), datatype and shape, checked; BYTES elements counted against the request's budget. */
function inputSpecs(message: InferRequestMessage): { input: InferRequestMessage['inputs'][number]; name: string; datatype: DataType; shape: number[] }[] {
  const names = new Set<string>();
  const bytesElements = new BytesElementBudget();
  return message.inputs.map((input) => {
    const name = input.name ?? '';
    if (names.has(name)) throw invalid(`input '${name}' appears more than once in the request`);
    names.add(name);
    const datatype = input.datatype ?? '';
    if (!isDataType(datatype)) throw invalid(`input '${name}': unknown datatype '${datatype}'`);
    const shape = shapeOf(name, input.shape);
    bytesElements.take(name, datatype, shape);
    return { input, name, datatype, shape };
  });
}

/** An input's shape, its int64 dimensions (decimal strings) as numbers: each must be a count, so that no product of them runs negative or inexact. */
function shapeOf(name: string, dims: readonly string[]): number[] {
  const shape = dims.map(Number);
  if (shape.every((dim) => asCount(dim) !== undefined)) return shape;
  throw invalid(`input '${name}': shape [${dims.join(',')}] must hold non-negative integers`);
}
