import type { z } from 'zod';
import { ModelConfigSchema, protoNumberTypes, protoOneofs, type ProtoNumberType } from './schema.js';

/*
 * The proto field layout of ModelConfig, read off the zod schema once: which fields are
 * repeated, maps, enums or sub-messages, and which proto number type each number has.
 * The text-format parser and printer and the JSON form walk these descriptors, so the
 * zod schema stays the only place the fields are written down.
 */

export type ScalarType = 'string' | 'bool' | ProtoNumberType;

/** What one value of a field is (a repeated field has many, a map has key/value pairs). */
export type ValueDescriptor =
  | { readonly kind: 'scalar'; readonly type: ScalarType }
  | { readonly kind: 'enum'; readonly values: readonly string[] }
  | { readonly kind: 'message'; readonly message: MessageDescriptor };

export type ScalarDescriptor = Extract<ValueDescriptor, { kind: 'scalar' }>;

export interface FieldDescriptor {
  readonly name: string;
  /** For a map field, the map's value. */
  readonly value: ValueDescriptor;
  readonly repeated: boolean;
  /** For a map field: its key, and the message with `key` and `value` fields each entry is written as. */
  readonly map?: { readonly key: ScalarDescriptor; readonly entry: MessageDescriptor };
  /** The oneof group this field belongs to, named by its members. */
  readonly oneof?: readonly string[];
}

export interface MessageDescriptor {
  /** In proto declaration order. */
  readonly fields: ReadonlyMap<string, FieldDescriptor>;
}

type AnySchema = z.core.$ZodType;
type Def = { type: string; innerType?: AnySchema; element?: AnySchema; keyType?: AnySchema; valueType?: AnySchema; shape?: Record<string, AnySchema>; entries?: Record<string, string> };

const defOf = (schema: AnySchema) => schema._zod.def as unknown as Def;

/** Strips optional/default wrappers, which only say how absence is treated. */
function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (let def = defOf(current); def.innerType && ['optional', 'default', 'prefault'].includes(def.type); def = defOf(current)) {
    current = def.innerType;
  }
  return current;
}

function describeValue(schema: AnySchema, where: string): ValueDescriptor {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
    case 'boolean':
    case 'number':
    case 'custom': {
      // A registered proto type wins: uint64 map keys are digit strings.
      const type = protoNumberTypes.get(schema as z.ZodType)?.proto ?? (def.type === 'string' ? 'string' : def.type === 'boolean' ? 'bool' : undefined);
      if (!type) throw new Error(`config schema: ${where} has no proto number type`);
      return { kind: 'scalar', type };
    }
    case 'enum':
      return { kind: 'enum', values: Object.values(def.entries ?? {}) };
    case 'object':
      return { kind: 'message', message: describeMessage(schema) };
    default:
      throw new Error(`config schema: ${where} has unsupported zod type '${def.type}'`);
  }
}

const cache = new WeakMap<AnySchema, MessageDescriptor>();

/** The descriptor of a message schema (memoized: the schema objects never change). */
function describeMessage(schema: AnySchema): MessageDescriptor {
  const known = cache.get(schema);
  if (known) return known;
  const oneofs = protoOneofs.get(schema as z.ZodType)?.oneofs ?? [];
  const fields = new Map<string, FieldDescriptor>();
  for (const [name, fieldSchema] of Object.entries(defOf(schema).shape ?? {})) {
    const inner = unwrap(fieldSchema);
    const def = defOf(inner);
    const oneof = oneofs.find((group) => group.includes(name));
    if (def.type === 'array' && def.element) {
      fields.set(name, { name, value: describeValue(unwrap(def.element), name), repeated: true, oneof });
    } else if (def.type === 'record' && def.keyType && def.valueType) {
      const key = describeValue(def.keyType, `${name} key`);
      if (key.kind !== 'scalar') throw new Error(`config schema: map ${name} must have a scalar key`);
      const value = describeValue(unwrap(def.valueType), name);
      const entry: MessageDescriptor = {
        fields: new Map<string, FieldDescriptor>([
          ['key', { name: 'key', value: key, repeated: false }],
          ['value', { name: 'value', value, repeated: false }],
        ]),
      };
      fields.set(name, { name, value, repeated: false, map: { key, entry }, oneof });
    } else {
      fields.set(name, { name, value: describeValue(inner, name), repeated: false, oneof });
    }
  }
  const descriptor = { fields };
  cache.set(schema, descriptor);
  return descriptor;
}

export const modelConfigDescriptor: MessageDescriptor = describeMessage(ModelConfigSchema);

/** Formats a field path the way error messages show it: `input[0].dims[2]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    return text ? `${text}.${String(segment)}` : String(segment);
  }, '');
}
