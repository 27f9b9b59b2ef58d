import { InferenceError, modelConfigFromJson, startChildRequest, type BackendRequest, type InferRequest, type ModelContext, type Tensor } from '@tritium/core/backend';
import { CustomMetrics, type CustomMetric } from './custom-metrics.js';
import type { Frame } from './frame-channel.js';
import { toFrameError } from './frame-error.js';
import { SEQUENCE_END, SEQUENCE_START } from './sequence-flags.js';
import type { StubProcess } from './stub-process.js';
import { readTensors, writeTensors, type TensorRef } from './tensor-transfer.js';

/**
 * What a stub asks of the server while it serves: BLS inference (plain and streaming),
 * loading and unloading models, log lines and custom metrics. One per stub process;
 * `abortAll()` ends its BLS calls when the stub dies.
 */
export class StubCalls {
  private readonly inflight = new Map<number, AbortController>();
  private readonly metricsById = new Map<number, CustomMetric>();

  constructor(
    private readonly stub: StubProcess,
    private readonly context: ModelContext,
    private readonly metrics: CustomMetrics,
    /** The request the stub is executing under a frame's rid, while it is. */
    private readonly requestOf: (rid: number) => BackendRequest | undefined,
  ) {}

  /** Handles a frame if it is a call of the stub's; false when it is not one. */
  handle(frame: Frame): boolean {
    switch (frame.t) {
      case 'infer':
        void this.infer(frame);
        return true;
      case 'bls_cancel':
        this.inflight.get(frame.call as number)?.abort();
        return true;
      case 'model_control':
        void this.modelControl(frame);
        return true;
      case 'log':
        this.log(String(frame.level), String(frame.message));
        return true;
      case 'metric':
        this.metric(frame);
        return true;
      default:
        return false;
    }
  }

  abortAll(): void {
    for (const controller of this.inflight.values()) controller.abort();
    this.inflight.clear();
  }

  private async infer(frame: Frame): Promise<void> {
    const call = frame.call as number;
    const controller = new AbortController();
    this.inflight.set(call, controller);
    const reply = (outputs: Record<string, Tensor> | null, error: unknown, final: boolean) => {
      if (this.stub.exited) return;
      const written = outputs ? writeTensors(this.stub.arena, [outputs]) : { lease: null, refs: [null] };
      this.stub.send({ t: 'bls_response', call, lease: written.lease, outputs: written.refs[0], error: error === null ? null : toFrameError(error), final });
    };
    try {
      const model = String(frame.model);
      const request = this.blsRequest(frame, controller.signal);
      const { server } = this.context;
      // Made with trace=request.trace(): as Triton's python backend, a child of that request in the traces.
      const parent = typeof frame.trace === 'number' ? this.requestOf(frame.trace) : undefined;
      const start = <T>(call: () => T): T => (parent ? startChildRequest(parent, call) : call());
      if (frame.decoupled) {
        for await (const response of start(() => server.inferStream(model, request))) reply(response.outputs, null, false);
        reply(null, null, true);
      } else {
        reply((await start(() => server.infer(model, request))).outputs, null, true);
      }
    } catch (error) {
      reply(null, error, true);
    } finally {
      this.inflight.delete(call);
    }
  }

  /** The server request a BLS frame describes; its inputs are copied out of the stub's region first. */
  private blsRequest(frame: Frame, signal: AbortSignal): InferRequest {
    let inputs: Record<string, Tensor>;
    try {
      inputs = readTensors(this.stub.peers, frame.inputs as TensorRef[], `BLS request from model '${this.context.name}'`);
    } finally {
      this.stub.free(frame.lease as number | null);
    }
    const flags = Number(frame.flags ?? 0);
    // A number past a double's precision comes as a decimal string beside it (PROTOCOL.md).
    const correlationId = frame.correlation_id_str ? BigInt(frame.correlation_id_str as string) : (frame.correlation_id as number | string | undefined);
    const outputs = frame.outputs as string[] | undefined;
    const version = Number(frame.version ?? -1);
    return {
      inputs,
      outputs: outputs && outputs.length > 0 ? outputs : undefined,
      modelVersion: version > 0 ? version : undefined,
      id: (frame.request_id as string) || undefined,
      priority: Number(frame.priority ?? 0),
      timeoutMicroseconds: Number(frame.timeout ?? 0),
      parameters: (frame.parameters as InferRequest['parameters']) ?? {},
      sequence:
        correlationId !== undefined && correlationId !== 0 && correlationId !== ''
          ? { id: correlationId, start: (flags & SEQUENCE_START) !== 0, end: (flags & SEQUENCE_END) !== 0 }
          : undefined,
      signal,
    };
  }

  private async modelControl(frame: Frame): Promise<void> {
    const name = String(frame.name);
    const { server } = this.context;
    let value: unknown = null;
    let error: unknown = null;
    try {
      if (frame.op === 'load') {
        if (frame.files) throw new InferenceError('UNSUPPORTED', `load_model('${name}'): loading with files is not supported`);
        // Triton's JSON form, as its repository API reads a load's config parameter; a bad one fails the load as an invalid override.
        await server.loadModel(name, frame.config ? { config: () => modelConfigFromJson(String(frame.config)) } : {});
      } else if (frame.op === 'unload') {
        await server.unloadModel(name, { unloadDependents: frame.unload_dependents === true });
      } else if (frame.op === 'ready') {
        value = await server.isModelReady(name, frame.version ? Number(frame.version) : undefined);
      } else {
        throw new InferenceError('UNSUPPORTED', `unknown model control '${String(frame.op)}'`);
      }
    } catch (failure) {
      error = toFrameError(failure);
    }
    this.stub.send({ t: 'call_result', call: frame.call, value, error });
  }

  /** A pb_utils.Logger line, through the server's log: its settings apply at once, VERBOSE being a level 1 line as in Triton. */
  private log(level: string, message: string): void {
    const { logger, name } = this.context;
    const line = `model '${name}': ${message}`;
    if (level === 'ERROR') logger.error(line);
    else if (level === 'WARNING') logger.warn(line);
    else if (level === 'VERBOSE') logger.verbose(line);
    else logger.info(line);
  }

  private metric(frame: Frame): void {
    const op = String(frame.op);
    if (op === 'family') {
      this.metrics.family(String(frame.family), String(frame.description ?? ''), frame.kind as 'counter' | 'gauge' | 'histogram');
    } else if (op === 'metric') {
      const metric = this.metrics.metric(String(frame.family), (frame.labels as Record<string, string>) ?? {}, frame.buckets as number[] | undefined);
      if (metric) this.metricsById.set(frame.id as number, metric);
    } else if (op === 'drop') {
      this.metricsById.delete(frame.id as number);
    } else {
      const metric = this.metricsById.get(frame.id as number);
      if (metric) CustomMetrics.change(metric, op, Number(frame.value));
    }
  }
}
