import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { REFERENCE_PROTOS, referenceMissing } from './helpers/grpc-reference.js';

// Triton's own definitions (reference data) against Tritium's: the wire facts must agree.
const OURS = fileURLToPath(new URL('../proto/', import.meta.url));
const FILES = ['grpc_service.proto', 'model_config.proto', 'health.proto'];

function load(directory: string): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => directory + target.replace(/^.*\//, '');
  root.loadSync(FILES, { keepCase: true });
  root.resolveAll();
  return root;
}

/** Every message, enum and service in a root, by full name. */
function definitions(root: protobuf.NamespaceBase, into = new Map<string, protobuf.ReflectionObject>()) {
  for (const nested of root.nestedArray) {
    if (nested instanceof protobuf.Type || nested instanceof protobuf.Enum || nested instanceof protobuf.Service) into.set(nested.fullName, nested);
    if (nested instanceof protobuf.Namespace) definitions(nested, into);
  }
  return into;
}

/** A field as the wire sees it: number, type (resolved to its full name), cardinality, map key, oneof. */
function wireFact(field: protobuf.Field) {
  return {
    id: field.id,
    type: field.resolvedType?.fullName ?? field.type,
    repeated: field.repeated,
    map: field instanceof protobuf.MapField ? field.keyType : undefined,
    oneof: field.partOf?.name,
  };
}

const reference = referenceMissing ? new Map<string, protobuf.ReflectionObject>() : definitions(load(REFERENCE_PROTOS));
const ours = definitions(load(OURS));

describe.skipIf(referenceMissing)('the .proto definitions', () => {
  it('define exactly the messages, enums and services of Triton\'s', () => {
    expect([...ours.keys()].sort()).toEqual([...reference.keys()].sort());
  });

  it.each([...reference.values()].filter((d) => d instanceof protobuf.Type).map((d) => [d.fullName, d as protobuf.Type]))(
    'message %s has Triton\'s fields',
    (name, theirs) => {
      const mine = ours.get(name) as protobuf.Type;
      const facts = (type: protobuf.Type) => Object.fromEntries(type.fieldsArray.map((f) => [f.name, wireFact(f)]));
      expect(facts(mine)).toEqual(facts(theirs));
      expect(Object.keys(mine.oneofs ?? {}).sort()).toEqual(Object.keys(theirs.oneofs ?? {}).sort());
    },
  );

  it.each([...reference.values()].filter((d) => d instanceof protobuf.Enum).map((d) => [d.fullName, d as protobuf.Enum]))(
    'enum %s has Triton\'s values',
    (name, theirs) => {
      expect((ours.get(name) as protobuf.Enum).values).toEqual(theirs.values);
    },
  );

  it.each([...reference.values()].filter((d) => d instanceof protobuf.Service).map((d) => [d.fullName, d as protobuf.Service]))(
    'service %s has every rpc of Triton\'s, with the same types and streaming',
    (name, theirs) => {
      const signature = (service: protobuf.Service) =>
        Object.fromEntries(
          service.methodsArray.map((m) => [
            m.name,
            { request: m.resolvedRequestType!.fullName, response: m.resolvedResponseType!.fullName, requestStream: !!m.requestStream, responseStream: !!m.responseStream },
          ]),
        );
      // Ours may have more (grpc.health.v1's Watch, which Triton's health.proto leaves out).
      expect(signature(ours.get(name) as protobuf.Service)).toMatchObject(signature(theirs));
    },
  );
});
