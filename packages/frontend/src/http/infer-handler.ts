import { Buffer } from 'node:buffer';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { InferenceError, type InferenceServer } from '@tritium/core';
import { deliverOutputs } from '../requested-outputs.js';
import { inferenceHeaderLength } from './binary-inputs.js';
import { compress, responseEncoding, type ContentEncoding } from './compression.js';
import type { Handler } from './http-context.js';
import { parseInferRequest } from './infer-request.js';
import { encodeInferResponse, type EncodedInferResponse } from './infer-response.js';
import { rawBinaryRequest } from './raw-binary-input.js';
import { requestBody } from './request-body.js';
import type { Route } from './routes.js';

/**
 * `POST /v2/models/{m}[/versions/{v}]/infer`: a JSON request with optional binary
 * inputs (or a raw binary one), answered with JSON and binary outputs, compressed as
 * Accept-Encoding asks. A client that disconnects cancels its inference.
 */
export const infer: Handler<Extract<Route, { kind: 'model' }>> = async ({ server, memory, bodyLimitBytes }, { model, version }, req, res) => {
  const body = await requestBody(req, bodyLimitBytes);
  const header = req.headers['inference-header-content-length'];
  const headerLength = inferenceHeaderLength(header, body.length);
  const request =
    header !== undefined && headerLength === 0
      ? await rawBinaryRequest(server, model, version, body)
      : parseInferRequest(body, headerLength, header !== undefined, version, memory);
  if (res.destroyed) return;
  const running = server.startInference(model, request.request);
  res.once('close', () => {
    if (!res.writableFinished) running.cancel();
  });
  const response = await running.response.catch(async (error) => {
    throw await decoupledRefusal(server, error, model, version);
  });
  const outputs = await deliverOutputs(server, response, request.outputs, memory);
  await send(res, encodeInferResponse(response, outputs, request), responseEncoding(req.headers['accept-encoding']));
};

/** Writes the JSON and the binary outputs with one writev, or the whole compressed. */
async function send(res: ServerResponse, { json, binary }: EncodedInferResponse, encoding: ContentEncoding | undefined): Promise<void> {
  const jsonLength = Buffer.byteLength(json);
  const headers: OutgoingHttpHeaders = { 'content-type': binary.length ? 'application/octet-stream' : 'application/json' };
  if (binary.length) headers['inference-header-content-length'] = jsonLength;
  if (encoding) {
    // As Triton, a body that fails to compress goes out as it is.
    const compressed = await compress(binary.length ? Buffer.concat([Buffer.from(json), ...binary]) : Buffer.from(json), encoding).catch(() => undefined);
    if (compressed) {
      headers['content-encoding'] = encoding;
      headers['content-length'] = compressed.length;
      res.writeHead(200, headers);
      res.end(compressed);
      return;
    }
  }
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

/** Core refuses a decoupled model on infer(); Triton's HTTP endpoint says so in its own words. */
async function decoupledRefusal(server: InferenceServer, error: unknown, model: string, version: number | undefined): Promise<unknown> {
  if (!(error instanceof InferenceError) || error.code !== 'UNSUPPORTED') return error;
  const config = await server.modelConfig(model, version).catch(() => undefined);
  if (!config?.model_transaction_policy?.decoupled) return error;
  return new InferenceError(
    'UNSUPPORTED',
    `HTTP end point doesn't support models with decoupled transaction policy: model '${model}' may send any number of responses; use /generate_stream`,
  );
}
