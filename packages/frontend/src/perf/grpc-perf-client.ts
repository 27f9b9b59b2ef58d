import { credentials, loadPackageDefinition, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { tensorBytes } from '@tritium/core';
import { protoDirectory } from '../proto-directory.js';
import { hostAndPort } from './http-perf-client.js';
import { type SharedMemoryInputs, type SharedMemoryPlacement, type SharedMemorySpan } from './shared-memory-inputs.js';
import { modelDescription, NO_CLIENT_TIME, totalStatistics, type ClientTimes, type ModelDescription, type PerfClient, type RequestInputs, type SequenceStep } from './perf-client.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Message = any;
type Rpc = (request: Message, callback: (error: ServiceError | null, response: Message) => void) => void;

/** KServe v2 over gRPC, tensors in raw_input_contents, on one channel (HTTP/2 multiplexes the outstanding calls). */
export class GrpcPerfClient implements PerfClient<Message> {
  readonly kind = 'Triton (gRPC)';
  private readonly client: Client & Record<string, Rpc>;

  private stream: InferStream | undefined;

  /** `streaming`: requests go on one ModelStreamInfer stream, each complete at its final response. */
  constructor(url: string, streaming = false) {
    const [host, port] = hostAndPort(url, 8001);
    const definition = loadSync('grpc_service.proto', { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [protoDirectory()] });
    const service = (loadPackageDefinition(definition) as Message).inference.GRPCInferenceService;
    this.client = new service(`${host.includes(':') ? `[${host}]` : host}:${port}`, credentials.createInsecure());
    if (streaming) this.stream = new InferStream((this.client as unknown as { ModelStreamInfer(): ClientDuplexStream<Message, Message> }).ModelStreamInfer());
  }

  async describe(model: string, version?: string): Promise<ModelDescription> {
    const request = { name: model, version: version ?? '' };
    const [metadata, config] = await Promise.all([this.call('ModelMetadata', request), this.call('ModelConfig', request)]);
    return modelDescription(metadata.inputs, Number(config.config.max_batch_size), {
      sequence: config.config.sequence_batching != null,
      decoupled: config.config.model_transaction_policy?.decoupled === true,
    });
  }

  prepare(model: string, version: string | undefined, inputs: RequestInputs, placement?: SharedMemoryPlacement): Message {
    const tensors = Object.entries(inputs);
    const spanParameters = (span: SharedMemorySpan) => ({
      shared_memory_region: { string_param: span.region },
      shared_memory_offset: { int64_param: span.offset },
      shared_memory_byte_size: { int64_param: span.byteSize },
    });
    return {
      model_name: model,
      model_version: version ?? '',
      inputs: tensors.map(([name, tensor]) => ({ name, datatype: tensor.datatype, shape: tensor.shape, ...(placement ? { parameters: spanParameters(placement[name]!) } : {}) })),
      raw_input_contents: placement ? [] : tensors.map(([, tensor]) => Buffer.from(tensorBytes(tensor))),
    };
  }

  async registerSharedMemory(shm: SharedMemoryInputs): Promise<void> {
    await this.call('SystemSharedMemoryRegister', { name: shm.region, key: shm.key, offset: 0, byte_size: shm.byteSize });
  }

  async unregisterSharedMemory(shm: SharedMemoryInputs): Promise<void> {
    await this.call('SystemSharedMemoryUnregister', { name: shm.region });
  }

  async infer(request: Message, sequence?: SequenceStep): Promise<ClientTimes> {
    const parameters = sequence && { sequence_id: { int64_param: sequence.id }, sequence_start: { bool_param: sequence.start }, sequence_end: { bool_param: sequence.end } };
    const sent = parameters ? { ...request, parameters } : request;
    await (this.stream ? this.stream.infer(sent) : this.call('ModelInfer', sent));
    return NO_CLIENT_TIME;
  }

  async statistics(model: string, version?: string) {
    return totalStatistics((await this.call('ModelStatistics', { name: model, version: version ?? '' })).model_stats);
  }

  async close(): Promise<void> {
    this.stream?.end();
    this.client.close();
  }

  private call(method: string, request: Message): Promise<Message> {
    return new Promise((resolve, reject) => this.client[method]!.call(this.client, request, (error, response) => (error ? reject(new Error(error.details || error.message)) : resolve(response))));
  }
}

/**
 * One ModelStreamInfer stream shared by the requests in flight: each gets an id of its
 * own and asks for an empty final response, so that it is complete at the response
 * marked triton_final_response, however many a decoupled model sends.
 */
class InferStream {
  private lastId = 0;
  private readonly waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();

  constructor(private readonly call: ClientDuplexStream<Message, Message>) {
    call.on('data', (message: Message) => this.answer(message));
    call.on('error', (error: ServiceError) => this.failAll(new Error(error.details || error.message)));
    call.on('end', () => this.failAll(new Error('the server ended the stream')));
  }

  infer(request: Message): Promise<void> {
    const id = String(++this.lastId);
    const parameters = { ...request.parameters, triton_enable_empty_final_response: { bool_param: true } };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.call.write({ ...request, id, parameters });
    });
  }

  end(): void {
    this.waiting.clear();
    this.call.end();
  }

  private answer(message: Message): void {
    const id: string = message.infer_response?.id ?? '';
    const waiter = this.waiting.get(id);
    if (message.error_message) {
      // An error that names no request fails them all: none of them can be told apart.
      if (waiter) {
        this.waiting.delete(id);
        waiter.reject(new Error(message.error_message));
      } else this.failAll(new Error(message.error_message));
      return;
    }
    if (waiter && message.infer_response.parameters?.triton_final_response?.bool_param) {
      this.waiting.delete(id);
      waiter.resolve();
    }
  }

  private failAll(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
