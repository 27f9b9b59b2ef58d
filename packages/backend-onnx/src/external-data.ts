import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InferenceError, pathInside } from '@tritium/core/backend';
import { protoFields } from './protobuf.js';

/** An external data file of a model, for runtimes that cannot read files by themselves (wasm). */
export interface ExternalDataFile {
  /** The location as the model names it, relative to the model file. */
  readonly path: string;
  readonly data: Uint8Array;
}

/**
 * Reads the external data files a serialized model refers to. Locations must stay
 * inside the model file's directory, links resolved. Bytes that are not a valid model give no files:
 * onnxruntime then refuses them with its own reason.
 */
export async function readExternalData(modelName: string, modelFile: string, model: Uint8Array): Promise<ExternalDataFile[]> {
  let locations: string[];
  try {
    locations = externalDataLocations(model);
  } catch {
    return [];
  }
  const directory = dirname(modelFile);
  const files: ExternalDataFile[] = [];
  for (const location of locations) {
    const path = await pathInside(directory, location, `model '${modelName}': external data location`);
    try {
      files.push({ path: location, data: await readFile(path) });
    } catch (error) {
      throw InferenceError.from(error, 'UNAVAILABLE', `model '${modelName}': cannot read external data '${location}' of '${modelFile}'`);
    }
  }
  return files;
}

// TensorProto fields (onnx.proto).
const EXTERNAL = 1; // TensorProto.DataLocation.EXTERNAL
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const ENTRY_KEY = 1;
const ENTRY_VALUE = 2;

/**
 * The distinct external data locations of a serialized ONNX model, in order: the
 * `location` entry of every tensor stored outside the file, in graph initializers,
 * node attributes (Constant values) and subgraphs (If/Loop/Scan bodies), and in the
 * model's functions. Throws when the bytes are not a protobuf message.
 */
export function externalDataLocations(model: Uint8Array): string[] {
  const found = new Set<string>();
  const text = new TextDecoder();

  const tensor = (bytes: Uint8Array): void => {
    let external = false;
    let location: string | undefined;
    for (const field of protoFields(bytes)) {
      if (field.number === TENSOR_DATA_LOCATION && field.wireType === 0) external = field.value === EXTERNAL;
      if (field.number === TENSOR_EXTERNAL_DATA && field.wireType === 2) {
        const entry = new Map<number, string>();
        for (const f of protoFields(field.bytes)) if (f.wireType === 2) entry.set(f.number, text.decode(f.bytes));
        if (entry.get(ENTRY_KEY) === 'location') location = entry.get(ENTRY_VALUE);
      }
    }
    if (external && location) found.add(location);
  };
  // Field numbers of onnx.proto, named in the comments.
  const sparseTensor = (bytes: Uint8Array) => visit(bytes, { 1: tensor, 2: tensor }); // values, indices
  // t, g, tensors, graphs, sparse_tensor, sparse_tensors
  const attribute = (bytes: Uint8Array) => visit(bytes, { 5: tensor, 6: graph, 10: tensor, 11: graph, 22: sparseTensor, 23: sparseTensor });
  const node = (bytes: Uint8Array) => visit(bytes, { 5: attribute }); // attribute
  const graph = (bytes: Uint8Array): void => visit(bytes, { 1: node, 5: tensor, 15: sparseTensor }); // node, initializer, sparse_initializer
  const fn = (bytes: Uint8Array) => visit(bytes, { 7: node }); // FunctionProto.node

  visit(model, { 7: graph, 25: fn }); // ModelProto.graph, ModelProto.functions
  return [...found];
}

/** Calls the visitor of each message field (by field number) that has one. */
function visit(message: Uint8Array, visitors: Readonly<Record<number, (bytes: Uint8Array) => void>>): void {
  for (const field of protoFields(message)) {
    if (field.wireType === 2) visitors[field.number]?.(field.bytes);
  }
}
