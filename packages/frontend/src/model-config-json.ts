import type { ModelConfig } from '@tritium/core';
import protobuf from 'protobufjs';
import { protoDirectory } from './proto-directory.js';
import { describe, invalid, isJsonObject } from './wire-values.js';

let modelConfigType: protobuf.Type | undefined;

/**
 * Triton's `config` load parameter (HTTP and gRPC alike): a ModelConfig in protobuf's
 * JSON form, read as Triton's parser reads it: fields by their proto or lowerCamelCase
 * names, integers as numbers or decimal strings (so the model-config endpoint's own
 * output loads back), enums by name or number, null for a default. Each value is checked
 * against its field's type, naming the field at fault; unknown fields are refused, as
 * Triton's parser refuses them, rather than dropped.
 */
export function modelConfigFromJson(text: string): ModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`load parameter 'config' is not JSON: ${(error as Error).message}`);
  }
  modelConfigType ??= new protobuf.Root().loadSync(`${protoDirectory()}model_config.proto`, { keepCase: true }).lookupType('inference.ModelConfig');
  const checked = message(modelConfigType, json, 'config');
  return modelConfigType.toObject(modelConfigType.fromObject(checked), { longs: Number, enums: String }) as ModelConfig;
}

/** A message's JSON object with every key spelled as its proto field name, nulls left out, each value checked. */
function message(type: protobuf.Type, json: unknown, path: string): Record<string, unknown> {
  if (!isJsonObject(json)) throw misfit(path, 'a JSON object', json);
  const checked: Record<string, unknown> = {};
  const oneofs = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    const field = fieldNamed(type, key);
    if (!field) throw invalid(`load parameter 'config': ${path} has no field '${key}'`);
    const at = `${path}.${field.name}`;
    if (Object.hasOwn(checked, field.name)) throw invalid(`load parameter 'config': ${at} is given twice`);
    if (value === null) continue;
    const oneof = field.partOf?.name;
    if (oneof !== undefined) {
      const other = oneofs.get(oneof);
      if (other !== undefined) throw invalid(`load parameter 'config': ${path} sets both '${other}' and '${field.name}', which are one choice ('${oneof}')`);
      oneofs.set(oneof, field.name);
    }
    checked[field.name] = fieldValue(field.resolve(), value, at);
  }
  return checked;
}

/** The field a JSON key names: its proto name, or protobuf's lowerCamelCase form of it (own fields only, never Object's). */
function fieldNamed(type: protobuf.Type, key: string): protobuf.Field | undefined {
  return Object.hasOwn(type.fields, key) ? type.fields[key] : type.fieldsArray.find((f) => protobuf.util.camelCase(f.name) === key);
}

function fieldValue(field: protobuf.Field, value: unknown, at: string): unknown {
  if (field instanceof protobuf.MapField) {
    if (!isJsonObject(value)) throw misfit(at, 'a JSON object (a map)', value);
    return Object.fromEntries(
      Object.entries(value).map(([key, element]) => {
        // JSON keys are strings; a map with integer keys takes decimal ones.
        if (field.keyType !== 'string' && !fitsScalar(field.keyType, key)) throw misfit(`${at} key`, scalar(field.keyType)?.expected ?? field.keyType, key);
        return [key, single(field, element, `${at}["${key}"]`)];
      }),
    );
  }
  if (!field.repeated) return single(field, value, at);
  if (!Array.isArray(value)) throw misfit(at, 'an array', value);
  return value.map((element, i) => single(field, element, `${at}[${i}]`));
}

/** One value of a field (an element, for a repeated one): a message, an enum value or a scalar of the field's type. */
function single(field: protobuf.Field, value: unknown, at: string): unknown {
  const type = field.resolvedType;
  if (type instanceof protobuf.Type) return message(type, value, at);
  if (type instanceof protobuf.Enum) {
    const known = typeof value === 'string' ? Object.hasOwn(type.values, value) : Number.isInteger(value) && Object.hasOwn(type.valuesById, value as number);
    if (known) return value;
    throw misfit(at, `one of ${Object.keys(type.values).join(', ')}`, value);
  }
  if (fitsScalar(field.type, value)) return value;
  throw misfit(at, SCALARS[field.type]?.expected ?? field.type, value);
}

const DECIMAL_INTEGER = /^-?\d+$/;
const DECIMAL_NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const integers = (min: bigint, max: bigint) => ({
  expected: `an integer from ${min} to ${max} (a number or a decimal string)`,
  fits: (value: unknown) => {
    const exact = Number.isInteger(value) ? BigInt(value as number) : typeof value === 'string' && DECIMAL_INTEGER.test(value) ? BigInt(value) : undefined;
    return exact !== undefined && exact >= min && exact <= max;
  },
});
const int32 = integers(-(2n ** 31n), 2n ** 31n - 1n);
const uint32 = integers(0n, 2n ** 32n - 1n);
const int64 = integers(-(2n ** 63n), 2n ** 63n - 1n);
const uint64 = integers(0n, 2n ** 64n - 1n);
const floating = {
  expected: 'a number (or "NaN", "Infinity", "-Infinity")',
  fits: (value: unknown) => typeof value === 'number' || (typeof value === 'string' && (DECIMAL_NUMBER.test(value) || ['NaN', 'Infinity', '-Infinity'].includes(value))),
};

/** What protobuf's JSON form takes for each scalar type. */
const SCALARS: Readonly<Record<string, { readonly expected: string; fits(value: unknown): boolean }>> = {
  int32,
  sint32: int32,
  sfixed32: int32,
  uint32,
  fixed32: uint32,
  int64,
  sint64: int64,
  sfixed64: int64,
  uint64,
  fixed64: uint64,
  float: floating,
  double: floating,
  bool: { expected: 'a boolean', fits: (value) => typeof value === 'boolean' },
  string: { expected: 'a string', fits: (value) => typeof value === 'string' },
  bytes: { expected: 'base64 text', fits: (value) => typeof value === 'string' && BASE64.test(value) },
};

/** The scalar type named `type`; undefined for a message or enum type (and for `__proto__`). */
function scalar(type: string): (typeof SCALARS)[string] | undefined {
  return Object.hasOwn(SCALARS, type) ? SCALARS[type] : undefined;
}

function fitsScalar(type: string, value: unknown): boolean {
  return scalar(type)?.fits(value) ?? false;
}

function misfit(at: string, expected: string, value: unknown) {
  return invalid(`load parameter 'config' does not fit a ModelConfig: ${at} must be ${expected}, got ${describe(value)}`);
}
