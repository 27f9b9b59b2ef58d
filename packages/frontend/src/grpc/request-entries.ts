import { InferenceError } from '@tritium/core';
import type { InferRequestMessage } from './infer-request.js';
import { countVarints, WIRE_TYPE, WireReader } from './wire-reader.js';

/**
 * The most entries one ModelInferRequest may hold: inputs, outputs, parameters, shape
 * dimensions and raw_input_contents entries, all counted together. Each becomes an object
 * of its own when the message is decoded, a hundred bytes or more for as little as two
 * on the wire: 60 MB of empty inputs took a server past its heap limit. Triton has no
 * such limit; no model has use for this many.
 */
export const MAX_REQUEST_ENTRIES = 100_000;

/** Field numbers: ModelInferRequest's, and those counted of an input tensor and of an output tensor. */
const REQUEST = { model_name: 1, model_version: 2, id: 3, parameters: 4, inputs: 5, outputs: 6, raw_input_contents: 7 } as const;
const INPUT_SHAPE = 3;
const INPUT_COUNTED = [INPUT_SHAPE, 4];
const OUTPUT_COUNTED = [2];

/**
 * A ModelInferRequest that holds more than MAX_REQUEST_ENTRIES entries, counted on the
 * wire before anything is decoded, as a message that carries only its refusal and what
 * an answer names of it (model, version, id); undefined for any other. A message that
 * is not protobuf throws INVALID_ARG, as its decoding would throw.
 */
export function refuseOverfullRequest(message: Uint8Array): InferRequestMessage | undefined {
  const reader = new WireReader(message, 0, message.length, "the request's fields");
  // Where the last of each named field lies: decoded only for a refusal, never for a request that passes.
  const named: Partial<Record<keyof RequestOrigin, { start: number; end: number }>> = {};
  let entries = 0;
  while (!reader.done && entries <= MAX_REQUEST_ENTRIES) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if ((tag & 7) !== WIRE_TYPE.lengthDelimited) {
      reader.skip(tag & 7);
      continue;
    }
    const end = reader.length() + reader.pos;
    if (field === REQUEST.model_name) named.model_name = { start: reader.pos, end };
    else if (field === REQUEST.model_version) named.model_version = { start: reader.pos, end };
    else if (field === REQUEST.id) named.id = { start: reader.pos, end };
    else if (field === REQUEST.inputs) entries += 1 + tensorEntries(message, reader.pos, end, INPUT_COUNTED);
    else if (field === REQUEST.outputs) entries += 1 + tensorEntries(message, reader.pos, end, OUTPUT_COUNTED);
    else if (field === REQUEST.parameters || field === REQUEST.raw_input_contents) entries++;
    reader.pos = end;
  }
  if (entries <= MAX_REQUEST_ENTRIES) return undefined;
  const refusal = new InferenceError(
    'INVALID_ARG',
    `the request holds more than ${MAX_REQUEST_ENTRIES} inputs, outputs, parameters, shape dimensions and raw_input_contents entries together, the most one request may hold`,
  );
  const origin: RequestOrigin = {};
  for (const [key, { start, end }] of Object.entries(named) as [keyof RequestOrigin, { start: number; end: number }][]) origin[key] = text(message, start, end);
  return refusedRequest(refusal, origin);
}

/** What an answer names of a request. */
interface RequestOrigin {
  model_name?: string;
  model_version?: string;
  id?: string;
}

/** A request refused before it was decoded: it carries only the refusal, and what an answer names of it. */
export function refusedRequest(refusal: InferenceError, origin: RequestOrigin = {}): InferRequestMessage {
  return { ...origin, parameters: {}, inputs: [], outputs: [], raw_input_contents: [], refusal };
}

function text(message: Uint8Array, start: number, end: number): string {
  return Buffer.from(message.buffer, message.byteOffset + start, end - start).toString('utf8');
}

/** A tensor's entries: each `counted` field once, but a packed shape once per dimension. */
function tensorEntries(message: Uint8Array, start: number, end: number, counted: readonly number[]): number {
  const reader = new WireReader(message, start, end, "the request's fields");
  let entries = 0;
  while (!reader.done) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (!counted.includes(field)) {
      reader.skip(tag & 7);
    } else if (field === INPUT_SHAPE && (tag & 7) === WIRE_TYPE.lengthDelimited) {
      const length = reader.length();
      entries += countVarints(message, reader.pos, reader.pos + length);
      reader.pos += length;
    } else {
      reader.skip(tag & 7);
      entries++;
    }
  }
  return entries;
}
