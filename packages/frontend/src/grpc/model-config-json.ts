import { InferenceError, type ModelConfig } from '@tritium/core';
import protobuf from 'protobufjs';
import { protoDirectory } from './proto-definitions.js';

let modelConfigType: protobuf.Type | undefined;

/**
 * Triton's `config` load parameter: a ModelConfig in protobuf's JSON form, as Triton
 * reads it: fields by their proto or lowerCamelCase names, 64-bit integers as numbers or
 * strings, enums by name or number, null for a default. Unknown fields are refused, as
 * Triton's JSON parser refuses them, rather than dropped.
 */
export function modelConfigFromJson(text: string): ModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InferenceError('INVALID_ARG', `load parameter 'config' is not JSON: ${(error as Error).message}`);
  }
  modelConfigType ??= new protobuf.Root().loadSync(`${protoDirectory()}model_config.proto`, { keepCase: true }).lookupType('inference.ModelConfig');
  const canonical = protoFieldNames(modelConfigType, json, 'config');
  try {
    return modelConfigType.toObject(modelConfigType.fromObject(canonical), { longs: Number, enums: String }) as ModelConfig;
  } catch (error) {
    throw new InferenceError('INVALID_ARG', `load parameter 'config' does not fit a ModelConfig: ${(error as Error).message}`);
  }
}

/** The JSON object with every key spelled as its proto field name, nulls left out, checked field by field. */
function protoFieldNames(type: protobuf.Type, json: unknown, path: string): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InferenceError('INVALID_ARG', `load parameter 'config': ${path} must be a JSON object`);
  }
  const canonical: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    const field = type.fields[key] ?? type.fieldsArray.find((f) => protobuf.util.camelCase(f.name) === key);
    if (!field) throw new InferenceError('INVALID_ARG', `load parameter 'config': ${path} has no field '${key}'`);
    if (value === null) continue;
    const inner = field.resolve().resolvedType;
    const at = `${path}.${field.name}`;
    const nested = (element: unknown, where: string) => (inner instanceof protobuf.Type ? protoFieldNames(inner, element, where) : element);
    if (field.map) canonical[field.name] = mapValues(value, at, nested);
    else if (field.repeated && Array.isArray(value)) canonical[field.name] = value.map((element, i) => nested(element, `${at}[${i}]`));
    else canonical[field.name] = nested(value, at);
  }
  return canonical;
}

function mapValues(value: unknown, path: string, convert: (element: unknown, where: string) => unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InferenceError('INVALID_ARG', `load parameter 'config': ${path} must be a JSON object (a map)`);
  }
  return Object.fromEntries(Object.entries(value).map(([key, element]) => [key, convert(element, `${path}["${key}"]`)]));
}
