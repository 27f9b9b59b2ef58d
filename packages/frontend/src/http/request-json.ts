import { asCount, asUint64, describe, invalid, isJsonObject } from '../wire-values.js';
import { JsonParseError, parseJson, type JsonParseOptions } from './json-parser.js';

/** A JSON object as parsed: fields not yet checked. */
export type JsonObject = Record<string, unknown>;

/**
 * Parses a request's JSON, which must be an object; `what` names it in errors. Large
 * bodies are parsed a slice at a time, letting other requests run in between (see parseJson).
 */
export async function parseJsonObject(bytes: Uint8Array, what: string, options?: JsonParseOptions): Promise<JsonObject> {
  let value: unknown;
  try {
    value = await parseJson(bytes, options);
  } catch (error) {
    if (error instanceof JsonParseError) throw invalid(`failed to parse the ${what} JSON: ${error.message}`);
    throw error;
  }
  if (!isJsonObject(value)) throw invalid(`the ${what} JSON must be an object, got ${describe(value)}`);
  return value;
}

/*
 * Typed reads of one field, each failing with a message that names the field and what
 * it holds. `where` says whose field it is, e.g. "input 'INPUT0'".
 */

export function optionalBoolean(object: JsonObject | undefined, field: string, where: string): boolean | undefined {
  const value = object?.[field];
  if (value === undefined || typeof value === 'boolean') return value;
  throw wrongType(where, field, 'a boolean', value);
}

export function optionalString(object: JsonObject | undefined, field: string, where: string): string | undefined {
  const value = object?.[field];
  if (value === undefined || typeof value === 'string') return value;
  throw wrongType(where, field, 'a string', value);
}

export function optionalObject(object: JsonObject | undefined, field: string, where: string): JsonObject | undefined {
  const value = object?.[field];
  if (value === undefined || isJsonObject(value)) return value;
  throw wrongType(where, field, 'an object', value);
}

export function optionalCount(object: JsonObject | undefined, field: string, where: string): number | undefined {
  const value = object?.[field];
  if (value === undefined || asCount(value) !== undefined) return value as number | undefined;
  throw wrongType(where, field, 'a non-negative integer', value);
}

export function requiredField<T>(value: T | undefined, field: string, where: string): T {
  if (value === undefined) throw invalid(`${where} has no '${field}' field`);
  return value;
}

/** A uint64 field (Triton's binary_data_size): a number, or a bigint beyond 2^53. */
export function optionalUint64(object: JsonObject | undefined, field: string, where: string): number | bigint | undefined {
  const value = object?.[field];
  if (value === undefined) return undefined;
  const uint64 = asUint64(value);
  if (uint64 === undefined) throw wrongType(where, field, 'a non-negative integer of at most 2^64-1', value);
  return uint64;
}

function wrongType(where: string, field: string, expected: string, value: unknown) {
  return invalid(`${where}: '${field}' must be ${expected}, got ${describe(value)}`);
}
