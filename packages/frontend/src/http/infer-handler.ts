import { Buffer } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { InferenceError, type CallerTrace, type InferenceServer, type InferResponse } from '@tritium/core';
import { isDecoupled } from '../decoupled-model.js';
import { deliverOutputs, plainOutputs } from '../requested-outputs.js';
import type { RequestRegions } from '../shared-memory/request-regions.js';
import { inferenceHeaderLength } from './binary-inputs.js';
import { compress, responseEncoding, type ContentEncoding } from './compression.js';
import type { Handler, HttpContext } from './http-context.js';
import { parseInferRequest } from './infer-request.js';
import { encodeInferResponse, type EncodedInferResponse } from './infer-response.js';
import { rawBinaryRequest } from './raw-binary-input.js';
import { requestBody } from './request-body.js';
import { sendTraced } from '../request-tracing.js';
import { answerTraced } from './http-trace.js';
import type { Route } from './routes.js';

/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: a JSON request with optional binary
 * inputs (or a raw binary one), answered with JSON and binary outputs, compressed as
 * Accept-Encoding asks. A client that disconnects cancels its inference.
 */
export const infer: Handler<ModelRoute> = async (context, route, req, res) => {
  // The shared-memory regions the request names, held from when it is read until its answer is written.
  const regions = context.memory.forRequest();
  try {
    await answerTraced(req, res, (trace) => answer(context, route, req, res, regions, trace));
  } finally {
    regions.release();
  }
};

type ModelRoute = Extract<Route, { kind: 'model' }>;

async function answer(
  { server, bodyLimitBytes, connections }: HttpContext,
  { model, version }: ModelRoute,
  req: IncomingMessage,
  res: ServerResponse,
  regions: RequestRegions,
  trace: CallerTrace | undefined,
): Promise<void> {
  const body = await requestBody(req, bodyLimitBytes, 'inference');
  trace?.stamp('HTTP_RECV_END');
  const header = req.headers['inference-header-content-length'];
  const headerLength = inferenceHeaderLength(header, body.length);
  const request =
    header !== undefined && headerLength === 0
      ? rawBinaryRequest(server, model, version, body, trace)
      : await parseInferRequest(body, headerLength, header !== undefined, version, regions, bodyLimitBytes, trace);
  const running = server.startInference(model, request.request);
  connections.cancelOnDisconnect(req, res, () => running.cancel());
  let response: InferResponse;
  try {
    response = await running.response;
  } catch (error) {
    throw decoupledRefusal(server, error, model, version);
  }
  trace?.stamp('INFER_RESPONSE_COMPLETE');
  const outputs = plainOutputs(response, request.outputs) ?? (await deliverOutputs(server, response, request.outputs, regions));
  const encoded = encodeInferResponse(response, outputs, request);
  const encoding = responseEncoding(req.headers['accept-encoding']);
  const compressed = encoding ? await compressedResponse(encoded, encoding) : undefined;
  sendTraced(trace, 'HTTP', () => (compressed ? sendCompressed(res, compressed) : send(res, encoded)));
}

/** Writes the JSON and the binary outputs with one writev. */
function send(res: ServerResponse, { json, binary }: EncodedInferResponse): void {
  const jsonLength = Buffer.byteLength(json);
  const headers = headersFor(jsonLength, binary);
  let length = jsonLength;
  for (const bytes of binary) length += bytes.length;
  headers['content-length'] = length;
  res.writeHead(200, headers);
  res.cork();
  res.write(json);
  for (const bytes of binary) res.write(bytes);
  res.uncork();
  res.end();
}

interface CompressedResponse {
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

/** The whole response compressed; undefined when it fails to compress, and then, as Triton, it goes out as it is. */
async function compressedResponse({ json, binary }: EncodedInferResponse, encoding: ContentEncoding): Promise<CompressedResponse | undefined> {
  const jsonBytes = Buffer.from(json);
  const body = await compress(binary.length ? Buffer.concat([jsonBytes, ...binary]) : jsonBytes, encoding).catch(() => undefined);
  if (!body) return undefined;
  const headers = headersFor(jsonBytes.length, binary);
  headers['content-encoding'] = encoding;
  headers['content-length'] = body.length;
  return { headers, body };
}

function sendCompressed(res: ServerResponse, { headers, body }: CompressedResponse): void {
  res.writeHead(200, headers);
  res.end(body);
}

/** With binary outputs the body is octets, and Inference-Header-Content-Length says where their JSON ends (before compression). */
function headersFor(jsonLength: number, binary: readonly Uint8Array[]): OutgoingHttpHeaders {
  if (!binary.length) return { 'content-type': 'application/json' };
  return { 'content-type': 'application/octet-stream', 'inference-header-content-length': jsonLength };
}

/** Core refuses a decoupled model on infer(); Triton's HTTP endpoint says so in its own words. */
function decoupledRefusal(server: InferenceServer, error: unknown, model: string, version: number | undefined): unknown {
  if (!(error instanceof InferenceError) || error.code !== 'UNSUPPORTED' || !isDecoupled(server, model, version)) return error;
  return new InferenceError(
    'UNSUPPORTED',
    `HTTP end point doesn't support models with decoupled transaction policy: model '${model}' may send any number of responses; use /generate_stream`,
  );
}
