import { Buffer } from 'node:buffer';
import { request, type Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/** A whole response: status, headers and body bytes as they came (not decompressed). */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** Exactly these headers (fetch would add its own, such as Accept-Encoding). */
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: Uint8Array | string;
  /** Default: a connection of its own, closed after the response. */
  readonly agent?: Agent | false;
}

/** One request over node:http. */
export function httpRequest(url: string, options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${options.path}`, { method: options.method ?? 'POST', headers: options.headers, agent: options.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Writes `bytes` on a fresh socket and returns all it reads until the server closes it. */
export function rawExchange(url: string, bytes: string | Uint8Array, options: { halfClose?: boolean } = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(bytes);
      if (options.halfClose) socket.end();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

/** A body with binary tensor data after the JSON, and the headers that say where the JSON ends. */
export function binaryRequest(json: object, tensors: readonly Uint8Array[]): { body: Buffer; headers: OutgoingHttpHeaders } {
  const header = Buffer.from(JSON.stringify(json));
  return {
    body: Buffer.concat([header, ...tensors]),
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.length) },
  };
}

export interface InferResult {
  readonly json: InferResponseJson;
  /** Each binary output's bytes, by output name. */
  readonly binary: Record<string, Buffer>;
}

export interface OutputJson {
  name: string;
  datatype: string;
  shape: number[];
  data?: unknown[];
  parameters?: Record<string, unknown>;
}

export interface InferResponseJson {
  id?: string;
  model_name: string;
  model_version: string;
  outputs: OutputJson[];
  error?: string;
}

/** Splits an (uncompressed) inference response into its JSON and the binary outputs after it. */
export function parseInferResponse(body: Buffer, headerLength: string | string[] | null | undefined): InferResult {
  const jsonLength = headerLength === undefined || headerLength === null ? body.length : Number(headerLength);
  const json = JSON.parse(body.subarray(0, jsonLength).toString('utf8')) as InferResponseJson;
  const binary: Record<string, Buffer> = {};
  let offset = jsonLength;
  for (const output of json.outputs ?? []) {
    const size = output.parameters?.binary_data_size;
    if (typeof size !== 'number') continue;
    binary[output.name] = body.subarray(offset, offset + size);
    offset += size;
  }
  return { json, binary };
}
