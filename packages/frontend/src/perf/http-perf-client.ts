import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { jsonDataText } from '../http/json-tensor-data.js';
import type { SharedMemoryInputs, SharedMemoryPlacement } from './shared-memory-inputs.js';
import { modelDescription, totalStatistics, type ClientTimes, type ModelDescription, type PerfClient, type RequestInputs, type SequenceStep } from './perf-client.js';

interface PreparedHttp {
  readonly path: string;
  /** The body's "inputs" value, serialized once. */
  readonly inputs: string;
  readonly body: Buffer;
}

/** KServe v2 over HTTP/REST with JSON tensors, on keep-alive connections (one per outstanding request). */
export class HttpPerfClient implements PerfClient<PreparedHttp> {
  readonly kind = 'Triton (HTTP)';
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  private readonly host: string;
  private readonly port: number;

  constructor(url: string) {
    [this.host, this.port] = hostAndPort(url, 8000);
  }

  async describe(model: string, version?: string): Promise<ModelDescription> {
    const base = modelPath(model, version);
    const [metadata, config] = await Promise.all([this.getJson(base), this.getJson(`${base}/config`)]);
    return modelDescription(metadata.inputs ?? [], Number(config.max_batch_size ?? 0), { sequence: config.sequence_batching != null, decoupled: config.model_transaction_policy?.decoupled === true });
  }

  prepare(model: string, version: string | undefined, inputs: RequestInputs, placement?: SharedMemoryPlacement): PreparedHttp {
    const entries = Object.entries(inputs).map(([name, tensor]) => {
      const span = placement?.[name];
      if (span) {
        const parameters = { shared_memory_region: span.region, shared_memory_offset: span.offset, shared_memory_byte_size: span.byteSize };
        return JSON.stringify({ name, datatype: tensor.datatype, shape: tensor.shape, parameters });
      }
      // As Triton's JSON takes them: BOOL as true/false, 64-bit integers exact, BYTES as strings.
      return `${JSON.stringify({ name, datatype: tensor.datatype, shape: tensor.shape }).slice(0, -1)},"data":${jsonDataText(tensor)}}`;
    });
    const json = `[${entries.join(',')}]`;
    return { path: `${modelPath(model, version)}/infer`, inputs: json, body: Buffer.from(`{"inputs":${json}}`) };
  }

  infer(prepared: PreparedHttp, sequence?: SequenceStep): Promise<ClientTimes> {
    const { path } = prepared;
    // Triton's sequence parameters; only a sequence's requests need a body of their own.
    const body = sequence
      ? Buffer.from(`{"parameters":${JSON.stringify({ sequence_id: sequence.id, sequence_start: sequence.start, sequence_end: sequence.end })},"inputs":${prepared.inputs}}`)
      : prepared.body;
    return new Promise((resolve, reject) => {
      const start = performance.now();
      let sent = start;
      const req = httpRequest(
        { host: this.host, port: this.port, path, method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          const answered = performance.now();
          readBody(res).then((text) => {
            if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${errorText(text)}`));
            JSON.parse(text);
            resolve({ sendUs: (sent - start) * 1000, recvUs: (performance.now() - answered) * 1000 });
          }, reject);
        },
      );
      req.on('finish', () => (sent = performance.now()));
      req.on('error', reject);
      req.end(body);
    });
  }

  async registerSharedMemory(shm: SharedMemoryInputs): Promise<void> {
    await this.postJson(`/v2/systemsharedmemory/region/${encodeURIComponent(shm.region)}/register`, { key: shm.key, offset: 0, byte_size: shm.byteSize });
  }

  async unregisterSharedMemory(shm: SharedMemoryInputs): Promise<void> {
    await this.postJson(`/v2/systemsharedmemory/region/${encodeURIComponent(shm.region)}/unregister`, {});
  }

  async statistics(model: string, version?: string) {
    return totalStatistics((await this.getJson(`${modelPath(model, version)}/stats`)).model_stats ?? []);
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private getJson(path: string): Promise<any> {
    return this.requestJson(path);
  }

  private postJson(path: string, body: object): Promise<unknown> {
    return this.requestJson(path, JSON.stringify(body));
  }

  /** A GET, or a POST of `body`; the answer's JSON (an empty body reads as null), or its error. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private requestJson(path: string, body?: string): Promise<any> {
    return new Promise((resolve, reject) => {
      const method = body === undefined ? 'GET' : 'POST';
      const req = httpRequest({ host: this.host, port: this.port, path, method, agent: this.agent, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
        readBody(res).then((text) => (res.statusCode === 200 ? resolve(text ? JSON.parse(text) : null) : reject(new Error(errorText(text)))), reject);
      });
      req.on('error', (error) => reject(new Error(`cannot reach ${this.host}:${this.port}: ${error.message}`)));
      req.end(body);
    });
  }
}

/** host:port, or a URL with a scheme; the port defaults to the protocol's. */
export function hostAndPort(url: string, defaultPort: number): [string, number] {
  const { hostname, port } = new URL(url.includes('://') ? url : `http://${url}`);
  return [hostname.replace(/^\[|\]$/g, ''), port ? Number(port) : defaultPort];
}

function modelPath(model: string, version?: string): string {
  return `/v2/models/${encodeURIComponent(model)}${version === undefined ? '' : `/versions/${encodeURIComponent(version)}`}`;
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    res.on('error', reject);
  });
}

/** A Triton error body's message, or the body. */
function errorText(text: string): string {
  try {
    return (JSON.parse(text) as { error?: string }).error ?? text;
  } catch {
    return text;
  }
}
