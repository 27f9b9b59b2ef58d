import { performance } from 'node:perf_hooks';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { InferenceError, isObservingRequests } from '@tritium/core';
import protobuf from 'protobufjs';
import { protoDirectory } from '../proto-directory.js';
import { invalid } from '../wire-values.js';
import type { InferRequestMessage } from './infer-request.js';
import { refusedRequest, refuseOverfullRequest } from './request-entries.js';

/**
 * How messages reach the handlers: proto field names; 64-bit integers as decimal
 * strings (exact, and cheap to turn into numbers or BigInts); bytes as Buffers that
 * view the received message (raw tensor contents are never copied here); repeated
 * and map fields always present; which member of a oneof is set named by the oneof.
 * Defaults of absent scalars are not filled in, to keep decoding cheap.
 */
const LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: String, defaults: false, arrays: true, objects: true, oneofs: true };

/** Triton's inference service and gRPC's health service, as @grpc/grpc-js serves them. */
export function loadServiceDefinitions(): { inference: ServiceDefinition; health: ServiceDefinition } {
  const directory = protoDirectory();
  const definitions = loadSync(['grpc_service.proto', 'health.proto'], { ...LOADER_OPTIONS, includeDirs: [directory] });
  const inference = definitions['inference.GRPCInferenceService'] as ServiceDefinition;
  const requestDeserialize = inferRequestDeserializer(directory);
  return {
    inference: {
      ...inference,
      ModelInfer: { ...inference.ModelInfer!, requestDeserialize },
      ModelStreamInfer: { ...inference.ModelStreamInfer!, requestDeserialize },
    },
    health: definitions['grpc.health.v1.Health'] as ServiceDefinition,
  };
}

/**
 * Decodes ModelInferRequest as the loader does, once its entries are counted on the
 * wire (see request-entries.ts), except each input's `contents`: that stays encoded, a
 * view of the message (see tensor-contents.ts). Decoded as the loader
 * decodes repeated numbers, packed values would become JavaScript arrays many times
 * their size on the wire (a ~110 MiB bool_contents went past V8's largest array and
 * killed the process), before the shape could say how many values belong there. A
 * message that is not a ModelInferRequest is refused as INVALID_ARGUMENT (a stream goes
 * on): thrown from here, it would end the call, or the whole stream, with INTERNAL
 * "Error deserializing request".
 */
function inferRequestDeserializer(directory: string): (message: Buffer) => InferRequestMessage {
  const root = new protobuf.Root().loadSync(`${directory}grpc_service.proto`, { keepCase: true });
  root.resolveAll();
  const request = root.lookupType('inference.ModelInferRequest');
  const contents = root.lookupType('inference.InferTensorContents');
  // The decoders protobufjs generates call these two on the type of a message field;
  // setup() first, so that protobufjs never generates them over ours.
  contents.setup();
  contents.decode = ((reader: protobuf.Reader, length: number) => {
    const start = reader.pos;
    if (length > reader.len - start) throw RangeError('index out of range');
    reader.pos = start + length;
    return reader.buf.subarray(start, start + length);
  }) as unknown as typeof contents.decode;
  contents.toObject = ((encoded: Uint8Array) => encoded) as unknown as typeof contents.toObject;
  const decode = (message: Buffer): InferRequestMessage => {
    try {
      return refuseOverfullRequest(message) ?? (request.toObject(request.decode(message), LOADER_OPTIONS) as InferRequestMessage);
    } catch (error) {
      return refusedRequest(error instanceof InferenceError ? error : invalid(`the request is not a valid ModelInferRequest: ${(error as Error).message}`));
    }
  };
  return (message) => {
    if (!isObservingRequests()) return decode(message);
    const readAt = performance.now();
    const decoded = decode(message);
    decoded.readAt = readAt;
    return decoded;
  };
}
