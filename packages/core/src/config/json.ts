import { modelConfigDescriptor, type MessageDescriptor, type ValueDescriptor } from './descriptor.js';
import { integerText } from './proto-integers.js';
import type { ModelConfig } from './schema.js';

/*
 * The JSON form of a model configuration that Triton's model-config endpoint returns:
 * protobuf's JSON mapping with field names as in the proto, every scalar, list and map
 * present with its default, enums by name, and sub-messages only where set. Protobuf
 * writes 64-bit integers as strings; Triton's ModelConfigToJson turns the ones listed
 * below back into numbers, and so does this.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * The 64-bit fields Triton's ModelConfigToJson rewrites as numbers, by field path (map
 * values under their map's name). Triton misses initial_state dims (it looks for them on
 * sequence_batching), so they stay strings there and here.
 */
const INT64_AS_NUMBER = new Set([
  'input.dims',
  'input.reshape.shape',
  'output.dims',
  'output.reshape.shape',
  'version_policy.specific.versions',
  'dynamic_batching.max_queue_delay_microseconds',
  'dynamic_batching.priority_levels',
  'dynamic_batching.default_priority_level',
  'dynamic_batching.default_queue_policy.default_timeout_microseconds',
  'dynamic_batching.priority_queue_policy.default_timeout_microseconds',
  'sequence_batching.max_sequence_idle_microseconds',
  'sequence_batching.oldest.max_queue_delay_microseconds',
  'sequence_batching.direct.max_queue_delay_microseconds',
  'sequence_batching.state.dims',
  'ensemble_scheduling.step.model_version',
  'model_warmup.inputs.dims',
]);

function valueToJson(value: ValueDescriptor, data: unknown, path: string): JsonValue {
  if (value.kind === 'message') return messageToJson(data ?? {}, value.message, path);
  if (value.kind === 'enum') return (data as string | undefined) ?? value.values[0]!;
  switch (value.type) {
    case 'string':
      return (data as string | undefined) ?? '';
    case 'bool':
      return (data as boolean | undefined) ?? false;
    case 'int32':
    case 'uint32':
      return (data as number | undefined) ?? 0;
    case 'int64':
    case 'uint64': {
      const number = (data as number | undefined) ?? 0;
      return INT64_AS_NUMBER.has(path) ? number : integerText(value.type, number);
    }
    default: {
      // JSON has no NaN or infinities; protobuf spells them as strings.
      const number = (data as number | undefined) ?? 0;
      return Number.isFinite(number) ? number : Number.isNaN(number) ? 'NaN' : number > 0 ? 'Infinity' : '-Infinity';
    }
  }
}

function messageToJson(data: unknown, descriptor: MessageDescriptor, path: string): { [key: string]: JsonValue } {
  const record = data as Record<string, unknown>;
  const json: { [key: string]: JsonValue } = {};
  for (const field of descriptor.fields.values()) {
    const value = record[field.name];
    const fieldPath = path ? `${path}.${field.name}` : field.name;
    // Singular messages and oneof members have presence: absent means not printed.
    const hasPresence = field.oneof !== undefined || (field.value.kind === 'message' && !field.repeated && !field.map);
    if (hasPresence && value === undefined) continue;
    if (field.map) {
      const entries = Object.entries((value ?? {}) as Record<string, unknown>);
      json[field.name] = Object.fromEntries(entries.map(([key, entry]) => [key, valueToJson(field.value, entry, fieldPath)]));
    } else if (field.repeated) {
      json[field.name] = ((value ?? []) as unknown[]).map((element) => valueToJson(field.value, element, fieldPath));
    } else {
      json[field.name] = valueToJson(field.value, value, fieldPath);
    }
  }
  return json;
}

/** The JSON Triton's model-config endpoint returns for this (normalized) configuration. */
export function modelConfigToJson(config: ModelConfig): { [key: string]: JsonValue } {
  return messageToJson(config, modelConfigDescriptor, '');
}
