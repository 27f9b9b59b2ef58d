import { fileURLToPath } from 'node:url';
import { Client, credentials, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

/*
 * gRPC messages as bytes, for tests that need what a message-object client cannot send:
 * an exact size, unpacked or malformed fields, or contents too large to hold as a
 * JavaScript array.
 */

const root = new protobuf.Root().loadSync(fileURLToPath(new URL('../../proto/grpc_service.proto', import.meta.url)), { keepCase: true });
export const inferRequestType = root.lookupType('inference.ModelInferRequest');
export const inferResponseType = root.lookupType('inference.ModelInferResponse');
export const streamResponseType = root.lookupType('inference.ModelStreamInferResponse');
export const inputTensorType = root.lookupType('inference.ModelInferRequest.InferInputTensor');

const SERVICE = '/inference.GRPCInferenceService/';
const asIs = (bytes: Buffer) => bytes;

/** A message object encoded. */
export function encodeMessage(type: protobuf.Type, message: object): Buffer {
  return Buffer.from(type.encode(type.fromObject(message)).finish());
}

/** A field's tag, as the wire writes it before the field's value. */
export function tag(field: number, wireType: number): Buffer {
  return Buffer.from(protobuf.Writer.create().uint32((field << 3) | wireType).finish());
}

/** A length-delimited field's tag and length. */
function fieldHeader(field: number, length: number): Buffer {
  return Buffer.from(protobuf.Writer.create().uint32((field << 3) | 2).uint32(length).finish());
}

/** A length-delimited field holding `parts`, as pieces to join once (a large part is never copied twice). */
export function lengthDelimited(field: number, parts: readonly Buffer[]): Buffer[] {
  return [fieldHeader(field, parts.reduce((sum, part) => sum + part.length, 0)), ...parts];
}

/**
 * A ModelInferRequest for `model` with one input whose InferTensorContents is `contents`
 * (encoded, e.g. from lengthDelimited(1, [packed bools])).
 */
export function requestWithContents(model: string, input: { name: string; datatype: string; shape: number[] }, contents: readonly Buffer[]): Buffer {
  const tensor = [encodeMessage(inputTensorType, input), ...lengthDelimited(5, contents)];
  return Buffer.concat([encodeMessage(inferRequestType, { model_name: model }), ...lengthDelimited(5, tensor)]);
}

/** `message` grown to exactly `size` bytes by an unknown field, which a receiver skips. */
export function padTo(message: Buffer, size: number): Buffer {
  const UNKNOWN_FIELD = 99;
  const extra = size - message.length;
  // The field's header (tag and length) takes 2 to 7 bytes, depending on the length.
  for (let payload = Math.max(extra - 7, 0); payload <= extra - 2; payload++) {
    const header = fieldHeader(UNKNOWN_FIELD, payload);
    if (header.length + payload === extra) return Buffer.concat([message, header, Buffer.alloc(payload)]);
  }
  throw new Error(`cannot pad ${message.length} bytes to ${size}`);
}

/** A client of the inference service that sends and receives bytes, with no limit on what it receives. */
export class RawGrpcClient {
  private readonly client: Client;

  constructor(port: number) {
    this.client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.max_receive_message_length': -1 });
  }

  call(method: string, request: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) =>
      this.client.makeUnaryRequest(SERVICE + method, asIs, asIs, request, (error: ServiceError | null, response?: Buffer) => (error ? reject(error) : resolve(response!))),
    );
  }

  stream(): ClientDuplexStream<Buffer, Buffer> {
    return this.client.makeBidiStreamRequest(SERVICE + 'ModelStreamInfer', asIs, asIs);
  }

  close(): void {
    this.client.close();
  }
}
