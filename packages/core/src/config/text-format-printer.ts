import { InferenceError } from '../errors.js';
import { formatPath, modelConfigDescriptor, type FieldDescriptor, type MessageDescriptor, type ValueDescriptor } from './descriptor.js';
import { integerText } from './proto-integers.js';
import type { ModelConfig } from './schema.js';

/*
 * Prints a config object as protobuf text format, in proto declaration order, so that
 * parsing the output gives the same object back: present fields are printed even when
 * they hold defaults, and empty lists/maps print as `field: []`.
 */

const INDENT = '  ';

/** A C-style string literal; non-ASCII characters stay as they are (the file is UTF-8). */
function quote(text: string): string {
  const escaped = text.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`;
    }
  });
  return `"${escaped}"`;
}

function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return Object.is(value, -0) ? '-0' : String(value);
}

function formatScalar(value: Exclude<ValueDescriptor, { kind: 'message' }>, data: unknown, path: readonly PropertyKey[]): string {
  const wrong = (expected: string): never => {
    throw new InferenceError('INVALID_ARG', `cannot print '${formatPath(path)}': ${JSON.stringify(data)} is not ${expected}`);
  };
  if (value.kind === 'enum') return typeof data === 'string' && value.values.includes(data) ? data : wrong(`one of ${value.values.join(', ')}`);
  switch (value.type) {
    case 'string':
      return typeof data === 'string' ? quote(data) : wrong('a string');
    case 'bool':
      return typeof data === 'boolean' ? String(data) : wrong('a boolean');
    case 'float':
    case 'double':
      return typeof data === 'number' ? formatFloat(data) : wrong('a number');
    default:
      return Number.isInteger(data) ? integerText(value.type, data as number) : wrong(`an integer (${value.type})`);
  }
}

function printValue(name: string, value: ValueDescriptor, data: unknown, indent: string, path: readonly PropertyKey[]): string[] {
  if (value.kind !== 'message') return [`${indent}${name}: ${formatScalar(value, data, path)}`];
  const body = printFields(data, value.message, indent + INDENT, path);
  return body.length ? [`${indent}${name} {`, ...body, `${indent}}`] : [`${indent}${name} {}`];
}

function printField(field: FieldDescriptor, data: unknown, indent: string, path: readonly PropertyKey[]): string[] {
  const { name, value, map } = field;
  if (map) {
    const entries = Object.entries(data as Record<string, unknown>);
    if (!entries.length) return [`${indent}${name}: []`];
    return entries.flatMap(([key, entry]) => [
      `${indent}${name} {`,
      // A uint64 key is held as its digits; print it as the number it is.
      `${indent}${INDENT}key: ${map.key.type === 'string' ? quote(key) : formatScalar(map.key, Number(key), [...path, key])}`,
      ...printValue('value', value, entry, indent + INDENT, [...path, key]),
      `${indent}}`,
    ]);
  }
  if (!field.repeated) return printValue(name, value, data, indent, path);
  if (!Array.isArray(data)) {
    throw new InferenceError('INVALID_ARG', `cannot print '${formatPath(path)}': a repeated field needs an array`);
  }
  if (value.kind === 'message') {
    return data.length ? data.flatMap((element, i) => printValue(name, value, element, indent, [...path, i])) : [`${indent}${name}: []`];
  }
  return [`${indent}${name}: [${data.map((element, i) => formatScalar(value, element, [...path, i])).join(', ')}]`];
}

function printFields(data: unknown, descriptor: MessageDescriptor, indent: string, path: readonly PropertyKey[]): string[] {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InferenceError('INVALID_ARG', `cannot print '${formatPath(path) || 'config'}': a message needs an object`);
  }
  const record = data as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => record[key] !== undefined && !descriptor.fields.has(key));
  if (unknown !== undefined) throw new InferenceError('INVALID_ARG', `cannot print unknown field '${formatPath([...path, unknown])}'`);
  return [...descriptor.fields.values()].flatMap((field) =>
    record[field.name] === undefined ? [] : printField(field, record[field.name], indent, [...path, field.name]),
  );
}

/** Prints a message object as protobuf text format. */
function printTextFormat(data: Record<string, unknown>, descriptor: MessageDescriptor): string {
  return printFields(data, descriptor, '', []).map((line) => `${line}\n`).join('');
}

/** Prints a model configuration as config.pbtxt text that parses back to the same object. */
export function printModelConfig(config: ModelConfig): string {
  return printTextFormat(config as Record<string, unknown>, modelConfigDescriptor);
}
