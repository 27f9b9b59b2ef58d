import type { Buffer } from 'node:buffer';
import { DATA_TYPES, isDataType, tensorFromBytes, type CallerTrace, type DataType, type InferRequest, type TensorInput } from '@tritium/core';
import { BytesElementBudget } from '../bytes-elements.js';
import { EMPTY_FINAL_RESPONSE, parameterOptions, reservedParameter } from '../request-parameters.js';
import { outputRequest, type OutputRequest } from '../requested-outputs.js';
import { sharedMemoryInput } from '../shared-memory/shared-memory-tensors.js';
import type { RequestRegions } from '../shared-memory/request-regions.js';
import { describe, invalid, isJsonObject } from '../wire-values.js';
import { BinaryInputs } from './binary-inputs.js';
import { FlatTensorValues } from './flat-tensor-values.js';
import { checkJsonDataSize, inputShape } from './input-shape.js';
import { jsonTensorData } from './json-tensor-data.js';
import { optionalBoolean, optionalObject, optionalString, optionalUint64, parseJsonObject, requiredField, type JsonObject } from './request-json.js';

/** The request parameter of the binary data extension: HTTP's own, read here and not passed to the model. */
const BINARY_DATA_OUTPUT = 'binary_data_output';

/** An inference request read off the wire, with how the client wants each output back. */
export interface HttpInferRequest {
  readonly request: InferRequest;
  /** The outputs the client named, with their classification and shared-memory asks; undefined when it named none. */
  readonly outputs: OutputRequest[] | undefined;
  /**
   * Which outputs come back as binary data, as Triton decides: of the outputs the client
   * named, those whose own `binary_data` is true (the others are JSON); when it named
   * none, all of them or none, as `binary_data_output` says.
   */
  readonly binaryOutputs: ReadonlySet<string> | boolean;
}

export function isBinaryOutput({ binaryOutputs }: HttpInferRequest, name: string): boolean {
  return typeof binaryOutputs === 'boolean' ? binaryOutputs : binaryOutputs.has(name);
}

/** In an inference request, tensor data is an input's `data`, however deeply nested. */
const INFER_TENSOR_DATA = { isTensorData: (key: string) => key === 'data' };

/**
 * Reads a KServe v2 inference request: the JSON (the first `headerLength` bytes of the
 * body) and any binary inputs after it, in the order the JSON lists them. A JSON input
 * may be no larger than `inputByteLimit` (--http-max-input-size) once converted.
 */
export async function parseInferRequest(
  body: Buffer,
  headerLength: number,
  hasHeaderLength: boolean,
  modelVersion: number | undefined,
  regions: RequestRegions,
  inputByteLimit: number,
  trace: CallerTrace | undefined,
): Promise<HttpInferRequest> {
  const json = await parseJsonObject(body.subarray(0, headerLength), 'inference request', INFER_TENSOR_DATA);
  const parameters = optionalObject(json, 'parameters', 'the inference request');
  // Triton's /infer takes no triton_ key at all: an answer here is one response, never a stream to end.
  if (parameters !== undefined && Object.hasOwn(parameters, EMPTY_FINAL_RESPONSE)) throw reservedParameter(EMPTY_FINAL_RESPONSE);
  const binary = new BinaryInputs(body, headerLength, hasHeaderLength);
  const inputs = await readInputs(json.inputs, binary, regions, inputByteLimit);
  binary.finish();
  const { outputs, binaryOutputs } = readOutputs(json.outputs, regions);
  const request: InferRequest = {
    inputs,
    outputs: outputs?.map((output) => output.name),
    id: optionalString(json, 'id', 'the inference request'),
    modelVersion,
    trace,
    ...parameterOptions(parameters, [BINARY_DATA_OUTPUT]),
  };
  const binaryByDefault = optionalBoolean(parameters, BINARY_DATA_OUTPUT, 'the request parameters') ?? false;
  return { request, outputs, binaryOutputs: binaryOutputs ?? binaryByDefault };
}

async function readInputs(value: unknown, binary: BinaryInputs, regions: RequestRegions, inputByteLimit: number): Promise<Record<string, TensorInput>> {
  if (!Array.isArray(value)) throw invalid(`the inference request needs an 'inputs' array, got ${describe(value)}`);
  // No prototype: an input named `__proto__` is an input like any other.
  const inputs: Record<string, TensorInput> = Object.create(null);
  const bytesElements = new BytesElementBudget();
  for (const [index, input] of value.entries()) {
    if (!isJsonObject(input)) throw invalid(`input ${index} must be an object, got ${describe(input)}`);
    const name = requiredField(optionalString(input, 'name', `input ${index}`), 'name', `input ${index}`);
    if (Object.hasOwn(inputs, name)) throw invalid(`input '${name}' is given more than once`);
    inputs[name] = await readInput(name, input, binary, regions, bytesElements, inputByteLimit);
  }
  return inputs;
}

/** One input, from exactly one of: JSON `data`, binary data after the JSON, or a shared-memory region. */
async function readInput(
  name: string,
  input: JsonObject,
  binary: BinaryInputs,
  regions: RequestRegions,
  bytesElements: BytesElementBudget,
  inputByteLimit: number,
): Promise<TensorInput> {
  const where = `input '${name}'`;
  const datatype = dataTypeOf(where, requiredField(optionalString(input, 'datatype', where), 'datatype', where));
  const { shape, elementCount } = inputShape(name, input.shape);
  bytesElements.take(name, datatype, shape);
  const parameters = optionalObject(input, 'parameters', where);
  const binarySize = optionalUint64(parameters, 'binary_data_size', `${where} parameters`);
  const fromData = input.data !== undefined;
  const fromBinary = binarySize !== undefined;
  const fromSharedMemory = parameters?.shared_memory_region !== undefined;
  if (Number(fromData) + Number(fromBinary) + Number(fromSharedMemory) !== 1) {
    const given = [fromData && "'data'", fromBinary && "'binary_data_size'", fromSharedMemory && "'shared_memory_region'"].filter(Boolean);
    throw invalid(
      `${where} must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But ${given.length ? `set ${given.join(' ')}` : 'no field is set'}`,
    );
  }
  if (fromBinary) return tensorFromBytes(name, datatype, shape, binary.next(name, binarySize), 'view');
  const fromRegion = sharedMemoryInput(regions, name, datatype, shape, parameters);
  if (fromRegion) return fromRegion;
  if (input.data instanceof FlatTensorValues) checkJsonDataSize(name, datatype, elementCount, input.data.length, inputByteLimit);
  return { datatype, shape, data: await jsonTensorData(where, datatype, input.data) };
}

function readOutputs(value: unknown, regions: RequestRegions): { outputs: OutputRequest[] | undefined; binaryOutputs: Set<string> | undefined } {
  if (value === undefined) return { outputs: undefined, binaryOutputs: undefined };
  if (!Array.isArray(value)) throw invalid(`'outputs' must be an array, got ${describe(value)}`);
  const binaryOutputs = new Set<string>();
  const outputs = value.map((output: unknown, index) => {
    if (!isJsonObject(output)) throw invalid(`output ${index} must be an object, got ${describe(output)}`);
    const name = requiredField(optionalString(output, 'name', `output ${index}`), 'name', `output ${index}`);
    const parameters = optionalObject(output, 'parameters', `output '${name}'`);
    const asBinary = optionalBoolean(parameters, 'binary_data', `output '${name}' parameters`);
    if (asBinary) binaryOutputs.add(name);
    if (asBinary && parameters?.shared_memory_region !== undefined) {
      throw invalid(`output '${name}' can't set both 'shared_memory_region' and 'binary_data'`);
    }
    return outputRequest(name, parameters, regions);
  });
  return { outputs, binaryOutputs };
}

export function dataTypeOf(where: string, datatype: string): DataType {
  if (isDataType(datatype)) return datatype;
  throw invalid(`${where}: unknown datatype '${datatype}', expected one of ${DATA_TYPES.join(', ')}`);
}
