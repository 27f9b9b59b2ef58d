import { InferenceError } from '../errors.js';
import { modelConfigDescriptor, type FieldDescriptor, type MessageDescriptor, type ScalarType, type ValueDescriptor } from './descriptor.js';
import { INTEGER_RANGES, type ProtoIntegerType } from './proto-integers.js';
import type { ModelConfig } from './schema.js';

/*
 * The reverse of json.ts: a ModelConfig in protobuf's JSON form, which is what Triton's
 * load API takes as its `config` parameter (HTTP and gRPC alike), read as Triton's parser
 * reads it: fields by their proto or lowerCamelCase names, integers as numbers or decimal
 * strings (so the model-config endpoint's own output loads back), enums by name or
 * number, null for a default. Each value is checked against its field in the schema's
 * descriptors, naming the field at fault; unknown fields are refused, as Triton's parser
 * refuses them, rather than dropped. Errors are INVALID_ARG and name the load parameter.
 */

/** The config a load's `config` parameter gives: proto field names, enums by name, every number a JS number. */
export function modelConfigFromJson(text: string): ModelConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalid(`load parameter 'config' is not JSON: ${(error as Error).message}`);
  }
  return message(modelConfigDescriptor, json, 'config') as ModelConfig;
}

/** A message's JSON object with every key spelled as its proto field name, nulls left out, each value read. */
function message(descriptor: MessageDescriptor, json: unknown, path: string): Record<string, unknown> {
  if (!isJsonObject(json)) throw misfit(path, 'a JSON object', json);
  const read: Record<string, unknown> = {};
  // A oneof is known by its members (the descriptor's group), and mapped to the member set.
  const chosen = new Map<readonly string[], string>();
  for (const [key, value] of Object.entries(json)) {
    const field = fieldNamed(descriptor, key);
    if (!field) throw invalid(`load parameter 'config': ${path} has no field '${key}'`);
    const at = `${path}.${field.name}`;
    if (Object.hasOwn(read, field.name)) throw invalid(`load parameter 'config': ${at} is given twice`);
    if (value === null) continue;
    if (field.oneof) {
      const other = chosen.get(field.oneof);
      if (other !== undefined) throw invalid(`load parameter 'config': ${path} sets both '${other}' and '${field.name}', which are one choice (${field.oneof.join(', ')})`);
      chosen.set(field.oneof, field.name);
    }
    read[field.name] = fieldValue(field, value, at);
  }
  return read;
}

/** The field a JSON key names: its proto name, or protobuf's lowerCamelCase form of it (a Map's own keys only, never Object's). */
function fieldNamed(descriptor: MessageDescriptor, key: string): FieldDescriptor | undefined {
  return descriptor.fields.get(key) ?? [...descriptor.fields.values()].find((field) => lowerCamelCase(field.name) === key);
}

/** As protobuf(js) spells a field's JSON name: each `_x` after the first character becomes `X`. */
function lowerCamelCase(name: string): string {
  return name.slice(0, 1) + name.slice(1).replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

function fieldValue(field: FieldDescriptor, json: unknown, at: string): unknown {
  if (field.map) {
    if (!isJsonObject(json)) throw misfit(at, 'a JSON object (a map)', json);
    const key = field.map.key.type === 'string' ? undefined : SCALARS[field.map.key.type];
    return Object.fromEntries(
      Object.entries(json).map(([name, element]) => {
        // JSON keys are strings; a map with integer keys takes decimal ones, and keeps them as given.
        if (key && key.read(name) === undefined) throw misfit(`${at} key`, key.expected, name);
        return [name, single(field.value, element, `${at}["${name}"]`)];
      }),
    );
  }
  if (!field.repeated) return single(field.value, json, at);
  if (!Array.isArray(json)) throw misfit(at, 'an array', json);
  return json.map((element, i) => single(field.value, element, `${at}[${i}]`));
}

/** One value of a field (an element, for a repeated one): a message, an enum value (by name) or a scalar. */
function single(value: ValueDescriptor, json: unknown, at: string): unknown {
  if (value.kind === 'message') return message(value.message, json, at);
  if (value.kind === 'enum') {
    // The descriptor lists an enum's names in number order from 0, so a number is an index.
    const name = typeof json === 'string' ? json : Number.isInteger(json) ? value.values[json as number] : undefined;
    if (name !== undefined && value.values.includes(name)) return name;
    throw misfit(at, `one of ${value.values.join(', ')}`, json);
  }
  const scalar = SCALARS[value.type];
  const read = scalar.read(json);
  if (read === undefined) throw misfit(at, scalar.expected, json);
  return read;
}

interface Scalar {
  readonly expected: string;
  /** The JS value of a JSON one that fits the type; undefined for one that does not. */
  read(json: unknown): unknown;
}

const DECIMAL_INTEGER = /^-?\d+$/;
const DECIMAL_NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

function integer(type: ProtoIntegerType): Scalar {
  const [min, max] = INTEGER_RANGES[type];
  return {
    expected: `an integer from ${min} to ${max} (a number or a decimal string)`,
    read: (json) => {
      // A JSON number is a double by now, so its bounds are the doubles nearest the type's, as
      // in the schema: the endpoint writes a uint64 maximum held as 2^64 as that number.
      if (typeof json === 'number') return Number.isInteger(json) && json >= Number(min) && json <= Number(max) ? json : undefined;
      if (typeof json !== 'string' || !DECIMAL_INTEGER.test(json)) return undefined;
      const exact = BigInt(json);
      return exact >= min && exact <= max ? Number(exact) : undefined;
    },
  };
}

const floating: Scalar = {
  expected: 'a number (or "NaN", "Infinity", "-Infinity")',
  read: (json) => (typeof json === 'number' || (typeof json === 'string' && (DECIMAL_NUMBER.test(json) || NON_FINITE.has(json))) ? Number(json) : undefined),
};

/** What protobuf's JSON form takes for each scalar type of the schema. */
const SCALARS: Readonly<Record<ScalarType, Scalar>> = {
  int32: integer('int32'),
  uint32: integer('uint32'),
  int64: integer('int64'),
  uint64: integer('uint64'),
  float: floating,
  double: floating,
  bool: { expected: 'a boolean', read: (json) => (typeof json === 'boolean' ? json : undefined) },
  string: { expected: 'a string', read: (json) => (typeof json === 'string' ? json : undefined) },
};

function isJsonObject(json: unknown): json is Record<string, unknown> {
  return typeof json === 'object' && json !== null && !Array.isArray(json);
}

/** Longer strings are cut short in messages: a client gets its mistake named, not its text back. */
const SHOWN_LENGTH = 100;

/** A JSON value as a message shows it: never an array's or object's insides, which may nest deeper than a stack. */
function shown(json: unknown): string {
  if (json === null) return 'null';
  if (typeof json === 'object') return Array.isArray(json) ? 'an array' : 'an object';
  if (typeof json !== 'string') return `${typeof json} ${String(json)}`;
  return `the string ${JSON.stringify(json.length > SHOWN_LENGTH ? `${json.slice(0, SHOWN_LENGTH)}…` : json)}`;
}

function invalid(message: string): InferenceError {
  return new InferenceError('INVALID_ARG', message);
}

function misfit(at: string, expected: string, json: unknown): InferenceError {
  return invalid(`load parameter 'config' does not fit a ModelConfig: ${at} must be ${expected}, got ${shown(json)}`);
}
